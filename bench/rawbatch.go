package bench

import (
	"encoding/binary"
	"hash/crc32"
)

// RecordBatch v2 layout, as KIP-98 defines it: the byte offsets of the
// fields the raw load generator writes or reads.
const (
	rbBaseOffset      = 0
	rbLength          = 8 // bytes after this field
	rbLeaderEpoch     = 12
	rbMagic           = 16
	rbCRC             = 17 // CRC-32C of everything from attributes on
	rbAttributes      = 21
	rbLastOffsetDelta = 23
	rbBaseTimestamp   = 27
	rbMaxTimestamp    = 35
	rbProducerID      = 43
	rbProducerEpoch   = 51
	rbBaseSequence    = 53
	rbRecordCount     = 57
	rbHeaderSize      = 61

	rbAttrControl = 1 << 5
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// rawBatch is one uncompressed RecordBatch v2, encoded once, whose
// sequence, send-time stamps and CRC are rewritten in place before each
// send. It lives inside a request frame (see rawProduceRequest), so a
// send is those patches and a write.
type rawBatch struct {
	b       []byte // the batch, header included
	values  []int  // offsets into b of each record's value
	records int32
}

// appendRawBatch appends a batch of count records to dst, each value
// taken by value(i), and returns the extended slice and where each value
// starts in the batch. The producer id and epoch are written as given
// (-1, -1 for a producer that is not idempotent); the base sequence is 0
// (-1 without a producer id) and the CRC valid.
func appendRawBatch(dst []byte, count int, value func(i int) []byte, producerID int64, epoch int16, timestamp int64) ([]byte, []int) {
	start := len(dst)
	dst = append(dst, make([]byte, rbHeaderSize)...)
	h := dst[start:]
	binary.BigEndian.PutUint32(h[rbLeaderEpoch:], ^uint32(0)) // -1: the broker sets it
	h[rbMagic] = 2
	binary.BigEndian.PutUint32(h[rbLastOffsetDelta:], uint32(count-1))
	binary.BigEndian.PutUint64(h[rbBaseTimestamp:], uint64(timestamp))
	binary.BigEndian.PutUint64(h[rbMaxTimestamp:], uint64(timestamp))
	binary.BigEndian.PutUint64(h[rbProducerID:], uint64(producerID))
	binary.BigEndian.PutUint16(h[rbProducerEpoch:], uint16(epoch))
	seq := int32(0)
	if producerID < 0 {
		seq = -1
	}
	binary.BigEndian.PutUint32(h[rbBaseSequence:], uint32(seq))
	binary.BigEndian.PutUint32(h[rbRecordCount:], uint32(count))

	values := make([]int, count)
	var body [3 * binary.MaxVarintLen32]byte
	for i := range count {
		v := value(i)
		// attributes, timestamp delta 0, offset delta i, null key, value
		// length; then the value and a header count of 0.
		rec := append(body[:0], 0)
		rec = binary.AppendVarint(rec, 0)
		rec = binary.AppendVarint(rec, int64(i))
		rec = binary.AppendVarint(rec, -1)
		rec = binary.AppendVarint(rec, int64(len(v)))
		dst = binary.AppendVarint(dst, int64(len(rec)+len(v)+1))
		dst = append(dst, rec...)
		values[i] = len(dst) - start
		dst = append(dst, v...)
		dst = append(dst, 0)
	}
	b := dst[start:]
	binary.BigEndian.PutUint32(b[rbLength:], uint32(len(b)-rbLength-4))
	sealBatch(b)
	return dst, values
}

// sealBatch writes b's CRC-32C, over everything from the attributes on.
func sealBatch(b []byte) {
	binary.BigEndian.PutUint32(b[rbCRC:], crc32.Checksum(b[rbAttributes:], castagnoli))
}

// setSequence rewrites the base sequence; the CRC needs sealing after.
func (r *rawBatch) setSequence(seq int32) {
	binary.BigEndian.PutUint32(r.b[rbBaseSequence:], uint32(seq))
}

// stamp writes the send time, Unix nanoseconds, into the first bytes of
// every value, as the kgo workloads do; the CRC needs sealing after.
func (r *rawBatch) stamp(now int64) {
	for _, off := range r.values {
		binary.BigEndian.PutUint64(r.b[off:], uint64(now))
	}
}
