package msgset

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/valyala/bytebufferpool"

	"kzero/record"
)

// Converter converts message sets to batches and back, reusing its buffers
// from one call to the next. A Converter belongs to one goroutine.
type Converter struct {
	builder  record.Builder
	reader   record.Iter
	inflated bytebufferpool.ByteBuffer // a wrapper's inner message set
	inner    []byte                    // an inner message set being built
	records  []pending                 // the messages of the set being up-converted
}

// pending is one message on its way into a batch.
type pending struct {
	timestamp  int64
	key, value []byte
}

// Upconvert appends to dst one uncompressed or compressed RecordBatch v2
// holding the messages of set, a message set of magic 0 or 1 from a
// Produce v0-v2 request. Offsets, leader epoch and producer fields are left
// for the log to assign (base offset 0, no producer id); the batch keeps
// the wrapper's codec and its records the messages' keys, values and
// timestamps (-1 for magic 0). limit bounds what a wrapper may decompress
// to. It checks what Kafka 3.9's LogValidator checks of old formats: each
// message's CRC (CORRUPT_MESSAGE), one magic throughout, at most one
// compressed wrapper and nothing beside it, a codec magic 0/1 knows (zstd
// is INVALID_RECORD), inner messages of the wrapper's magic without codec,
// and LogAppendTime set only with a timestamp (INVALID_TIMESTAMP). What
// the log checks of every batch (keys on compacted topics, timestamp
// bounds, max.message.bytes) it checks on the result. An entry cut short
// at the end of set is ignored, as Kafka ignores it.
func (c *Converter) Upconvert(dst, set []byte, limit int) ([]byte, error) {
	c.records = c.records[:0]
	var (
		codec   int8
		magic   int8
		entries int
	)
	for {
		m, rest, partial, err := readEntry(set)
		if err != nil {
			return dst, err
		}
		if partial {
			break
		}
		set = rest
		if entries > 0 && m.magic != magic {
			return dst, fmt.Errorf("message magic %d after magic %d: %w", m.magic, magic, kerr.InvalidRecord)
		}
		magic = m.magic
		entries++
		if m.codec() != 0 {
			codec = m.codec()
		}
		if codec != 0 && entries > 1 {
			return dst, fmt.Errorf("a compressed message set holds more than one message: %w", kerr.InvalidRecord)
		}
		if m.codec() == 0 {
			if err := c.add(&m, m.logAppendTime(), m.timestamp); err != nil {
				return dst, err
			}
			continue
		}
		if err := c.unwrap(&m, limit); err != nil {
			return dst, err
		}
	}
	if entries == 0 {
		return dst, fmt.Errorf("no whole message in the message set: %w", kerr.CorruptMessage)
	}
	base := c.records[0].timestamp
	c.builder.Reset(record.BatchHeader{
		PartitionLeaderEpoch: -1,
		Codec:                record.Codec(codec),
		BaseTimestamp:        base,
		LastOffsetDelta:      -1,
		ProducerID:           record.NoProducerID,
		ProducerEpoch:        record.NoProducerEpoch,
		BaseSequence:         record.NoSequence,
	})
	for i := range c.records {
		r := &c.records[i]
		c.builder.Add(&record.Record{TimestampDelta: r.timestamp - base, OffsetDelta: int32(i), Key: r.key, Value: r.value})
	}
	out, err := c.builder.AppendTo(dst)
	clear(c.records) // drop the references into set and the inflate buffer
	return out, err
}

// add takes one message for the batch. lat is its (or its wrapper's)
// timestamp type, ts its timestamp as the batch will carry it.
func (c *Converter) add(m *message, lat bool, ts int64) error {
	if lat && ts == -1 {
		// Kafka's validateTimestamp: a producer may not ask for
		// LogAppendTime on a record it gave no timestamp.
		return fmt.Errorf("message at offset %d asks for LogAppendTime: %w", m.offset, kerr.InvalidTimestamp)
	}
	c.records = append(c.records, pending{timestamp: ts, key: m.key, value: m.value})
	return nil
}

