package bench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawFetchVersion is the Fetch version the raw consumer speaks: flexible,
// with topic names (v13 names topics by id), sessionless.
const rawFetchVersion = 12

// rawCRCSample: the raw consumer checks the CRC and the record framing of
// one batch in this many, so that checking costs it little.
const rawCRCSample = 16

// rawFetcher reads partitions from earliest with sessionless Fetch
// requests on one connection, one at a time, into the connection's
// reused buffer. Its request is encoded once; each fetch patches the
// correlation id and the offsets.
type rawFetcher struct {
	conn        *rawConn
	frame       []byte
	offsetAt    []int // where each partition's fetch offset is in frame
	offsets     []int64
	partitions  []int32
	index       map[int32]int // partition → its index in the slices above
	corr        int32
	recordBytes int   // every value's size: what a batch's byte count is taken as
	sampleEvery int   // check the CRC of one batch in this many
	stamps      bool  // read every value's send time
	batches     int64 // seen, for the sample
	// onResponse, when set, is called as each response has been read.
	onResponse func()
	// onBatch, when set (tests), sees every data batch received.
	onBatch func(partition int32, b []byte)
}

// fetched is what one fetch response held.
type fetched struct {
	records, bytes int64
}

// fetchOffsetMark tags the fetch offsets in the encoded request, so that
// they can be found and patched.
const fetchOffsetMark = int64(0x7a5a_f0f0_0000_0000)

func newRawFetcher(conn *rawConn, topic string, partitions []int32, maxBytes, partitionBytes int32, recordBytes int) (*rawFetcher, error) {
	req := kmsg.NewPtrFetchRequest()
	req.Version = rawFetchVersion
	req.MaxWaitMillis = 500
	req.MinBytes = 1
	req.MaxBytes = maxBytes
	t := kmsg.NewFetchRequestTopic()
	t.Topic = topic
	for i, p := range partitions {
		tp := kmsg.NewFetchRequestTopicPartition()
		tp.Partition = p
		tp.FetchOffset = fetchOffsetMark + int64(i)
		tp.PartitionMaxBytes = partitionBytes
		t.Partitions = append(t.Partitions, tp)
	}
	req.Topics = append(req.Topics, t)
	f := &rawFetcher{conn: conn, partitions: partitions, offsets: make([]int64, len(partitions)),
		index: map[int32]int{}, recordBytes: recordBytes, sampleEvery: rawCRCSample}
	f.frame = kmsg.NewRequestFormatter(kmsg.FormatterClientID(rawClientID)).AppendRequest(nil, req, 0)
	var mark [8]byte
	for i, p := range partitions {
		binary.BigEndian.PutUint64(mark[:], uint64(fetchOffsetMark+int64(i)))
		at := bytes.Index(f.frame, mark[:])
		if at < 0 {
			return nil, errors.New("fetch request: offset not found in the encoded request")
		}
		f.offsetAt = append(f.offsetAt, at)
		f.index[p] = i
	}
	return f, nil
}

// fetch sends one Fetch request for every partition from where the last
// left off, reads the response, and returns what it held; stamp, when not
// nil, gets every record's send time.
func (f *rawFetcher) fetch(stamp func(sent int64)) (fetched, error) {
	f.corr++
	binary.BigEndian.PutUint32(f.frame[8:], uint32(f.corr))
	for i, at := range f.offsetAt {
		binary.BigEndian.PutUint64(f.frame[at:], uint64(f.offsets[i]))
	}
	if _, err := f.conn.c.Write(f.frame); err != nil {
		return fetched{}, fmt.Errorf("fetch: %w", err)
	}
	b, err := f.conn.readFrame()
	if err != nil {
		return fetched{}, fmt.Errorf("fetch response: %w", err)
	}
	if f.onResponse != nil {
		f.onResponse()
	}
	return f.parse(b, stamp)
}

// parse reads a Fetch v12 response: for each partition its error and its
// record batches, which advance that partition's offset.
func (f *rawFetcher) parse(b []byte, stamp func(sent int64)) (fetched, error) {
	var got fetched
	d := wireDec{b: b}
	if corr := d.int32(); d.err == nil && corr != f.corr {
		return got, fmt.Errorf("fetch response: correlation id %d, want %d", corr, f.corr)
	}
	d.tags()
	d.int32() // throttle
	if code := d.int16(); d.err == nil && code != 0 {
		return got, fmt.Errorf("fetch: %w", kerr.ErrorForCode(code))
	}
	d.int32() // session
	for topics := d.compactLen(); topics > 0 && d.err == nil; topics-- {
		d.compactBytes() // name
		for parts := d.compactLen(); parts > 0 && d.err == nil; parts-- {
			part := d.int32()
			code := d.int16()
			d.int64() // high watermark
			d.int64() // last stable offset
			d.int64() // log start offset
			for n := d.compactLen(); n > 0 && d.err == nil; n-- {
				d.int64()
				d.int64()
				d.tags()
			}
			d.int32() // preferred read replica
			recs := d.compactBytes()
			d.tags()
			if d.err != nil {
				break
			}
			if code != 0 {
				return got, fmt.Errorf("fetch partition %d: %w", part, kerr.ErrorForCode(code))
			}
			i, ok := f.index[part]
			if !ok {
				return got, fmt.Errorf("fetch response: partition %d was not asked for", part)
			}
			if err := f.batchesOf(i, recs, &got, stamp); err != nil {
				return got, err
			}
		}
		d.tags()
	}
	d.tags()
	if d.err != nil {
		return got, fmt.Errorf("fetch response: %w", d.err)
	}
	return got, nil
}

