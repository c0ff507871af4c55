package record

import (
	"errors"
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/valyala/bytebufferpool"
)

// A client batch is checked record by record before it is appended, as
// Kafka's LogValidator does, so no consumer ever meets a batch it cannot
// read: a CRC only proves the bytes are the ones the producer sent, not
// that they make sense. The walk reads every record's framing in place
// (length, offset delta equal to the record's index, key, value, header
// count, headers, nothing left over), the batch's count against what it
// holds, each record's timestamp against message.timestamp.*.max.ms and,
// for a compacted log, its key. A compressed batch is decompressed first:
// that is the cost of accepting compressed batches without trusting them.
//
// Error codes, following Kafka where it has one:
//   - framing of the records and a count that does not match: INVALID_RECORD
//     (Kafka's DefaultRecord and DefaultRecordBatch throw
//     InvalidRecordException, answered as INVALID_RECORD);
//   - a compressed section that does not decompress: INVALID_RECORD too.
//     Kafka answers UNKNOWN_SERVER_ERROR (a KafkaException wrapping the
//     codec's IOException); the CRC proves the producer built these bytes,
//     so the retriable CORRUPT_MESSAGE would only have the client send
//     them again;
//   - decompressed records beyond InflateLimit: MESSAGE_TOO_LARGE;
//   - keyless records in a compacted log: INVALID_RECORD, and timestamps
//     out of range: INVALID_TIMESTAMP, both listing the records at fault
//     (Errors), as Kafka does.

// inflateRatio and inflateCeiling bound what a compressed batch may
// decompress to (InflateLimit): inflateRatio times max.message.bytes, at
// most inflateCeiling. max.message.bytes bounds the compressed batch
// (Kafka's definition); clients bound one record's uncompressed size by their own
// setting of the same size (the Java client's max.request.size, franz-go's
// ProducerBatchMaxBytes, librdkafka's message.max.bytes), so 64 times it
// leaves room for a batch of many records that compress well, and for
// records larger than max.message.bytes that fit only compressed. A
// compression bomb costs at most this much inflating, 64 MiB with the
// default max.message.bytes, far from the 1 GiB it may claim. Where the
// format bounds its output before decoding it is refused without
// inflating: snappy declares its length, and zstd's frame and block
// headers give a true upper bound for any frame (zstdBound). gzip and lz4
// have no such bound and inflate up to the limit, into a buffer that never
// grows past it. Kafka itself sets no bound; batches of real data compress
// far less than 64:1.
const (
	inflateRatio   = 64
	inflateCeiling = 256 << 20
)

// InflateLimit is the most the records of a compressed client batch may
// decompress to under max.message.bytes maxMessageBytes.
func InflateLimit(maxMessageBytes int) int {
	return int(min(int64(inflateRatio)*int64(max(maxMessageBytes, 1<<10)), inflateCeiling))
}

// DecompressLimit bounds what one batch may inflate to when it is read
// back (the cleaner, offset lookups by timestamp): larger than any
// InflateLimit, since what was accepted must stay readable.
const DecompressLimit = inflateCeiling

// Policy is what a partition's config asks of the records of a client
// batch: the part of validation that is not the format's.
type Policy struct {
	MaxMessageBytes      int   // max.message.bytes: sets InflateLimit
	TimestampBeforeMaxMs int64 // message.timestamp.before.max.ms; < 0: unbounded
	TimestampAfterMaxMs  int64 // message.timestamp.after.max.ms; < 0: unbounded
	LogAppendTime        bool  // the broker stamps the batch: record timestamps go unchecked
	Compact              bool  // a compacted log: every record needs a key
}

