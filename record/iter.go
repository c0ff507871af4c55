package record

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/valyala/bytebufferpool"
)

// Iter iterates the records of one batch without copying them and,
// in steady state, without allocating: the Record it returns, its Headers
// slice and the buffer a compressed batch decompresses into are reused.
// An Iter belongs to one goroutine.
type Iter struct {
	rec  Record
	buf  *bytebufferpool.ByteBuffer // decompressed records, nil until needed
	data []byte                     // records not read yet
	left int32                      // records the batch header says remain
	err  error

	baseOffset    int64
	baseTimestamp int64
	maxTimestamp  int64
	logAppendTime bool
}

// Reset starts iterating b's records. A compressed batch is decompressed
// into a pooled buffer, failing beyond limit bytes (ErrDecompressedTooLarge;
// limit <= 0 means no limit but math.MaxInt32). Reset does not check the
// CRC: call b.Validate first for bytes that are not trusted.
func (r *Iter) Reset(b Batch, limit int) error {
	r.data, r.left, r.err = nil, 0, nil
	r.rec.Key, r.rec.Value, r.rec.Headers = nil, nil, r.rec.Headers[:0]
	if len(b) < BatchHeaderSize {
		r.err = fmt.Errorf("batch of %d bytes is shorter than a v2 header: %w", len(b), kerr.CorruptMessage)
		return r.err
	}
	r.baseOffset, r.baseTimestamp = b.BaseOffset(), b.BaseTimestamp()
	r.maxTimestamp, r.logAppendTime = b.MaxTimestamp(), b.LogAppendTime()
	if n := b.NumRecords(); n < 0 {
		r.err = fmt.Errorf("negative record count %d: %w", n, kerr.CorruptMessage)
		return r.err
	}
	r.left = b.NumRecords()
	c := b.Compression()
	if c == CodecNone || (r.left == 0 && len(b.RecordsBytes()) == 0) {
		// Kafka writes the empty batches compaction leaves without a
		// records section whatever their codec bits say.
		r.data = b.RecordsBytes()
		return nil
	}
	if r.buf == nil {
		r.buf = bytebufferpool.Get()
	}
	r.buf.Reset()
	if err := Decompress(c, r.buf, b.RecordsBytes(), limit); err != nil {
		r.err = err
		return err
	}
	r.data = r.buf.B
	return nil
}

// Next decodes the next record, reporting false at the end of the batch or
// on an error (see Err).
func (r *Iter) Next() bool {
	if r.err != nil {
		return false
	}
	if r.left == 0 {
		if len(r.data) != 0 {
			r.err = fmt.Errorf("%d bytes follow the batch's last record: %w", len(r.data), kerr.CorruptMessage)
		}
		return false
	}
	if len(r.data) == 0 {
		r.err = fmt.Errorf("records end %d short of the batch's count: %w", r.left, kerr.CorruptMessage)
		return false
	}
	rest, err := r.rec.decode(r.data)
	if err != nil {
		r.err = fmt.Errorf("record %d from the end: %w", r.left, err)
		return false
	}
	r.data = rest
	r.left--
	return true
}

// Record is the record Next decoded. It and the bytes it points to stay
// valid until the next call to Next, Reset or Release; its byte slices alias
// the batch, or the decompressed buffer.
func (r *Iter) Record() *Record { return &r.rec }

// Offset is the current record's absolute offset.
func (r *Iter) Offset() int64 { return r.baseOffset + int64(r.rec.OffsetDelta) }

// Timestamp is the current record's timestamp: the batch's max timestamp
// when the batch has log append time, else its base timestamp plus the
// record's delta.
func (r *Iter) Timestamp() int64 {
	if r.logAppendTime {
		return r.maxTimestamp
	}
	return r.baseTimestamp + r.rec.TimestampDelta
}

// Err is the error that ended iteration, nil at a clean end. Malformed
// records, and records that do not match the batch's count, give errors
// wrapping kerr.CorruptMessage.
func (r *Iter) Err() error { return r.err }

// Release returns the decompression buffer to its pool. The reader may be
// Reset again after.
func (r *Iter) Release() {
	if r.buf != nil {
		bytebufferpool.Put(r.buf)
		r.buf = nil
	}
	r.data, r.left = nil, 0
	r.rec.Key, r.rec.Value = nil, nil
	clear(r.rec.Headers)
	r.rec.Headers = r.rec.Headers[:0]
}
