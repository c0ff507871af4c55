package tools

// Kafka-format files built byte by byte from the format spec (Kafka's
// protocol guide, "Record Batch", and the storage layer's file layouts),
// independently of the log package's encoders, so dump-log is checked
// against the format rather than against the code it shares.

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

var be = binary.BigEndian

type specHeader struct {
	Key   string
	Value []byte // nil: null
}

type specRecord struct {
	TimestampDelta int64
	OffsetDelta    int64
	Key, Value     []byte // nil: null
	Headers        []specHeader
}

// varBytes appends a zigzag varint length (-1 for null) and the bytes.
func varBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	return append(binary.AppendVarint(dst, int64(len(b))), b...)
}

// encodeRecords is a v2 records section: each record is
// length varint, attributes int8, timestampDelta varlong, offsetDelta
// varint, key, value, header count varint, headers.
func encodeRecords(recs ...specRecord) []byte {
	var out []byte
	for _, r := range recs {
		body := []byte{0}
		body = binary.AppendVarint(body, r.TimestampDelta)
		body = binary.AppendVarint(body, r.OffsetDelta)
		body = varBytes(body, r.Key)
		body = varBytes(body, r.Value)
		body = binary.AppendVarint(body, int64(len(r.Headers)))
		for _, h := range r.Headers {
			body = varBytes(body, []byte(h.Key))
			body = varBytes(body, h.Value)
		}
		out = binary.AppendVarint(out, int64(len(body)))
		out = append(out, body...)
	}
	return out
}

// Batch attribute bits.
const (
	specGzip          = 0x01
	specLogAppendTime = 0x08
	specTransactional = 0x10
	specControl       = 0x20
	specDeleteHorizon = 0x40
)

type specBatch struct {
	BaseOffset      int64
	LeaderEpoch     int32
	Attributes      uint16
	LastOffsetDelta int32
	BaseTimestamp   int64
	MaxTimestamp    int64
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	Count           int32
	Records         []byte // the records section, compressed if Attributes say
}

// encode lays out a RecordBatch v2: baseOffset int64, batchLength int32,
// partitionLeaderEpoch int32, magic int8 (2), crc uint32 (CRC-32C of
// everything after it), attributes int16, lastOffsetDelta int32,
// baseTimestamp int64, maxTimestamp int64, producerId int64, producerEpoch
// int16, baseSequence int32, records count int32, records.
func (b specBatch) encode() []byte {
	var body []byte
	body = be.AppendUint16(body, b.Attributes)
	body = be.AppendUint32(body, uint32(b.LastOffsetDelta))
	body = be.AppendUint64(body, uint64(b.BaseTimestamp))
	body = be.AppendUint64(body, uint64(b.MaxTimestamp))
	body = be.AppendUint64(body, uint64(b.ProducerID))
	body = be.AppendUint16(body, uint16(b.ProducerEpoch))
	body = be.AppendUint32(body, uint32(b.BaseSequence))
	body = be.AppendUint32(body, uint32(b.Count))
	body = append(body, b.Records...)
	var out []byte
	out = be.AppendUint64(out, uint64(b.BaseOffset))
	out = be.AppendUint32(out, uint32(4+1+4+len(body)))
	out = be.AppendUint32(out, uint32(b.LeaderEpoch))
	out = append(out, 2)
	out = be.AppendUint32(out, crc32c(body))
	return append(out, body...)
}

// controlRecord is a transaction marker: key version int16 0, type int16
// (0 abort, 1 commit); value version int16 0, coordinator epoch int32.
func controlRecord(commit bool, coordinatorEpoch int32) []byte {
	var key, value []byte
	key = be.AppendUint16(key, 0)
	if commit {
		key = be.AppendUint16(key, 1)
	} else {
		key = be.AppendUint16(key, 0)
	}
	value = be.AppendUint16(value, 0)
	value = be.AppendUint32(value, uint32(coordinatorEpoch))
	return encodeRecords(specRecord{Key: key, Value: value})
}