// unwrap decompresses wrapper w and takes its inner messages.
func (c *Converter) unwrap(w *message, limit int) error {
	codec := record.Codec(w.codec())
	switch codec {
	case record.CodecGzip, record.CodecSnappy, record.CodecLZ4:
	default:
		return fmt.Errorf("codec %d in a v%d message: %w", w.codec(), w.magic, kerr.InvalidRecord)
	}
	if w.value == nil {
		return fmt.Errorf("compressed message at offset %d has a null value: %w", w.offset, kerr.InvalidRecord)
	}
	if w.magic == 0 && codec == record.CodecLZ4 {
		// KAFKA-3160: magic 0's LZ4 header checksum is ignored. Set the
		// right one for the decoder, and put the byte back after.
		if old, ok := lz4FixChecksum(w.value); ok {
			defer func() { w.value[record.LZ4HeaderChecksumAt(w.value)] = old }()
		}
	}
	c.inflated.Reset()
	if err := record.Decompress(codec, &c.inflated, w.value, limit); err != nil {
		return fmt.Errorf("message at offset %d: %w", w.offset, err)
	}
	inner := c.inflated.B
	first := len(c.records)
	var last int64
	for len(inner) > 0 {
		m, rest, partial, err := readEntry(inner)
		if err != nil {
			return fmt.Errorf("inside the compressed message at offset %d: %w", w.offset, err)
		}
		if partial {
			return fmt.Errorf("compressed message at offset %d ends inside a message: %w", w.offset, kerr.CorruptMessage)
		}
		inner = rest
		switch {
		case m.magic != w.magic:
			return fmt.Errorf("inner message magic %d in a v%d wrapper: %w", m.magic, w.magic, kerr.InvalidRecord)
		case m.codec() != 0:
			return fmt.Errorf("inner message with codec %d: %w", m.codec(), kerr.InvalidRecord)
		}
		ts := m.timestamp
		if w.logAppendTime() {
			ts = w.timestamp
		}
		if err := c.add(&m, w.logAppendTime(), ts); err != nil {
			return err
		}
		last = m.offset
	}
	if len(c.records) == first {
		return fmt.Errorf("compressed message at offset %d holds no messages: %w", w.offset, kerr.InvalidRecord)
	}
	if w.magic == 1 && w.offset != 0 && w.offset < last {
		// A wrapper's offset is its last inner offset; some librdkafka
		// versions write 0, which Kafka accepts.
		return fmt.Errorf("wrapper offset %d below its last inner offset %d: %w", w.offset, last, kerr.InvalidRecord)
	}
	return nil
}

// ErrZstd is what a zstd batch gives on the way down: message formats v0
// and v1 have no zstd. It wraps kerr.UnsupportedCompressionType, the
// error Kafka answers an old fetch with.
var ErrZstd = fmt.Errorf("zstd batches cannot be down-converted to message format v0/v1: %w", kerr.UnsupportedCompressionType)

// decompressLimit bounds what a stored batch may inflate to on the way
// down: what the log accepted stays readable.
const decompressLimit = 256 << 20

// Downconvert appends batch b converted to message format magic (0 or 1),
// as Kafka 3.9's RecordsUtil.downConvert does: nothing for a control
// batch; one message per record for an uncompressed batch, leaving out the
// records below firstOffset (the fetch offset: a v0/v1 client asked for no
// earlier message); one wrapper of the batch's codec holding all its
// records for a compressed one (the client skips the early ones). Headers
// are dropped. A zstd batch gives ErrZstd.
func (c *Converter) Downconvert(dst []byte, b record.Batch, magic int8, firstOffset int64) ([]byte, error) {
	if b.IsControl() {
		return dst, nil
	}
	codec := b.Compression()
	if codec == record.CodecZstd {
		return dst, ErrZstd
	}
	var attrs int8
	lat := b.LogAppendTime()
	if magic > 0 && lat {
		attrs = attrLogAppendTime
	}
	if err := c.reader.Reset(b, decompressLimit); err != nil {
		return dst, err
	}
	defer c.reader.Release()
	if codec == record.CodecNone {
		for c.reader.Next() {
			r, off := c.reader.Record(), c.reader.Offset()
			if off >= firstOffset {
				dst = appendEntry(dst, off, magic, attrs, c.reader.Timestamp(), r.Key, r.Value)
			}
		}
		return dst, c.reader.Err()
	}
	c.inner = c.inner[:0]
	var (
		base, last int64
		n          int
		maxTs      int64 = -1
	)
	for c.reader.Next() {
		r, off, ts := c.reader.Record(), c.reader.Offset(), c.reader.Timestamp()
		if n == 0 {
			base = off
		}
		inner := off
		if magic > 0 {
			inner = off - base
		}
		c.inner = appendEntry(c.inner, inner, magic, attrs, ts, r.Key, r.Value)
		maxTs = max(maxTs, ts)
		last = off
		n++
	}
	if err := c.reader.Err(); err != nil || n == 0 {
		return dst, err
	}
	if lat {
		maxTs = b.MaxTimestamp()
	}
	// The wrapper's value is compressed in place at the end of dst, after
	// room for the wrapper's header, which is written once its size is
	// known.
	start := len(dst)
	head := entryOverhead + overheadV0 - 4 // up to the value's length
	if magic > 0 {
		head += 8
	}
	dst = append(dst, make([]byte, head+4)...)
	dst, err := record.Compress(codec, dst, c.inner)
	if err != nil {
		return dst[:start], fmt.Errorf("down-converting a %s batch: %w", codec, err)
	}
	value := dst[start+head+4:]
	if magic == 0 && codec == record.CodecLZ4 {
		lz4BreakChecksum(value)
	}
	// The header goes over the room left for it (a null value at first),
	// then takes the value's length, the entry's size and the CRC.
	appendEntry(dst[start:start], last, magic, int8(codec)|attrs, maxTs, nil, nil)
	e := dst[start:]
	binary.BigEndian.PutUint32(e[head:], uint32(len(value)))
	binary.BigEndian.PutUint32(e[8:], uint32(len(e)-entryOverhead))
	binary.BigEndian.PutUint32(e[entryOverhead:], crc32.ChecksumIEEE(e[entryOverhead+4:]))
	return dst, nil
}
