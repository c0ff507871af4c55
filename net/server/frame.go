package server

import (
	"fmt"

	"github.com/valyala/bytebufferpool"
	"golang.org/x/sys/unix"

	"kzero/net/wire"
)

// inbound is the read side of a gnet connection as the frame reader uses
// it (gnet.Conn has these methods, valid on its event loop only).
type inbound interface {
	InboundBuffered() int
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
	Read(p []byte) (int, error)
	// Fd is the socket, read directly once gnet's buffer is empty; a
	// negative one is never read.
	Fd() int
}

// frameReader cuts request frames out of a connection's byte stream. Once
// a frame's size is known, its buffer is taken from the pool at full size
// and filled as bytes arrive, so a partial frame is never copied again:
// first with what gnet's read buffer holds, then, for the rest of a large
// frame, with read(2) on the socket straight into the frame (gnet's buffer
// being empty, the stream order holds), so most of a produce request's
// bytes are copied once, by the kernel, and never again in user space.
// Owned by the connection's event loop.
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
		r.buf, r.size = framePool.get(size), size
	}
	for len(r.buf.B) < r.size && in.InboundBuffered() > 0 {
		n, err := in.Read(r.buf.B[len(r.buf.B):r.size])
		r.buf.B = r.buf.B[:len(r.buf.B)+n]
		if err != nil || n == 0 {
			return nil, fmt.Errorf("read frame: %d bytes, %v", n, err)
		}
	}
	if len(r.buf.B) < r.size && in.InboundBuffered() == 0 {
		r.readDirect(in.Fd())
	}
	if len(r.buf.B) < r.size {
		return nil, nil
	}
	frame := r.buf
	r.buf = nil
	return frame, nil
}

// readDirect reads the rest of the frame from the socket until it is
// whole or the socket has nothing more. Errors and end of stream are left
// for gnet to find on its next read (epoll is level-triggered: a closed or
// failed socket stays readable).
func (r *frameReader) readDirect(fd int) {
	for fd >= 0 && len(r.buf.B) < r.size {
		n, err := unix.Read(fd, r.buf.B[len(r.buf.B):r.size])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		r.buf.B = r.buf.B[:len(r.buf.B)+n]
	}
}

// release drops a partly read frame.
func (r *frameReader) release() {
	if r.buf != nil {
		framePool.Put(r.buf)
		r.buf = nil
	}
}
