package record

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A record inside a v2 batch; every varint is zigzag encoded, as protobuf's
// sint32/sint64:
//
//	length          varint   (bytes after this field)
//	attributes      int8     (unused, 0)
//	timestampDelta  varlong  (from the batch's baseTimestamp)
//	offsetDelta     varint   (from the batch's baseOffset)
//	keyLength       varint   (-1: null key)
//	key             bytes
//	valueLength     varint   (-1: null value)
//	value           bytes
//	headerCount     varint
//	headers         headerKeyLength varint, headerKey bytes (never null),
//	                headerValueLength varint (-1: null), headerValue bytes

// Header is a record header. Key is never nil; a nil Value is null.
type Header struct{ Key, Value []byte }

// Record is one decoded record. Its offset and timestamp are relative to
// its batch's; see Iter.Offset and Iter.Timestamp.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key, Value     []byte // nil is null, distinct from empty
	Headers        []Header
}

// decode reads one length-prefixed record from b into rec, reusing
// rec.Headers, and returns the bytes after it.
func (rec *Record) decode(b []byte) ([]byte, error) {
	length, b, ok := readVarint(b)
	if !ok || length < 0 || length > int64(len(b)) {
		return nil, corruptRecord("length")
	}
	body, rest := b[:length], b[length:]
	if len(body) < 1 {
		return nil, corruptRecord("attributes")
	}
	rec.Attributes = int8(body[0])
	body = body[1:]
	if rec.TimestampDelta, body, ok = readVarint(body); !ok {
		return nil, corruptRecord("timestamp delta")
	}
	var v int64
	if v, body, ok = readVarint(body); !ok || v < math.MinInt32 || v > math.MaxInt32 {
		return nil, corruptRecord("offset delta")
	}
	rec.OffsetDelta = int32(v)
	if rec.Key, body, ok = readBytes(body); !ok {
		return nil, corruptRecord("key")
	}
	if rec.Value, body, ok = readBytes(body); !ok {
		return nil, corruptRecord("value")
	}
	// Each header takes at least two bytes: a count beyond that is a lie.
	if v, body, ok = readVarint(body); !ok || v < 0 || v > int64(len(body)/2) {
		return nil, corruptRecord("header count")
	}
	rec.Headers = rec.Headers[:0]
	for range v {
		var h Header
		if h.Key, body, ok = readBytes(body); !ok || h.Key == nil {
			return nil, corruptRecord("header key")
		}
		if h.Value, body, ok = readBytes(body); !ok {
			return nil, corruptRecord("header value")
		}
		rec.Headers = append(rec.Headers, h)
	}
	if len(body) != 0 {
		return nil, fmt.Errorf("%d bytes left inside the record's length: %w", len(body), kerr.CorruptMessage)
	}
	return rest, nil
}

func corruptRecord(field string) error {
	return fmt.Errorf("malformed record %s: %w", field, kerr.CorruptMessage)
}

// readVarint reads a zigzag varint of up to 64 bits.
func readVarint(b []byte) (int64, []byte, bool) {
	if len(b) > 0 && b[0] < 0x80 { // most fields: one byte
		return int64(b[0]>>1) ^ -int64(b[0]&1), b[1:], true
	}
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, b, false
	}
	return v, b[n:], true
}

// readBytes reads a varint length and that many bytes; length -1 is nil.
// The result's capacity ends with it, so an append cannot overwrite what
// follows.
func readBytes(b []byte) ([]byte, []byte, bool) {
	n, b, ok := readVarint(b)
	switch {
	case !ok || n < -1 || n > int64(len(b)):
		return nil, b, false
	case n == -1:
		return nil, b, true
	}
	return b[:n:n], b[n:], true
}

// appendRecord appends rec, length prefixed, to dst.
func appendRecord(dst []byte, rec *Record) []byte {
	n := 1 + varintLen(rec.TimestampDelta) + varintLen(int64(rec.OffsetDelta)) +
		bytesLen(rec.Key) + bytesLen(rec.Value) + varintLen(int64(len(rec.Headers)))
	for _, h := range rec.Headers {
		n += varintLen(int64(len(h.Key))) + len(h.Key) + bytesLen(h.Value)
	}
	dst = binary.AppendVarint(dst, int64(n))
	dst = append(dst, byte(rec.Attributes))
	dst = binary.AppendVarint(dst, rec.TimestampDelta)
	dst = binary.AppendVarint(dst, int64(rec.OffsetDelta))
	dst = appendBytes(dst, rec.Key)
	dst = appendBytes(dst, rec.Value)
	dst = binary.AppendVarint(dst, int64(len(rec.Headers)))
	for _, h := range rec.Headers {
		dst = append(binary.AppendVarint(dst, int64(len(h.Key))), h.Key...) // never null
		dst = appendBytes(dst, h.Value)
	}
	return dst
}

// appendBytes appends b with its varint length, -1 for nil.
func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	return append(binary.AppendVarint(dst, int64(len(b))), b...)
}

func bytesLen(b []byte) int {
	if b == nil {
		return varintLen(-1)
	}
	return varintLen(int64(len(b))) + len(b)
}

// varintLen is the encoded size of v as a zigzag varint.
func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}