// ValidateRecords checks every record of b, a client batch whose header
// ValidateProduce accepted, under p at broker time now (ms). It returns
// the largest record timestamp (-1 when none has one), which Kafka writes
// as the batch's max timestamp. In steady state it allocates nothing; a
// rejected batch allocates its error.
func (b Batch) ValidateRecords(p Policy, now int64) (int64, error) {
	w := recordWalk{
		base:    b.BaseTimestamp(),
		now:     now,
		before:  p.TimestampBeforeMaxMs,
		after:   p.TimestampAfterMaxMs,
		checkTs: !p.LogAppendTime,
		compact: p.Compact,
	}
	c := b.Compression()
	data := b.RecordsBytes()
	if c == CodecNone {
		return w.walk(data, b.NumRecords())
	}
	limit := InflateLimit(p.MaxMessageBytes)
	if c == CodecZstd {
		// A true upper bound from the block headers refuses a zstd
		// bomb before decoding it; real data reaches its bound but
		// for its last block.
		if bound, ok := zstdBound(data); ok && bound > uint64(limit) {
			return -1, fmt.Errorf("zstd records may decompress to %d bytes, more than %d: %w", bound, limit, kerr.MessageTooLarge)
		}
	}
	buf := getInflateBuffer()
	defer putInflateBuffer(buf)
	if err := decompress(c, buf, data, limit); err != nil {
		if errors.Is(err, ErrDecompressedTooLarge) {
			return -1, fmt.Errorf("%s records decompress to more than %d bytes: %w", c, limit, kerr.MessageTooLarge)
		}
		return -1, fmt.Errorf("%s records do not decompress: %v: %w", c, err, kerr.InvalidRecord)
	}
	return w.walk(buf.B, b.NumRecords())
}

// inflateBuffers keeps the buffers compressed batches decompress into.
// Unlike a sync.Pool it survives garbage collections: with 1 MiB batches a
// pool emptied by each collection makes every validation allocate a
// buffer, which brings the next collection sooner. Buffers above
// inflateKeep are dropped rather than held for a rare large batch.
var inflateBuffers = make(chan *bytebufferpool.ByteBuffer, 8)

const inflateKeep = 8 << 20

func getInflateBuffer() *bytebufferpool.ByteBuffer {
	select {
	case b := <-inflateBuffers:
		return b
	default:
		return new(bytebufferpool.ByteBuffer)
	}
}

func putInflateBuffer(b *bytebufferpool.ByteBuffer) {
	if cap(b.B) > inflateKeep {
		return
	}
	b.Reset()
	select {
	case inflateBuffers <- b:
	default:
	}
}

// recordWalk is the state of one batch's record walk.
type recordWalk struct {
	base          int64 // the batch's base timestamp
	now           int64
	before, after int64 // message.timestamp.{before,after}.max.ms; < 0: unbounded
	checkTs       bool  // CreateTime: record timestamps are the producer's
	compact       bool  // keys are required

	bad   *Errors // records at fault, allocated with the first
	badTs bool    // one of them for its timestamp
}

