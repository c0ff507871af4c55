package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// File is an open file a FileRange points into, counted by reference: each
// range holds one reference and releases it once, after its bytes are sent
// or when they are dropped (the connection died). A log segment is one, so
// retention may delete a segment while a range of it is still being sent.
type File interface {
	Fd() int
	Release()
}

// FileRange is Len bytes of File from byte Pos on.
type FileRange struct {
	File     File
	Pos, Len int64
}

// ErrResponseTooLarge is returned by Seal for a response whose frame does
// not fit the int32 size prefix.
var ErrResponseTooLarge = errors.New("wire: response larger than 2 GiB")

// Responses whose buffers grew past these are not kept in the pool, so one
// huge response does not pin its memory forever.
const (
	maxPooledBytes  = 1 << 20
	maxPooledRanges = 1 << 10
)

// Response is one response frame: B holds the size placeholder, the
// response header and body bytes, and file ranges are cut in between bytes
// (each at the length B had when it was added).
type Response struct {
	// B is the frame's bytes: a 4-byte size placeholder that Seal fills,
	// the response header that NewResponse wrote, then the body. Encoders
	// append to it (r.B = m.AppendTo(r.B)); never shorten it.
	B      []byte
	ranges []rangeAt
}

// rangeAt is a file range sent after B[:at].
type rangeAt struct {
	at int
	FileRange
}

var responsePool = sync.Pool{New: func() any { return new(Response) }}

// NewResponse returns a pooled Response for the request h, its size
// placeholder and response header (v0, or v1 per h.ResponseFlexible)
// written.
func NewResponse(h *RequestHeader) *Response {
	r := responsePool.Get().(*Response)
	r.B = binary.BigEndian.AppendUint32(r.B[:0], 0)
	r.B = binary.BigEndian.AppendUint32(r.B, uint32(h.CorrelationID))
	if h.ResponseFlexible() {
		r.B = append(r.B, 0) // no tagged fields
	}
	return r
}

// NewRawResponse returns a pooled Response with only its size placeholder
// written: a frame without a response header, for the SASL tokens that
// follow a v0 SaslHandshake.
func NewRawResponse() *Response {
	r := responsePool.Get().(*Response)
	r.B = binary.BigEndian.AppendUint32(r.B[:0], 0)
	return r
}

// AppendMessage appends m's body encoding; m's version must be the
// request's.
func (r *Response) AppendMessage(m kmsg.Response) { r.B = m.AppendTo(r.B) }

// AddFile appends a file range after the bytes so far; the Response owns
// the range's reference from now on.
func (r *Response) AddFile(fr FileRange) {
	r.ranges = append(r.ranges, rangeAt{at: len(r.B), FileRange: fr})
}

// Size is the frame's size as the prefix carries it: every byte after the
// prefix, file ranges included.
func (r *Response) Size() int64 {
	n := int64(len(r.B) - SizeLen)
	for i := range r.ranges {
		n += r.ranges[i].Len
	}
	return n
}

// Seal checks the file ranges and writes the frame size into the
// placeholder. It fails for a negative range position or length, and for
// a frame that does not fit an int32.
func (r *Response) Seal() error {
	if len(r.B) < SizeLen {
		return errors.New("wire: response has no size placeholder")
	}
	for i := range r.ranges {
		if fr := &r.ranges[i]; fr.Pos < 0 || fr.Len < 0 || fr.File == nil {
			return fmt.Errorf("wire: file range %d (pos %d, len %d) is invalid", i, fr.Pos, fr.Len)
		}
	}
	size := r.Size()
	if size > math.MaxInt32 {
		return fmt.Errorf("size %d: %w", size, ErrResponseTooLarge)
	}
	binary.BigEndian.PutUint32(r.B, uint32(size))
	return nil
}

// Parts is the number of parts to write in order: bytes, then per file
// range the range and the bytes after it. Byte parts may be empty.
func (r *Response) Parts() int { return 2*len(r.ranges) + 1 }

// Part returns part i: bytes (fr nil) for even i, a file range for odd i.
// The writer releases a sent range's File and sets it to nil, so Release
// does not release it again.
func (r *Response) Part(i int) (b []byte, fr *FileRange) {
	if i&1 == 1 {
		return nil, &r.ranges[i/2].FileRange
	}
	start, end := 0, len(r.B)
	if k := i / 2; k > 0 {
		start = r.ranges[k-1].at
	}
	if k := i / 2; k < len(r.ranges) {
		end = r.ranges[k].at
	}
	return r.B[start:end], nil
}

// Release drops the references of the file ranges not yet released and
// returns r to the pool. r must not be used afterwards.
func (r *Response) Release() {
	for i := range r.ranges {
		if f := r.ranges[i].File; f != nil {
			f.Release()
		}
		r.ranges[i] = rangeAt{}
	}
	r.ranges = r.ranges[:0]
	if cap(r.B) > maxPooledBytes {
		r.B = nil
	}
	if cap(r.ranges) > maxPooledRanges {
		r.ranges = nil
	}
	responsePool.Put(r)
}