func gzipped(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// T0 is the hand-built segment's first timestamp.
const T0 = 1700000000000

// specSegment is a segment starting at offset 100 with every kind of batch:
// plain with keys, nulls and headers; gzip with log append time; a
// transaction of producer 42 and its abort marker; one of producer 43 and
// its commit marker; and the empty batch compaction leaves of producer 44,
// with a delete horizon. It returns the batches' bytes, each in order.
func specSegment(t testing.TB) [][]byte {
	return [][]byte{
		specBatch{BaseOffset: 100, LeaderEpoch: 1, LastOffsetDelta: 2, BaseTimestamp: T0, MaxTimestamp: T0 + 2,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Count: 3,
			Records: encodeRecords(
				specRecord{TimestampDelta: 0, OffsetDelta: 0, Key: []byte("k1"), Value: []byte("v1"), Headers: []specHeader{{"h", []byte("1")}}},
				specRecord{TimestampDelta: 1, OffsetDelta: 1, Value: []byte("no key\tand a tab")},
				specRecord{TimestampDelta: 2, OffsetDelta: 2, Key: []byte("k3"), Headers: []specHeader{{"a", []byte("x")}, {"b", nil}}},
			)}.encode(),
		specBatch{BaseOffset: 103, LeaderEpoch: 1, Attributes: specGzip | specLogAppendTime, LastOffsetDelta: 1,
			BaseTimestamp: T0 + 500, MaxTimestamp: T0 + 1000, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Count: 2,
			Records: gzipped(t, encodeRecords(
				specRecord{OffsetDelta: 0, Key: []byte("g1"), Value: []byte("gzipped one")},
				specRecord{TimestampDelta: 5, OffsetDelta: 1, Key: []byte("g2"), Value: []byte("gzipped two")},
			))}.encode(),
		specBatch{BaseOffset: 105, LeaderEpoch: 2, Attributes: specTransactional, LastOffsetDelta: 1,
			BaseTimestamp: T0 + 2000, MaxTimestamp: T0 + 2000, ProducerID: 42, ProducerEpoch: 3, BaseSequence: 0, Count: 2,
			Records: encodeRecords(
				specRecord{OffsetDelta: 0, Key: []byte("t1"), Value: []byte("aborted one")},
				specRecord{OffsetDelta: 1, Key: []byte("t2"), Value: []byte("aborted two")},
			)}.encode(),
		specBatch{BaseOffset: 107, LeaderEpoch: 2, Attributes: specTransactional | specControl,
			BaseTimestamp: T0 + 2100, MaxTimestamp: T0 + 2100, ProducerID: 42, ProducerEpoch: 3, BaseSequence: -1, Count: 1,
			Records: controlRecord(false, 5)}.encode(),
		specBatch{BaseOffset: 108, LeaderEpoch: 2, Attributes: specTransactional,
			BaseTimestamp: T0 + 2200, MaxTimestamp: T0 + 2200, ProducerID: 43, ProducerEpoch: 0, BaseSequence: 7, Count: 1,
			Records: encodeRecords(specRecord{Key: []byte("c1"), Value: []byte("committed")})}.encode(),
		specBatch{BaseOffset: 109, LeaderEpoch: 2, Attributes: specTransactional | specControl,
			BaseTimestamp: T0 + 2300, MaxTimestamp: T0 + 2300, ProducerID: 43, ProducerEpoch: 0, BaseSequence: -1, Count: 1,
			Records: controlRecord(true, 5)}.encode(),
		specBatch{BaseOffset: 110, LeaderEpoch: 2, Attributes: specDeleteHorizon, LastOffsetDelta: 2,
			BaseTimestamp: T0 + 9000, MaxTimestamp: T0 + 2400, ProducerID: 44, ProducerEpoch: 1, BaseSequence: 10, Count: 0}.encode(),
	}
}

// positions returns where each batch starts in their concatenation.
func positions(batches [][]byte) []uint32 {
	var pos []uint32
	var at uint32
	for _, b := range batches {
		pos = append(pos, at)
		at += uint32(len(b))
	}
	return pos
}

// offsetIndex is .index entries: relative offset uint32, position uint32.
func offsetIndex(entries ...[2]uint32) []byte {
	var out []byte
	for _, e := range entries {
		out = be.AppendUint32(out, e[0])
		out = be.AppendUint32(out, e[1])
	}
	return out
}

type specTime struct {
	Timestamp int64
	Relative  uint32
}

// timeIndex is .timeindex entries: timestamp int64, relative offset uint32.
func timeIndex(entries ...specTime) []byte {
	var out []byte
	for _, e := range entries {
		out = be.AppendUint64(out, uint64(e.Timestamp))
		out = be.AppendUint32(out, e.Relative)
	}
	return out
}

// txnIndex is .txnindex entries: version int16 0, producerId int64,
// firstOffset int64, lastOffset int64, lastStableOffset int64.
func txnIndex(entries ...[4]int64) []byte {
	var out []byte
	for _, e := range entries {
		out = be.AppendUint16(out, 0)
		for _, v := range e {
			out = be.AppendUint64(out, uint64(v))
		}
	}
	return out
}

type specProducer struct {
	ProducerID       int64
	Epoch            int16
	LastSequence     int32
	LastOffset       int64
	OffsetDelta      int32
	Timestamp        int64
	CoordinatorEpoch int32
	TxnFirstOffset   int64
}

// snapshot is a producer state snapshot, version 1: version int16, crc
// uint32 (CRC-32C of what follows it), entry count int32, then per producer
// id int64, epoch int16, last sequence int32, last offset int64, offset
// delta int32, timestamp int64, coordinator epoch int32, current
// transaction first offset int64.
func snapshot(entries ...specProducer) []byte {
	var body []byte
	body = be.AppendUint32(body, uint32(len(entries)))
	for _, e := range entries {
		body = be.AppendUint64(body, uint64(e.ProducerID))
		body = be.AppendUint16(body, uint16(e.Epoch))
		body = be.AppendUint32(body, uint32(e.LastSequence))
		body = be.AppendUint64(body, uint64(e.LastOffset))
		body = be.AppendUint32(body, uint32(e.OffsetDelta))
		body = be.AppendUint64(body, uint64(e.Timestamp))
		body = be.AppendUint32(body, uint32(e.CoordinatorEpoch))
		body = be.AppendUint64(body, uint64(e.TxnFirstOffset))
	}
	out := be.AppendUint16(nil, 1)
	out = be.AppendUint32(out, crc32c(body))
	return append(out, body...)
}

// specFiles is the hand-built segment at base offset 100 with its index
// files and the producer snapshot at its end offset, 113.
type specFiles struct {
	dir                                     string
	log, index, timeIndex, txnIndex, snap   string
	logBytes, indexBytes, timeBytes, txnIdx []byte
	snapBytes                               []byte
}

func writeSpecFiles(t testing.TB, dir string) specFiles {
	batches := specSegment(t)
	pos := positions(batches)
	name := func(off int64, suffix string) string { return filepath.Join(dir, fmt.Sprintf("%020d%s", off, suffix)) }
	f := specFiles{
		dir: dir, log: name(100, ".log"), index: name(100, ".index"), timeIndex: name(100, ".timeindex"),
		txnIndex: name(100, ".txnindex"), snap: name(113, ".snapshot"),
		logBytes: bytes.Join(batches, nil),
		// Kafka indexes a batch by its last offset.
		indexBytes: offsetIndex([2]uint32{4, pos[1]}, [2]uint32{7, pos[3]}, [2]uint32{12, pos[6]}),
		timeBytes:  timeIndex(specTime{T0 + 1000, 4}, specTime{T0 + 2000, 6}, specTime{T0 + 2400, 12}),
		txnIdx:     txnIndex([4]int64{42, 105, 107, 105}),
		snapBytes: snapshot(
			specProducer{ProducerID: 43, Epoch: 0, LastSequence: 7, LastOffset: 108, OffsetDelta: 0, Timestamp: T0 + 2200, CoordinatorEpoch: 5, TxnFirstOffset: -1},
			specProducer{ProducerID: 44, Epoch: 1, LastSequence: 12, LastOffset: 112, OffsetDelta: 2, Timestamp: T0 + 2400, CoordinatorEpoch: -1, TxnFirstOffset: -1},
			specProducer{ProducerID: 45, Epoch: 0, LastSequence: 1, LastOffset: 99, OffsetDelta: 3, Timestamp: T0 - 1, CoordinatorEpoch: 2, TxnFirstOffset: 96},
		),
	}
	for path, data := range map[string][]byte{f.log: f.logBytes, f.index: f.indexBytes, f.timeIndex: f.timeBytes,
		f.txnIndex: f.txnIdx, f.snap: f.snapBytes} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