// batchesOf takes the record batches of partition i: the last may be cut
// short by the fetch's size limit, and is then fetched again next time.
func (f *rawFetcher) batchesOf(i int, recs []byte, got *fetched, stamp func(sent int64)) error {
	for len(recs) >= rbLength+4 {
		length := int32(binary.BigEndian.Uint32(recs[rbLength:]))
		if length < rbHeaderSize-rbLength-4 {
			return fmt.Errorf("partition %d: batch length %d", f.partitions[i], length)
		}
		size := int(length) + rbLength + 4
		if size > len(recs) {
			break
		}
		b := recs[:size]
		recs = recs[size:]
		if b[rbMagic] != 2 {
			return fmt.Errorf("partition %d: batch of magic %d", f.partitions[i], b[rbMagic])
		}
		base := int64(binary.BigEndian.Uint64(b[rbBaseOffset:]))
		next := base + int64(int32(binary.BigEndian.Uint32(b[rbLastOffsetDelta:]))) + 1
		if next <= f.offsets[i] {
			continue // before the offset asked for
		}
		f.offsets[i] = next
		if int16(binary.BigEndian.Uint16(b[rbAttributes:]))&rbAttrControl != 0 {
			continue
		}
		count := int64(int32(binary.BigEndian.Uint32(b[rbRecordCount:])))
		f.batches++
		if f.sampleEvery > 0 && f.batches%int64(f.sampleEvery) == 0 || stamp != nil {
			if err := f.check(i, b, count, stamp); err != nil {
				return err
			}
		}
		if f.onBatch != nil {
			f.onBatch(f.partitions[i], b)
		}
		got.records += count
		got.bytes += count * int64(f.recordBytes)
	}
	return nil
}

// check verifies a batch's CRC and its records' framing (their count, and
// that every value is recordBytes long), and passes on each value's send
// time to stamp when it is not nil.
func (f *rawFetcher) check(i int, b []byte, count int64, stamp func(sent int64)) error {
	if want, got := binary.BigEndian.Uint32(b[rbCRC:]), crc32.Checksum(b[rbAttributes:], castagnoli); want != got {
		return fmt.Errorf("partition %d, offset %d: CRC %08x, computed %08x", f.partitions[i],
			int64(binary.BigEndian.Uint64(b[rbBaseOffset:])), want, got)
	}
	it := recordIter{b: b[rbHeaderSize:]}
	var n int64
	for {
		v, ok := it.next()
		if !ok {
			break
		}
		n++
		if len(v) != f.recordBytes {
			return fmt.Errorf("partition %d: a value of %d bytes, want %d", f.partitions[i], len(v), f.recordBytes)
		}
		if stamp != nil && len(v) >= stampBytes {
			stamp(int64(binary.BigEndian.Uint64(v)))
		}
	}
	if it.err != nil || n != count {
		return fmt.Errorf("partition %d, offset %d: %d records framed of %d (%v)", f.partitions[i],
			int64(binary.BigEndian.Uint64(b[rbBaseOffset:])), n, count, it.err)
	}
	return nil
}

// recordIter walks the records of an uncompressed batch and returns each
// value; it allocates nothing.
type recordIter struct {
	b   []byte
	err error
}

func (it *recordIter) next() ([]byte, bool) {
	if len(it.b) == 0 || it.err != nil {
		return nil, false
	}
	d := wireDec{b: it.b}
	length := d.varint()
	if d.err != nil || length < 0 || length > int64(len(d.b)) {
		it.err = errors.New("record length")
		return nil, false
	}
	rec := wireDec{b: d.b[:length]}
	it.b = d.b[length:]
	rec.take(1)  // attributes
	rec.varint() // timestamp delta
	rec.varint() // offset delta
	if k := rec.varint(); k > 0 {
		rec.take(int(min(k, int64(len(rec.b))+1)))
	}
	vl := rec.varint()
	var v []byte
	if vl >= 0 {
		v = rec.take(int(min(vl, int64(len(rec.b))+1)))
	}
	for h := rec.varint(); h > 0 && rec.err == nil; h-- {
		rec.take(int(min(max(rec.varint(), 0), int64(len(rec.b))+1)))
		if hv := rec.varint(); hv > 0 {
			rec.take(int(min(hv, int64(len(rec.b))+1)))
		}
	}
	if rec.err != nil || len(rec.b) != 0 {
		it.err = errors.New("record framing")
		return nil, false
	}
	return v, true
}
