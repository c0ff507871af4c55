package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kerr"
)

// RecordBatch v2, as on the wire and on disk (all integers big-endian):
//
//	offset  size  field
//	     0     8  baseOffset
//	     8     4  batchLength            (bytes after this field)
//	    12     4  partitionLeaderEpoch
//	    16     1  magic                  (2)
//	    17     4  crc                    (CRC-32C of bytes 21..end)
//	    21     2  attributes
//	    23     4  lastOffsetDelta
//	    27     8  baseTimestamp
//	    35     8  maxTimestamp
//	    43     8  producerId
//	    51     2  producerEpoch
//	    53     4  baseSequence
//	    57     4  recordsCount
//	    61     …  records (compressed as a whole when attributes say so)
//
// baseOffset, batchLength, partitionLeaderEpoch and magic lie outside the
// CRC, so a broker rewrites baseOffset and the leader epoch in place without
// recomputing it.
const (
	offBaseOffset      = 0
	offBatchLength     = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offBaseTimestamp   = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offRecordsCount    = 57

	// BatchHeaderSize is the size of a RecordBatch v2 header; records follow it.
	BatchHeaderSize = 61
	// LogOverhead is the size of baseOffset plus batchLength: the prefix
	// every batch (of any magic) starts with.
	LogOverhead = 12
	// MagicV2 is the only batch format kzero accepts.
	MagicV2 = 2
)

// Attribute bits of a v2 batch.
const (
	attrCompressionMask = 0x07
	attrLogAppendTime   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20
	attrDeleteHorizon   = 0x40
)

// NoProducerID, NoProducerEpoch and NoSequence mark a batch written without
// idempotence.
const (
	NoProducerID    = -1
	NoProducerEpoch = -1
	NoSequence      = -1
)

// Codec is a batch's compression type, attribute bits 0-2.
type Codec int8

const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Batch is a view of one whole RecordBatch v2 in a byte slice. It never
// copies: setters write into the slice they view. A Batch returned by
// ParseBatch has a length that matches its batchLength field; its other
// fields are unchecked until Validate.
type Batch []byte

// ParseBatch splits the first batch off buf by its batchLength field and
// returns it with the bytes after it. It checks only the framing: at least a
// v2 header, a length that fits in buf. Errors wrap kerr.CorruptMessage;
// a buf that ends mid-batch gives ErrShortBatch.
func ParseBatch(buf []byte) (Batch, []byte, error) {
	if len(buf) < LogOverhead {
		return nil, buf, ErrShortBatch
	}
	n := int64(int32(binary.BigEndian.Uint32(buf[offBatchLength:])))
	size := LogOverhead + n
	if n < BatchHeaderSize-LogOverhead {
		// Message sets v0 and v1 have shorter headers: name them for
		// what they are rather than as corrupt v2 batches.
		if len(buf) > offMagic && n > offMagic-LogOverhead && (buf[offMagic] == 0 || buf[offMagic] == 1) {
			return nil, buf, fmt.Errorf("message format v%d is not supported: %w", buf[offMagic], kerr.UnsupportedVersion)
		}
		return nil, buf, fmt.Errorf("batch length %d below the v2 header size: %w", n, kerr.CorruptMessage)
	}
	if size > int64(len(buf)) {
		return nil, buf, ErrShortBatch
	}
	return Batch(buf[:size]), buf[size:], nil
}

// ErrShortBatch means the bytes end before the batch does: a torn write on
// disk, or a record set cut by a size limit on the wire.
var ErrShortBatch = fmt.Errorf("batch extends past the end of the data: %w", kerr.CorruptMessage)

func (b Batch) BaseOffset() int64 { return int64(binary.BigEndian.Uint64(b[offBaseOffset:])) }

// Size is the batch's total size in bytes, header included.
func (b Batch) Size() int { return len(b) }

// Length is the batchLength field: the bytes after it.
func (b Batch) Length() int32 { return int32(binary.BigEndian.Uint32(b[offBatchLength:])) }

