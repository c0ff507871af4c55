package api

// Fetch v0-v3 (Kafka 0.8-0.10, removed in Kafka 4 by KIP-896) read message
// sets: magic 0 for v0-v1, magic 1 for v2-v3. The partitions are read as
// for any fetch (file ranges, the purgatory for MinBytes), then each range
// is read into memory and its v2 batches down-converted (kzero/msgset), as
// Kafka 3.9's LazyDownConversionRecords does:
//   - control batches are dropped; aborted data is not (v0-v3 has no
//     isolation level), headers are dropped;
//   - a partition's records are as long as the range read, or the first
//     converted batch if that is longer, so a consumer always gets a whole
//     first message; conversion output past that length is cut (a partial
//     message at the end, which clients ignore), and output short of it is
//     padded with an "overflow" entry header (offset -1, a length past
//     the end) that clients take for a partial message;
//   - a zstd batch cannot be converted: first in the range, the partition
//     answers UNSUPPORTED_COMPRESSION_TYPE; later, the records end there
//     (padded), and the next fetch starting at it gets the error;
//   - v0-v2 have a hard byte limit (no KIP-74): a first batch larger than
//     the partition's max bytes is cut, and a cut batch is not converted.
//     Where Kafka 3.9 then sends nothing (the client is stuck), the cut
//     batch's 12-byte entry header is sent, a partial message, so that the
//     client grows its fetch size as it did with Kafka 0.10.
// None of this touches the sendfile path: only these versions come here.

import (
	"encoding/binary"
	"errors"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/valyala/bytebufferpool"

	"kzero/log"
	"kzero/msgset"
	"kzero/record"
)

// respondLegacy answers a Fetch v0-v3 with down-converted records, on a
// goroutine of its own: a fetch woken from the purgatory is answered on the
// goroutine that woke it, often a producer's event loop, which must not
// spend the conversion's time.
func (f *fetchOp) respondLegacy() {
	if d := f.quotaThrottle(); d > 0 {
		// Over the consumer's quota: empty, with the throttle time (v1+).
		f.release()
		resp := f.req.NewResponse()
		e := enc{b: resp.B}
		if f.r.Version >= 1 {
			e.i32(throttleMillis(d))
		}
		e.arrayLen(0)
		resp.B = e.b
		f.req.Respond(resp)
		f.done()
		return
	}
	go f.respondConverted()
}

func (f *fetchOp) respondConverted() {
	v := f.r.Version
	magic := int8(1)
	if v <= 1 {
		magic = 0
	}
	c := converters.Get().(*msgset.Converter)
	defer converters.Put(c)
	src := bytebufferpool.Get()
	defer bytebufferpool.Put(src)
	resp := f.req.NewResponse()
	e := enc{b: resp.B}
	if v >= 1 {
		e.i32(0) // throttle_time_ms
	}
	e.arrayLen(len(f.topics))
	k := 0 // the target of each partition: no sessions below v7, same order
	for i := range f.topics {
		t := &f.topics[i]
		e.str(t.name)
		e.arrayLen(len(t.parts))
		for j := range t.parts {
			p := &t.parts[j]
			offset := f.targets[k].offset
			k++
			e.i32(p.partition)
			head := len(e.b)
			e.i16(p.err)
			e.i64(p.hw)
			e.i32(0) // records length, set below
			if p.err != 0 || p.records.Empty() {
				continue
			}
			start := len(e.b)
			var code int16
			e.b, code = downconvertRange(c, src, e.b, p.records, magic, offset)
			p.records.Release()
			p.records = log.FileRange{}
			if code != 0 {
				e.b = e.b[:start]
				binary.BigEndian.PutUint16(e.b[head:], uint16(code))
				binary.BigEndian.PutUint64(e.b[head+2:], uint64(1<<64-1)) // high watermark -1
				continue
			}
			binary.BigEndian.PutUint32(e.b[head+10:], uint32(len(e.b)-start))
			conversions.fetchPartitions.Add(1)
			conversions.fetchBytes.Add(int64(len(e.b) - start))
		}
	}
	resp.B = e.b
	f.req.Respond(resp)
	f.done()
}

// overflowBatchLength is the least length an overflow entry claims: a v2
// batch header's (Kafka's DefaultRecordBatch.RECORD_BATCH_OVERHEAD).
const overflowBatchLength = record.BatchHeaderSize

// downconvertRange appends the batches of r converted to magic, sized as
// Kafka sizes them (see the top of this file), and returns an error code
// for the partition instead when its first batch cannot be converted.
func downconvertRange(c *msgset.Converter, src *bytebufferpool.ByteBuffer, dst []byte, r log.FileRange, magic int8, offset int64) ([]byte, int16) {
	data, err := readRange(src, r)
	if err != nil {
		// A storage error, which Kafka answers old fetches (v5 and
		// below) as NOT_LEADER_OR_FOLLOWER so that they retry.
		return dst, kerr.NotLeaderForPartition.Code
	}
	start, size := len(dst), len(data)
	converted, sawBatch := false, false
	for len(dst)-start < size || !converted {
		b, rest, err := record.ParseBatch(data)
		if err != nil {
			break // a batch cut by the byte limit, or the end
		}
		data, sawBatch = rest, true
		before := len(dst)
		if dst, err = c.Downconvert(dst, b, magic, offset); err != nil {
			dst = dst[:before]
			if !converted && errors.Is(err, kerr.UnsupportedCompressionType) {
				return dst[:start], kerr.UnsupportedCompressionType.Code
			}
			break
		}
		conversions.fetchBatches.Add(1)
		if !converted && len(dst) > before {
			converted = true
			size = max(size, len(dst)-start)
		}
	}
	if !converted {
		switch {
		case sawBatch:
			size = record.LogOverhead // an overflow entry: the client asks again
		case len(data) >= record.LogOverhead:
			// The first batch is cut by the byte limit (v0-v2): its
			// offset and length read as a message the bytes end in.
			// Kafka 3.9 sends nothing here, and an old consumer
			// waits at the offset for ever; Kafka 0.10 sent the cut
			// message, and its consumers grow their fetch size.
			return append(dst, data[:record.LogOverhead]...), 0
		default:
			size = 0
		}
	}
	if n := len(dst) - start; n >= size {
		return dst[:start+size], 0
	}
	// Pad with an overflow entry: offset -1 and a length past the end.
	remaining := size - (len(dst) - start)
	var hdr [record.LogOverhead]byte
	binary.BigEndian.PutUint64(hdr[:], 1<<64-1)
	binary.BigEndian.PutUint32(hdr[8:], uint32(max(remaining+1, overflowBatchLength)))
	dst = append(dst, hdr[:min(remaining, len(hdr))]...)
	return append(dst, make([]byte, size-(len(dst)-start))...), 0
}

// readRange reads r's bytes from its segment file into buf.
func readRange(buf *bytebufferpool.ByteBuffer, r log.FileRange) ([]byte, error) {
	n := int(r.Len)
	if cap(buf.B) < n {
		buf.B = make([]byte, n)
	}
	b := buf.B[:n]
	for got := 0; got < n; {
		m, err := syscall.Pread(r.Segment.Fd(), b[got:], r.Pos+int64(got))
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return b[:got], nil // the file is shorter than the range: truncated
		}
		got += m
	}
	return b, nil
}
