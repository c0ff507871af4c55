package server

import (
	"fmt"

	"github.com/valyala/bytebufferpool"

	"kzero/net/wire"
)

// framePool holds request frame buffers; it sizes new buffers by what it
// has seen, so steady traffic reuses buffers without allocating.
var framePool bytebufferpool.Pool

// inbound is the read side of a gnet connection as the frame reader uses
// it (gnet.Conn has these methods, valid on its event loop only).
type inbound interface {
	InboundBuffered() int
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
	Read(p []byte) (int, error)
}

// frameReader cuts request frames out of a connection's byte stream. Once
// a frame's size is known, its buffer is taken from the pool at full size
// and filled as bytes arrive, so each byte is copied once, straight out of
// gnet's read buffer, and a partial frame is never copied again. Owned by
// the connection's event loop.
type frameReader struct {
	max  int
	buf  *bytebufferpool.ByteBuffer // frame being filled; nil between frames
	size int                        // its size
}

// next returns the next whole frame (the bytes after the size prefix),
// which the caller then owns and puts back in framePool, or nil when more
// bytes are needed. An error (negative or oversize frame) means the stream
// cannot go on.
func (r *frameReader) next(in inbound) (*bytebufferpool.ByteBuffer, error) {
	if r.buf == nil {
		if in.InboundBuffered() < wire.SizeLen {
			return nil, nil
		}
		p, err := in.Peek(wire.SizeLen)
		if err != nil {
			return nil, fmt.Errorf("peek frame size: %w", err)
		}
		size, err := wire.FrameSize(p, r.max)
		if err != nil {
			return nil, err
		}
		if _, err := in.Discard(wire.SizeLen); err != nil {
			return nil, fmt.Errorf("discard frame size: %w", err)
		}
		r.buf, r.size = framePool.Get(), size
		if cap(r.buf.B) < size {
			r.buf.B = make([]byte, 0, size)
		}
		r.buf.B = r.buf.B[:0]
	}
	for len(r.buf.B) < r.size && in.InboundBuffered() > 0 {
		n, err := in.Read(r.buf.B[len(r.buf.B):r.size])
		r.buf.B = r.buf.B[:len(r.buf.B)+n]
		if err != nil || n == 0 {
			return nil, fmt.Errorf("read frame: %d bytes, %v", n, err)
		}
	}
	if len(r.buf.B) < r.size {
		return nil, nil
	}
	frame := r.buf
	r.buf = nil
	return frame, nil
}

// release drops a partly read frame.
func (r *frameReader) release() {
	if r.buf != nil {
		framePool.Put(r.buf)
		r.buf = nil
	}
}
