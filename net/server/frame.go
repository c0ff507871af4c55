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

// frameMemory grants the bytes a partly read frame's buffer holds
// (Conn: the per-connection and total caps of queued.max.request.bytes).
type frameMemory interface {
	// reserve asks for n more bytes for the frame being read, which holds
	// partial bytes already. false means wait: the connection stops
	// reading and the reader is called again once memory frees.
	reserve(partial, n int) bool
	// release returns the bytes of a partial frame that was dropped.
	release(n int)
}

// smallFrame is the size up to which a frame's buffer is taken whole at
// once, whatever has arrived of it: gnet reads 64 KiB at a time.
const smallFrame = 64 << 10

// frameReader cuts request frames out of a connection's byte stream.
//
// A frame's buffer comes from the pool and is filled as bytes arrive, so
// a partial frame is never copied again: first with what gnet's read
// buffer holds, then, for the rest of a large frame, with read(2) on the
// socket straight into the frame (gnet's buffer being empty, the stream
// order holds), so most of a produce request's bytes are copied once, by
// the kernel, and never again in user space.
//
// The buffer is sized by what has arrived, not by the size the frame
// declares, so a client that declares 100 MiB and sends 64 KiB holds 64
// KiB: a frame up to smallFrame, or one of which at least half has
// arrived (in gnet's buffer and the socket's, FIONREAD), gets a buffer of
// its full size; a larger one gets one of the size that has arrived (at
// least smallFrame, at least twice the last), and moves to a larger buffer
// when that is full. A produce request sent at once is there by the time
// its first bytes are read, so it is copied once as before; a frame that
// trickles in is copied at most once more in all (the buffer at least
// doubles each time). Stats.FrameGrowBytes counts those copies. A frame
// no larger than the largest the connection has sent whole gets its full
// buffer at once: a producer's requests are much alike, and on loopback
// most of a 1 MiB request is still in flight when its first 64 KiB are
// read, so sizing each by what had arrived copied most of its bytes again
// (12-14% of the broker's CPU in produce-1k-max and
// produce-1000-partitions); the connection could hold that much anyway by
// sending it.
//
// Owned by the connection's event loop.
type frameReader struct {
	max  int
	mem  frameMemory // nil: unlimited
	open bool        // a frame's size has been read; size is valid
	size int
	buf  *bytebufferpool.ByteBuffer // the frame's bytes so far; nil until reserved
	held int                        // bytes reserved for buf (its class)
	// proven is the largest frame this connection has sent whole: a frame
	// no larger gets its full buffer at once, however little of it has
	// arrived, since the connection could hold that much by sending it.
	proven int

	grown int64 // bytes copied into larger buffers, for Stats
}

// next returns the next whole frame (the bytes after the size prefix) and
// the bytes reserved for it, which the caller then owns (the frame goes
// back to framePool, the bytes to the frame memory), or nil when more
// bytes or memory are needed. An error (negative or oversize frame) means
// the stream cannot go on.
func (r *frameReader) next(in inbound) (*bytebufferpool.ByteBuffer, int, error) {
	if !r.open {
		if in.InboundBuffered() < wire.SizeLen {
			return nil, 0, nil
		}
		p, err := in.Peek(wire.SizeLen)
		if err != nil {
			return nil, 0, fmt.Errorf("peek frame size: %w", err)
		}
		size, err := wire.FrameSize(p, r.max)
		if err != nil {
			return nil, 0, err
		}
		if _, err := in.Discard(wire.SizeLen); err != nil {
			return nil, 0, fmt.Errorf("discard frame size: %w", err)
		}
		r.open, r.size = true, size
	}
	for r.buf == nil || len(r.buf.B) < r.size {
		if r.buf == nil || len(r.buf.B) == cap(r.buf.B) {
			if !r.grow(in) {
				return nil, 0, nil
			}
			continue // an empty frame is whole now
		}
		room := r.buf.B[len(r.buf.B):min(r.size, cap(r.buf.B))]
		var n int
		if in.InboundBuffered() > 0 {
			var err error
			if n, err = in.Read(room); err != nil || n == 0 {
				return nil, 0, fmt.Errorf("read frame: %d bytes, %v", n, err)
			}
		} else if n = readDirect(in.Fd(), room); n == 0 {
			return nil, 0, nil
		}
		r.buf.B = r.buf.B[:len(r.buf.B)+n]
	}
	frame, held := r.buf, r.held
	r.proven = max(r.proven, r.size)
	r.open, r.buf, r.held = false, nil, 0
	return frame, held, nil
}

// grow gives the frame a buffer with room for more of it, sized as the
// type's comment says, if the frame memory grants it.
func (r *frameReader) grow(in inbound) bool {
	have, old := 0, 0
	if r.buf != nil {
		have, old = len(r.buf.B), cap(r.buf.B)
	}
	want := r.size
	if want > smallFrame && want > r.proven {
		arrived := have + in.InboundBuffered()
		if 2*arrived < want {
			arrived += socketBuffered(in.Fd())
		}
		if 2*arrived < want {
			want = min(r.size, max(arrived, 2*old, smallFrame))
		}
	}
	class := 1 << frameClass(want)
	if r.mem != nil && !r.mem.reserve(r.held, class-r.held) {
		return false
	}
	b := framePool.get(want)
	if r.buf != nil {
		b.B = append(b.B, r.buf.B...)
		r.grown += int64(have)
		framePool.Put(r.buf)
	}
	r.buf, r.held = b, class
	return true
}

// socketBuffered is how many bytes wait in the socket's receive queue.
func socketBuffered(fd int) int {
	if fd < 0 {
		return 0
	}
	n, err := unix.IoctlGetInt(fd, unix.SIOCINQ)
	if err != nil {
		return 0
	}
	return n
}

// readDirect reads from the socket into p and returns how much it read; 0
// when the socket has nothing now. Errors and end of stream are left for
// gnet to find on its next read (epoll is level-triggered: a closed or
// failed socket stays readable).
func readDirect(fd int, p []byte) int {
	for fd >= 0 {
		n, err := unix.Read(fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return 0
		}
		return n
	}
	return 0
}

// release drops a partly read frame.
func (r *frameReader) release() {
	if r.buf != nil {
		framePool.Put(r.buf)
		r.buf = nil
	}
	if r.held > 0 && r.mem != nil {
		r.mem.release(r.held)
	}
	r.open, r.held = false, 0
}
