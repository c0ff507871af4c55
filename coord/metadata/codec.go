package metadata

import (
	"encoding/binary"
	"errors"
)

// The record codec: append-style encoders into a caller's buffer, and a
// reader with a sticky error checked once at the end (franz-go kbin's
// shape). Integers are varints (zig-zag for signed), strings and byte
// slices are an unsigned varint length then the bytes, a UUID is 16 raw
// bytes, a bool one byte (0 or 1), a float64 its 8 bytes big-endian.

var errTruncated = errors.New("metadata: record truncated")

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
func appendVarint(b []byte, v int64) []byte   { return binary.AppendVarint(b, v) }

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendUint64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendInt32s(b []byte, vs []int32) []byte {
	b = binary.AppendUvarint(b, uint64(len(vs)))
	for _, v := range vs {
		b = binary.AppendVarint(b, int64(v))
	}
	return b
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errTruncated)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(errTruncated)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) int32() int32 {
	v := r.varint()
	if v != int64(int32(v)) {
		r.fail(errors.New("metadata: int32 out of range"))
		return 0
	}
	return int32(v)
}

func (r *reader) int16() int16 {
	v := r.varint()
	if v != int64(int16(v)) {
		r.fail(errors.New("metadata: int16 out of range"))
		return 0
	}
	return int16(v)
}

func (r *reader) int8() int8 {
	v := r.varint()
	if v != int64(int8(v)) {
		r.fail(errors.New("metadata: int8 out of range"))
		return 0
	}
	return int8(v)
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.fail(errTruncated)
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// uint64 reads 8 bytes, big-endian (a float64's bits).
func (r *reader) uint64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.fail(errTruncated)
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *reader) bool() bool {
	switch r.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail(errors.New("metadata: bad bool"))
	return false
}

// bytes returns a length-prefixed slice aliasing the input.
func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail(errTruncated)
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string { return string(r.bytes()) }

func (r *reader) uuid() (id [16]byte) {
	if r.err != nil {
		return id
	}
	if len(r.b) < 16 {
		r.fail(errTruncated)
		return id
	}
	copy(id[:], r.b)
	r.b = r.b[16:]
	return id
}

// count reads an array length; every element takes at least one byte, so a
// length above what is left is a lie, refused before any allocation.
func (r *reader) count() int {
	n := r.uvarint()
	if r.err != nil {
		return 0
	}
	if n > uint64(len(r.b)) {
		r.fail(errTruncated)
		return 0
	}
	return int(n)
}

func (r *reader) int32s() []int32 {
	n := r.count()
	if n == 0 {
		return nil
	}
	vs := make([]int32, n)
	for i := range vs {
		vs[i] = r.int32()
	}
	return vs
}
