package kzerotest

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// EncodeBatch encodes an uncompressed RecordBatch v2 holding one record per
// value, all stamped ts, with offsets from 0 and a valid CRC32C.
func EncodeBatch(ts int64, values ...[]byte) []byte {
	tss := make([]int64, len(values))
	for i := range tss {
		tss[i] = ts
	}
	return EncodeTimedBatch(tss, values)
}

// EncodeTimedBatch is EncodeBatch with a timestamp per record.
func EncodeTimedBatch(tss []int64, values [][]byte) []byte {
	var recs []byte
	maxTs := tss[0]
	for i, v := range values {
		recs = appendRecord(recs, kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: tss[i] - tss[0], Value: v})
		maxTs = max(maxTs, tss[i])
	}
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		LastOffsetDelta:      int32(len(values) - 1),
		FirstTimestamp:       tss[0],
		MaxTimestamp:         maxTs,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(len(values)),
		Records:              recs,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// appendRecord appends r with its Length set to its encoded body size.
func appendRecord(dst []byte, r kmsg.Record) []byte {
	// Record.AppendTo writes Length as given; encode once with a
	// placeholder to learn the body size, then again with the real one.
	r.Length = 0
	body := len(r.AppendTo(nil)) - 1 // a zero length is one varint byte
	r.Length = int32(body)
	return r.AppendTo(dst)
}
