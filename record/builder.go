package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// BatchHeader is what a Builder writes in a batch's header besides what it
// computes (length, count, CRC). For a batch without idempotence set
// ProducerID, ProducerEpoch and BaseSequence to NoProducerID, NoProducerEpoch
// and NoSequence: their zero values are a real producer.
type BatchHeader struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Codec                Codec
	LogAppendTime        bool
	Transactional        bool
	Control              bool
	DeleteHorizon        bool // BaseTimestamp is the compaction delete horizon
	BaseTimestamp        int64
	// MaxTimestamp 0 means the largest record timestamp (BaseTimestamp
	// when there are none). With LogAppendTime it is the append time.
	MaxTimestamp int64
	// LastOffsetDelta -1 means the last record's offset delta. A
	// compacted batch keeps its original one, past its last kept record.
	LastOffsetDelta int32
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
}

// Builder writes v2 batches: the coordinators' records, msgset's
// up-conversion, log's cleaner (which rewrites a batch keeping some of its
// records under the original header), recompression and tests. A Builder
// is reusable: Reset, Add each record, AppendTo.
type Builder struct {
	h         BatchHeader
	records   []byte // encoded, uncompressed
	count     int32
	lastDelta int32 // the last record's offset delta; -1 before the first
	maxTS     int64 // largest record timestamp
	err       error // sticky: the first bad Add
}

// Reset starts a new batch with header h, keeping the Builder's buffer.
func (b *Builder) Reset(h BatchHeader) {
	b.h = h
	b.records = b.records[:0]
	b.count, b.lastDelta, b.maxTS, b.err = 0, -1, math.MinInt64, nil
}

// Add appends a copy of r. Offset deltas must increase from one record to
// the next; a record that breaks that makes AppendTo fail.
func (b *Builder) Add(r *Record) {
	if b.err != nil {
		return
	}
	if r.OffsetDelta < 0 || r.OffsetDelta <= b.lastDelta {
		b.err = fmt.Errorf("record offset delta %d after %d: offset deltas must increase from 0", r.OffsetDelta, b.lastDelta)
		return
	}
	b.records = appendRecord(b.records, r)
	b.count++
	b.lastDelta = r.OffsetDelta
	b.maxTS = max(b.maxTS, b.h.BaseTimestamp+r.TimestampDelta)
}

// Len is the number of records added since Reset.
func (b *Builder) Len() int { return int(b.count) }

// AppendTo appends the batch to dst, compressing its records with the
// header's codec, and returns the extended slice. On error dst is returned
// unchanged in length.
func (b *Builder) AppendTo(dst []byte) ([]byte, error) {
	if b.err != nil {
		return dst, b.err
	}
	h := &b.h
	if h.Codec < CodecNone || h.Codec > CodecZstd {
		return dst, fmt.Errorf("building a batch: %w: %d", errUnknownCodec, h.Codec)
	}
	last := h.LastOffsetDelta
	switch {
	case last == -1 && b.count == 0:
		return dst, errors.New("building an empty batch: LastOffsetDelta must be given")
	case last == -1:
		last = b.lastDelta
	case last < b.lastDelta:
		return dst, fmt.Errorf("building a batch: last offset delta %d below a record's %d", last, b.lastDelta)
	}
	maxTS := h.MaxTimestamp
	if maxTS == 0 {
		maxTS = h.BaseTimestamp
		if b.count > 0 {
			maxTS = b.maxTS
		}
	}
	start := len(dst)
	dst = append(dst, make([]byte, BatchHeaderSize)...)
	if b.count == 0 {
		// As Kafka writes an empty batch: no records section, which
		// an empty compressed stream would not be.
		hc := *h
		hc.Codec = CodecNone
		return finishBatch(dst, start, &hc, 0, last, maxTS)
	}
	dst, err := Compress(h.Codec, dst, b.records)
	if err != nil {
		return dst[:start], fmt.Errorf("building a batch: %w", err)
	}
	return finishBatch(dst, start, h, b.count, last, maxTS)
}

// AppendBatch appends to dst a batch with header h around records, a
// records section of count records already encoded (and compressed as
// h.Codec says). It reads nothing inside records: where a Builder encodes
// records it is given, AppendBatch frames bytes as they are, malformed
// ones included, as a test or a fuzz target needs them. LastOffsetDelta
// -1 means count-1; MaxTimestamp 0 means BaseTimestamp.
func AppendBatch(dst []byte, h *BatchHeader, count int32, records []byte) ([]byte, error) {
	last, maxTS := h.LastOffsetDelta, h.MaxTimestamp
	if last == -1 {
		last = count - 1
	}
	if maxTS == 0 {
		maxTS = h.BaseTimestamp
	}
	start := len(dst)
	dst = append(dst, make([]byte, BatchHeaderSize)...)
	dst = append(dst, records...)
	return finishBatch(dst, start, h, count, last, maxTS)
}

// finishBatch fills in the header of the batch at dst[start:], whose
// records section is already written, and computes its CRC.
func finishBatch(dst []byte, start int, h *BatchHeader, count, lastDelta int32, maxTS int64) ([]byte, error) {
	length := len(dst) - start - LogOverhead
	if length > math.MaxInt32 {
		return dst[:start], fmt.Errorf("building a batch: %d bytes do not fit a batch", length)
	}
	attrs := uint16(h.Codec) & attrCompressionMask
	for _, f := range [...]struct {
		set  bool
		mask uint16
	}{
		{h.LogAppendTime, attrLogAppendTime},
		{h.Transactional, attrTransactional},
		{h.Control, attrControl},
		{h.DeleteHorizon, attrDeleteHorizon},
	} {
		if f.set {
			attrs |= f.mask
		}
	}
	b := dst[start:]
	be := binary.BigEndian
	be.PutUint64(b[offBaseOffset:], uint64(h.BaseOffset))
	be.PutUint32(b[offBatchLength:], uint32(length))
	be.PutUint32(b[offLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	b[offMagic] = MagicV2
	be.PutUint16(b[offAttributes:], attrs)
	be.PutUint32(b[offLastOffsetDelta:], uint32(lastDelta))
	be.PutUint64(b[offBaseTimestamp:], uint64(h.BaseTimestamp))
	be.PutUint64(b[offMaxTimestamp:], uint64(maxTS))
	be.PutUint64(b[offProducerID:], uint64(h.ProducerID))
	be.PutUint16(b[offProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(b[offBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(b[offRecordsCount:], uint32(count))
	Batch(b).UpdateCRC()
	return dst, nil
}

// Header is the header of b as a Builder takes it: what the cleaner passes
// to rewrite b with fewer records and the same offsets, producer state,
// attributes and max timestamp.
func (b Batch) Header() BatchHeader {
	a := b.Attributes()
	return BatchHeader{
		BaseOffset:           b.BaseOffset(),
		PartitionLeaderEpoch: b.PartitionLeaderEpoch(),
		Codec:                b.Compression(),
		LogAppendTime:        a&attrLogAppendTime != 0,
		Transactional:        a&attrTransactional != 0,
		Control:              a&attrControl != 0,
		DeleteHorizon:        a&attrDeleteHorizon != 0,
		BaseTimestamp:        b.BaseTimestamp(),
		MaxTimestamp:         b.MaxTimestamp(),
		LastOffsetDelta:      b.LastOffsetDelta(),
		ProducerID:           b.ProducerID(),
		ProducerEpoch:        b.ProducerEpoch(),
		BaseSequence:         b.BaseSequence(),
	}
}
