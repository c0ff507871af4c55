package msgset

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Attribute bits of a v0/v1 message, and the sizes of its fixed parts.
const (
	codecMask         = 0x07
	attrLogAppendTime = 0x08

	entryOverhead = 12 // offset int64 + size int32
	// overheadV0 is a v0 message with null key and value: crc, magic,
	// attributes, two lengths; v1 adds the timestamp.
	overheadV0 = 4 + 1 + 1 + 4 + 4
	overheadV1 = overheadV0 + 8
)

// message is one decoded v0/v1 message. key and value alias the bytes it
// was read from; nil is null.
type message struct {
	offset    int64
	magic     int8
	attrs     int8
	timestamp int64 // -1 for magic 0
	key       []byte
	value     []byte
}

func (m *message) codec() int8         { return m.attrs & codecMask }
func (m *message) logAppendTime() bool { return m.magic > 0 && m.attrs&attrLogAppendTime != 0 }

// readEntry decodes the entry at the start of b and returns the bytes after
// it. partial reports that b ends inside the entry (b holds no whole
// entry). The CRC is checked; errors wrap kerr.CorruptMessage (a bad size
// or CRC) or kerr.InvalidRecord (a message that is not v0/v1, or whose
// fields overrun it).
func readEntry(b []byte) (m message, rest []byte, partial bool, err error) {
	if len(b) < entryOverhead {
		return m, b, true, nil
	}
	m.offset = int64(binary.BigEndian.Uint64(b))
	size := int64(int32(binary.BigEndian.Uint32(b[8:])))
	if size < overheadV0 {
		return m, b, false, fmt.Errorf("message size %d is less than the minimum %d: %w", size, overheadV0, kerr.CorruptMessage)
	}
	if size > int64(len(b)-entryOverhead) {
		return m, b, true, nil
	}
	body := b[entryOverhead : entryOverhead+size]
	rest = b[entryOverhead+size:]
	m.magic, m.attrs, m.timestamp = int8(body[4]), int8(body[5]), -1
	p := 6
	switch m.magic {
	case 0:
	case 1:
		if size < overheadV1 {
			return m, b, false, fmt.Errorf("v1 message size %d is less than the minimum %d: %w", size, overheadV1, kerr.CorruptMessage)
		}
		m.timestamp = int64(binary.BigEndian.Uint64(body[p:]))
		p += 8
	default:
		return m, b, false, fmt.Errorf("message magic %d in a message set: %w", m.magic, kerr.InvalidRecord)
	}
	if got, want := crc32.ChecksumIEEE(body[4:]), binary.BigEndian.Uint32(body); got != want {
		return m, b, false, fmt.Errorf("message at offset %d: stored crc %d, computed %d: %w", m.offset, want, got, kerr.CorruptMessage)
	}
	var ok bool
	if m.key, p, ok = bytesAt(body, p); !ok {
		return m, b, false, fmt.Errorf("message at offset %d: key overruns the message: %w", m.offset, kerr.InvalidRecord)
	}
	if m.value, p, ok = bytesAt(body, p); !ok || p != len(body) {
		return m, b, false, fmt.Errorf("message at offset %d: value does not end the message: %w", m.offset, kerr.InvalidRecord)
	}
	return m, rest, false, nil
}

// bytesAt reads an int32-length-prefixed byte string at b[p:] (length -1:
// nil) and returns it with the position after it.
func bytesAt(b []byte, p int) ([]byte, int, bool) {
	if len(b)-p < 4 {
		return nil, p, false
	}
	n := int64(int32(binary.BigEndian.Uint32(b[p:])))
	p += 4
	if n < 0 {
		return nil, p, n == -1
	}
	if n > int64(len(b)-p) {
		return nil, p, false
	}
	return b[p : p+int(n) : p+int(n)], p + int(n), true
}

// appendEntry appends one entry holding a message of magic with attrs,
// timestamp (ignored for magic 0), key and value (nil: null) at offset.
func appendEntry(dst []byte, offset int64, magic, attrs int8, timestamp int64, key, value []byte) []byte {
	size := overheadV0 + len(key) + len(value)
	if magic > 0 {
		size += 8
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(offset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(size))
	crcAt := len(dst)
	dst = append(dst, 0, 0, 0, 0, byte(magic), byte(attrs))
	if magic > 0 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(timestamp))
	}
	dst = appendBytes(dst, key)
	dst = appendBytes(dst, value)
	binary.BigEndian.PutUint32(dst[crcAt:], crc32.ChecksumIEEE(dst[crcAt+4:]))
	return dst
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}