func (b Batch) PartitionLeaderEpoch() int32 {
	return int32(binary.BigEndian.Uint32(b[offLeaderEpoch:]))
}
func (b Batch) Magic() int8        { return int8(b[offMagic]) }
func (b Batch) CRC() uint32        { return binary.BigEndian.Uint32(b[offCRC:]) }
func (b Batch) Attributes() int16  { return int16(binary.BigEndian.Uint16(b[offAttributes:])) }
func (b Batch) Compression() Codec { return Codec(b.Attributes() & attrCompressionMask) }

// LogAppendTime reports whether the batch's timestamps are the broker's
// append time (timestamp type 1) rather than the producer's create time.
func (b Batch) LogAppendTime() bool    { return b.Attributes()&attrLogAppendTime != 0 }
func (b Batch) IsTransactional() bool  { return b.Attributes()&attrTransactional != 0 }
func (b Batch) IsControl() bool        { return b.Attributes()&attrControl != 0 }
func (b Batch) HasDeleteHorizon() bool { return b.Attributes()&attrDeleteHorizon != 0 }

func (b Batch) LastOffsetDelta() int32 {
	return int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:]))
}

// LastOffset is the offset of the batch's last record (which compaction may
// have removed: the batch keeps its offset range).
func (b Batch) LastOffset() int64 { return b.BaseOffset() + int64(b.LastOffsetDelta()) }

// NextOffset is the offset after the batch.
func (b Batch) NextOffset() int64 { return b.LastOffset() + 1 }

func (b Batch) BaseTimestamp() int64 { return int64(binary.BigEndian.Uint64(b[offBaseTimestamp:])) }
func (b Batch) MaxTimestamp() int64  { return int64(binary.BigEndian.Uint64(b[offMaxTimestamp:])) }
func (b Batch) ProducerID() int64    { return int64(binary.BigEndian.Uint64(b[offProducerID:])) }
func (b Batch) ProducerEpoch() int16 { return int16(binary.BigEndian.Uint16(b[offProducerEpoch:])) }
func (b Batch) BaseSequence() int32  { return int32(binary.BigEndian.Uint32(b[offBaseSequence:])) }

// LastSequence is the sequence of the batch's last record; sequences wrap
// from MaxInt32 to 0.
func (b Batch) LastSequence() int32 {
	s := b.BaseSequence()
	if s == NoSequence {
		return NoSequence
	}
	return int32((int64(s) + int64(b.LastOffsetDelta())) % (1 << 31))
}

func (b Batch) NumRecords() int32 { return int32(binary.BigEndian.Uint32(b[offRecordsCount:])) }

// RecordsBytes is the records section: compressed as one block when
// Compression is not CodecNone.
func (b Batch) RecordsBytes() []byte { return b[BatchHeaderSize:] }

// SetBaseOffset rewrites baseOffset in place; the CRC does not cover it.
func (b Batch) SetBaseOffset(o int64) { binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(o)) }

// SetPartitionLeaderEpoch rewrites the leader epoch in place; the CRC does
// not cover it.
func (b Batch) SetPartitionLeaderEpoch(e int32) {
	binary.BigEndian.PutUint32(b[offLeaderEpoch:], uint32(e))
}

// SetLogAppendTime sets timestamp type 1 and maxTimestamp to ts, and
// recomputes the CRC, which covers both.
func (b Batch) SetLogAppendTime(ts int64) {
	a := uint16(b.Attributes()) | attrLogAppendTime
	binary.BigEndian.PutUint16(b[offAttributes:], a)
	b.SetMaxTimestamp(ts)
}

// SetMaxTimestamp rewrites maxTimestamp and recomputes the CRC, which
// covers it.
func (b Batch) SetMaxTimestamp(ts int64) {
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(ts))
	b.UpdateCRC()
}

// ComputeCRC is the CRC-32C of the bytes the batch's crc field covers.
func (b Batch) ComputeCRC() uint32 { return crc32.Checksum(b[offAttributes:], castagnoli) }