// walk checks data, the uncompressed records section of a batch declaring
// n records, and returns the largest record timestamp. It reads fields by
// position (varintAt, bytesAt) rather than by re-slicing: this loop is the
// whole cost of validating an uncompressed batch.
func (w *recordWalk) walk(data []byte, n int32) (int64, error) {
	maxTs := int64(-1)
	for i := int32(0); i < n; i++ {
		if len(data) == 0 {
			return -1, fmt.Errorf("the batch declares %d records but holds %d: %w", n, i, kerr.InvalidRecord)
		}
		length, p := varintAt(data, 0)
		if p < 0 || length < 1 || length > int64(len(data)-p) {
			return -1, badRecord(i, "length")
		}
		body := data[p+1 : p+int(length)] // after the attributes byte, unused in v2
		data = data[p+int(length):]
		tsDelta, p := varlongAt(body, 0)
		if p < 0 {
			return -1, badRecord(i, "timestamp delta")
		}
		var delta, keyLen, headers int64
		if delta, p = varintAt(body, p); p < 0 {
			return -1, badRecord(i, "offset delta")
		}
		if delta != int64(i) {
			return -1, fmt.Errorf("record %d has offset delta %d: %w", i, delta, kerr.InvalidRecord)
		}
		if keyLen, p = bytesAt(body, p); p < 0 {
			return -1, badRecord(i, "key")
		}
		if _, p = bytesAt(body, p); p < 0 {
			return -1, badRecord(i, "value")
		}
		// Each header takes at least two bytes: a count beyond that is a lie.
		if headers, p = varintAt(body, p); p < 0 || headers < 0 || headers > int64(len(body)-p)/2 {
			return -1, badRecord(i, "header count")
		}
		for range headers {
			var hk int64
			if hk, p = bytesAt(body, p); p < 0 || hk < 0 {
				return -1, badRecord(i, "header key")
			}
			if _, p = bytesAt(body, p); p < 0 {
				return -1, badRecord(i, "header value")
			}
		}
		if p != len(body) {
			return -1, fmt.Errorf("record %d: %d bytes left inside its length: %w", i, len(body)-p, kerr.InvalidRecord)
		}
		ts := w.base + tsDelta
		maxTs = max(maxTs, ts)
		switch {
		case w.compact && keyLen < 0:
			w.reject(i, false, "compacted topic cannot accept a record without a key")
		case w.checkTs && ts != -1 && (w.before >= 0 && w.now-ts > w.before || w.after >= 0 && ts-w.now > w.after):
			w.rejectTimestamp(i, ts)
		}
	}
	if len(data) != 0 {
		return -1, fmt.Errorf("%d bytes follow the batch's last record: %w", len(data), kerr.InvalidRecord)
	}
	if w.bad != nil {
		if w.badTs {
			w.bad.Err = kerr.InvalidTimestamp
		}
		return -1, w.bad
	}
	return maxTs, nil
}

// rejectTimestamp records why record i's timestamp ts is out of range.
func (w *recordWalk) rejectTimestamp(i int32, ts int64) {
	if w.before >= 0 && w.now-ts > w.before {
		w.reject(i, true, fmt.Sprintf("timestamp %d is more than %d ms before broker time %d", ts, w.before, w.now))
	} else {
		w.reject(i, true, fmt.Sprintf("timestamp %d is more than %d ms after broker time %d", ts, w.after, w.now))
	}
}

func (w *recordWalk) reject(i int32, ts bool, msg string) {
	if w.bad == nil {
		w.bad = &Errors{Err: kerr.InvalidRecord}
	}
	w.bad.Records = append(w.bad.Records, Rejected{Index: i, Message: msg})
	w.badTs = w.badTs || ts
}

func badRecord(i int32, field string) error {
	return fmt.Errorf("record %d: malformed %s: %w", i, field, kerr.InvalidRecord)
}

// varintAt reads the zigzag varint of a 32-bit field at b[p:], returning
// it and the position after it, or a negative position when b ends, the
// varint takes more than 5 bytes (Java's ByteUtils.readVarint refuses
// those) or its value is beyond 32 bits. It is inlined.
func varintAt(b []byte, p int) (int64, int) {
	var u uint64
	for s := uint(0); s < 35 && uint(p) < uint(len(b)); s += 7 {
		c := b[p]
		p++
		u |= uint64(c&0x7f) << s
		if c < 0x80 {
			if u > math.MaxUint32 {
				return 0, -1
			}
			return int64(u>>1) ^ -int64(u&1), p
		}
	}
	return 0, -1
}

// varlongAt is varintAt for a 64-bit field (the timestamp delta): up to
// 10 bytes, the last of them 0 or 1, as binary.Varint reads them.
func varlongAt(b []byte, p int) (int64, int) {
	var u uint64
	for s := uint(0); s < 70 && uint(p) < uint(len(b)); s += 7 {
		c := b[p]
		p++
		if s == 63 && c > 1 {
			return 0, -1
		}
		u |= uint64(c&0x7f) << s
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), p
		}
	}
	return 0, -1
}

// bytesAt skips the varint length at b[p:] and that many bytes, returning
// the length (-1: null) and the position after them, or a negative
// position when they do not fit.
func bytesAt(b []byte, p int) (int64, int) {
	n, p := varintAt(b, p)
	switch {
	case p < 0 || n < -1 || n > int64(len(b)-p):
		return 0, -1
	case n == -1:
		return -1, p
	}
	return n, p + int(n)
}
