package coordrecord

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrMalformed is wrapped by every error of a Reader.
var ErrMalformed = errors.New("malformed coordinator record")

// Reader reads the fields of a key or a value in order. Once a read fails,
// every later read returns a zero value; Err says what failed first.
// Slices it returns alias the input.
type Reader struct {
	b   []byte
	err error
}

// NewReader reads b.
func NewReader(b []byte) Reader { return Reader{b: b} }

// NewValueReader starts reading a record value, whose version must be
// version: it returns a Reader of the fields after the version.
func NewValueReader(value []byte, version int16) (Reader, error) {
	r := NewReader(value)
	if v := r.Int16(); r.err == nil && v != version {
		r.failf("value version %d, want %d", v, version)
	}
	return r, r.err
}

// Err is the first error of the reads so far.
func (r *Reader) Err() error { return r.err }

// Fail records err (wrapping ErrMalformed) unless an error is already
// recorded: for checks the caller makes on what it read.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %w", ErrMalformed, err)
	}
}

// Len is the number of bytes left.
func (r *Reader) Len() int { return len(r.b) }

func (r *Reader) failf(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
}

// Bytes reads n bytes.
func (r *Reader) Bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.failf("%d bytes needed, %d left", n, len(r.b))
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

// Int8 reads an int8.
func (r *Reader) Int8() int8 {
	if b := r.Bytes(1); b != nil {
		return int8(b[0])
	}
	return 0
}

// Int16 reads an int16.
func (r *Reader) Int16() int16 { return int16(r.Uint16()) }

// Uint16 reads a uint16.
func (r *Reader) Uint16() uint16 {
	if b := r.Bytes(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

// Int32 reads an int32.
func (r *Reader) Int32() int32 {
	if b := r.Bytes(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

// Int64 reads an int64.
func (r *Reader) Int64() int64 {
	if b := r.Bytes(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// UUID reads a uuid.
func (r *Reader) UUID() (id [16]byte) {
	copy(id[:], r.Bytes(16))
	return id
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.failf("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// String16 reads a string with an int16 length (a key's); null is an error.
func (r *Reader) String16() string {
	n := int(r.Int16())
	if n < 0 {
		r.failf("null string")
	}
	return string(r.Bytes(n))
}

// compactLen reads a compact length (n+1; 0 is null): -1 for null. A
// length beyond the bytes left is an error.
func (r *Reader) compactLen() int {
	v := r.Uvarint()
	if r.err != nil {
		return -1
	}
	if v > uint64(len(r.b))+1 || v > math.MaxInt32 {
		r.failf("length %d beyond the %d bytes left", v-1, len(r.b))
		return -1
	}
	return int(v) - 1
}

// CompactString reads a compact string; null is an error.
func (r *Reader) CompactString() string {
	n := r.compactLen()
	if r.err == nil && n < 0 {
		r.failf("null string")
	}
	return string(r.Bytes(n))
}

// CompactNullableString reads a compact nullable string: "" for null.
func (r *Reader) CompactNullableString() string {
	n := r.compactLen()
	if n < 0 {
		return ""
	}
	return string(r.Bytes(n))
}

// CompactBytes reads compact bytes: empty for null.
func (r *Reader) CompactBytes() []byte { return r.Bytes(max(r.compactLen(), 0)) }

// ArrayLen reads a compact array's length: 0 for null. Every element takes
// at least one byte, so a length beyond the bytes left is an error.
func (r *Reader) ArrayLen() int { return max(r.compactLen(), 0) }

// CompactStrings reads a compact array of compact strings.
func (r *Reader) CompactStrings() []string {
	n := r.ArrayLen()
	out := make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		out = append(out, r.CompactString())
	}
	return out
}

// Int32s reads a compact array of int32s: empty for null.
func (r *Reader) Int32s() []int32 { return readInts(r, 4, (*Reader).Int32) }

// Int16s reads a compact array of int16s: empty for null.
func (r *Reader) Int16s() []int16 { return readInts(r, 2, (*Reader).Int16) }

// readInts reads a compact array of integers of size bytes each.
func readInts[T int16 | int32](r *Reader, size int, read func(*Reader) T) []T {
	n := r.ArrayLen()
	if n > len(r.b)/size {
		r.failf("%d integers of %d bytes in %d bytes", n, size, len(r.b))
		return nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = read(r)
	}
	return out
}

// Tags reads a tagged fields section, giving each field's tag and bytes
// to f (nil: skip them all). f reads a field with a Reader of its own and
// reports a malformed field with Fail.
func (r *Reader) Tags(f func(tag uint64, field []byte)) {
	n := r.Uvarint()
	if n > uint64(len(r.b)) { // a field takes two bytes at least
		r.failf("%d tagged fields in %d bytes", n, len(r.b))
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		tag := r.Uvarint()
		size := r.Uvarint()
		if size > uint64(len(r.b)) {
			r.failf("tagged field of %d bytes, %d left", size, len(r.b))
			return
		}
		b := r.Bytes(int(size))
		if f != nil && r.err == nil {
			f(tag, b)
		}
	}
}