// UpdateCRC writes ComputeCRC into the crc field.
func (b Batch) UpdateCRC() { binary.BigEndian.PutUint32(b[offCRC:], b.ComputeCRC()) }

// Validate checks what a broker checks before it appends a batch it did not
// decode: magic 2, a consistent header, and the CRC. It does not decode
// records. The error wraps the Kafka error a broker returns for it.
func (b Batch) Validate() error {
	if len(b) < BatchHeaderSize {
		return fmt.Errorf("batch of %d bytes is shorter than a v2 header: %w", len(b), kerr.CorruptMessage)
	}
	if int64(b.Length())+LogOverhead != int64(len(b)) {
		return fmt.Errorf("batch length field %d does not match %d bytes: %w", b.Length(), len(b), kerr.CorruptMessage)
	}
	if m := b.Magic(); m != MagicV2 {
		if m == 0 || m == 1 {
			return fmt.Errorf("message format v%d is not supported: %w", m, kerr.UnsupportedVersion)
		}
		return fmt.Errorf("unknown magic %d: %w", m, kerr.CorruptMessage)
	}
	if got, want := b.ComputeCRC(), b.CRC(); got != want {
		return fmt.Errorf("batch crc %08x, computed %08x: %w", want, got, kerr.CorruptMessage)
	}
	if b.LastOffsetDelta() < 0 {
		return fmt.Errorf("negative last offset delta %d: %w", b.LastOffsetDelta(), kerr.CorruptMessage)
	}
	n := b.NumRecords()
	if n < 0 {
		return fmt.Errorf("negative record count %d: %w", n, kerr.CorruptMessage)
	}
	if int64(n) > int64(b.LastOffsetDelta())+1 {
		return fmt.Errorf("record count %d exceeds the offset range of %d: %w", n, int64(b.LastOffsetDelta())+1, kerr.CorruptMessage)
	}
	if n == 0 && !b.emptyAllowed() {
		return fmt.Errorf("batch has no records: %w", kerr.InvalidRecord)
	}
	if b.Compression() > CodecZstd {
		return fmt.Errorf("unknown compression codec %d: %w", b.Compression(), kerr.CorruptMessage)
	}
	// Every record takes at least a few bytes, so an uncompressed batch
	// cannot claim more records than it has bytes.
	if b.Compression() == CodecNone && int64(n) > int64(len(b)-BatchHeaderSize) {
		return fmt.Errorf("record count %d exceeds batch size: %w", n, kerr.CorruptMessage)
	}
	return nil
}

// ValidateProduce is Validate plus the rules Kafka applies to the header
// of a batch from a client: at least one record, a last offset delta of
// count-1, no control batches, a producer id when the batch is
// transactional and a sequence with a producer id. The records inside are
// checked by ValidateRecords.
func (b Batch) ValidateProduce() error {
	if err := b.Validate(); err != nil {
		return err
	}
	n := b.NumRecords()
	if n == 0 {
		return fmt.Errorf("batch has no records: %w", kerr.InvalidRecord)
	}
	if int64(b.LastOffsetDelta())+1 != int64(n) {
		return fmt.Errorf("last offset delta %d does not match %d records: %w", b.LastOffsetDelta(), n, kerr.InvalidRecord)
	}
	if b.IsControl() {
		return fmt.Errorf("clients may not write control batches: %w", kerr.InvalidRecord)
	}
	if b.IsTransactional() && b.ProducerID() == NoProducerID {
		return fmt.Errorf("transactional batch without a producer id: %w", kerr.InvalidRecord)
	}
	if b.ProducerID() != NoProducerID && b.BaseSequence() < 0 {
		return fmt.Errorf("base sequence %d for producer id %d: %w", b.BaseSequence(), b.ProducerID(), kerr.InvalidRecord)
	}
	return nil
}

// emptyAllowed: compaction may leave a batch with no records to keep a
// producer's sequence state (DefaultRecordBatch, "On Compaction").
func (b Batch) emptyAllowed() bool { return b.ProducerID() != NoProducerID }
