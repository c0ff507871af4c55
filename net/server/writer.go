package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"unsafe"

	"github.com/panjf2000/gnet/v2"
	"github.com/valyala/bytebufferpool"
	"golang.org/x/sys/unix"

	"kzero/net/wire"
)

const (
	// maxIov caps the byte slices gathered into one writev (the kernel
	// takes at most 1024).
	maxIov = 64
	// sendfileChunk caps one sendfile call.
	sendfileChunk = 4 << 20
	// copyChunk is the buffer size for copying a range sendfile cannot send.
	copyChunk = 256 << 10
	// directMaxBytes caps a response written by the goroutine that
	// completes it (writeDirect): that goroutine may be another
	// connection's event loop, whose connections wait meanwhile.
	directMaxBytes = 256 << 10
)

// copyPool holds the buffers of the copy path.
var copyPool bytebufferpool.Pool

// loopState is the part of a connection its event loop owns: reading
// frames and writing responses. Nothing else touches it.
type loopState struct {
	gc gnet.Conn
	el gnet.EventLoop
	fd int

	reader frameReader
	epfd   int  // the loop's epoll set, for pausing reads; -1: cannot pause
	paused bool // reads paused until memory frees (pause.go)

	// pending holds responses taken from the outbox, in order;
	// pending[head] is being written, from its part `part`, of which `sent`
	// bytes are out (file ranges only).
	pending []*wire.Response
	head    int
	part    int
	sent    int64
	off     int64 // sendfile's file offset: a field, so passing its address allocates nothing

	iov   [][]byte         // byte parts gathered for one writev
	batch []*wire.Response // responses all of whose parts are in iov or sent

	waiting bool // a file range waits for the socket to drain (poller armed)
	polled  bool // the socket is registered with the writable poller
	writing bool // inside write: gnet may call OnClose re-entrantly
	dead    bool // OnClose ran

	// direct: write runs in writeDirect, off the loop: it writes the
	// socket itself and calls nothing of gnet's; whatever it cannot
	// finish at once it leaves in this state and hands to the loop
	// (handover).
	direct   bool
	handover bool
	iovecs   []unix.Iovec // writevDirect's, kept so that it allocates nothing

	drainTask  gnet.Runnable // c.drain, made once
	wakeTask   gnet.Runnable // c.writable, made once
	resumeTask gnet.Runnable // c.resumeReading, made once
}

// drain moves the outbox to pending and writes. On the loop, queued by
// scheduleLocked.
func (c *Conn) drain(context.Context) error {
	l := &c.loop
	c.mu.Lock()
	c.mu.scheduled, c.mu.queued = false, false
	if c.mu.direct {
		// Cannot happen (nothing schedules a drain while a goroutine
		// writes directly); the write state is that goroutine's.
		c.mu.Unlock()
		return nil
	}
	c.takeOutboxLocked()
	c.loopIdle.Store(false)
	c.mu.Unlock()
	if !l.dead && !l.waiting {
		c.write()
	}
	return nil
}

// takeOutboxLocked moves the outbox to pending. Caller holds c.mu and
// owns the write state.
func (c *Conn) takeOutboxLocked() {
	l := &c.loop
	l.pending = append(l.pending, c.mu.outbox...)
	clear(c.mu.outbox)
	c.mu.outbox = c.mu.outbox[:0]
}

// writeDirect writes the outbox from the goroutine that completed a
// response (send), while the loop holds nothing to write: a parked fetch
// answered by a produce on another connection's loop, a request served
// by a runner, a timer's answer. Waking the connection's own loop for it
// (Execute: a queued task, an eventfd write, the loop thread's wake-up)
// cost a broker ~28 us of CPU per answer on the 2-core test machine and
// made latency-raw-1k-50mbs's broker CPU per GiB twice as high whenever
// its producer and consumer landed on different loops. Responses
// completed meanwhile are written too, in order. A write the socket does
// not take at once, a Fail's close and any write error go to the loop
// with the state left as write leaves it (handover), and the loop goes
// on from there as from any other write.
func (c *Conn) writeDirect() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	l := &c.loop
	l.direct = true
	for {
		c.mu.Lock()
		if l.dead || l.handover || len(c.mu.outbox) == 0 {
			// Done (if dead, OnClose released the outbox), or over to
			// the loop: the write state is the loop's from here on.
			handover := l.handover && !l.dead
			l.direct, l.handover = false, false
			c.mu.direct = false
			if handover {
				c.srv.stats.directHandovers.Add(1)
				c.loopIdle.Store(false)
				c.scheduleLocked()
			}
			c.mu.Unlock()
			return
		}
		c.srv.stats.directWrites.Add(int64(len(c.mu.outbox)))
		c.takeOutboxLocked()
		c.mu.Unlock()
		c.write()
	}
}

// handOver stops a direct write where it is, for the loop to go on.
func (c *Conn) handOver() bool {
	c.loop.handover = true
	return false
}

// writable resumes a write that waited for the socket. On the loop,
// queued by the writable poller.
func (c *Conn) writable(context.Context) error {
	l := &c.loop
	if l.dead || !l.waiting {
		return nil
	}
	l.waiting = false
	c.write()
	return nil
}

// write writes pending responses in order until they are all out or a
// file range must wait for the socket. Bytes go through gnet (which sends
// what the socket takes and buffers the rest in order); a file range is
// sent with sendfile once gnet's buffer is empty, so the range's bytes
// follow the bytes before it. If the socket is full, the rest of the range
// waits for the writable poller, and later responses wait behind it.
func (c *Conn) write() {
	l := &c.loop
	l.writing = true
	defer func() {
		l.writing = false
		if l.dead {
			c.releaseOutput()
			return
		}
		// Drop the written prefix of pending once it is half of it.
		if l.head > 0 && l.head >= len(l.pending)/2 {
			n := copy(l.pending, l.pending[l.head:])
			clear(l.pending[n:])
			l.pending, l.head = l.pending[:n], 0
		}
		if !l.direct {
			c.loopIdle.Store(l.head == len(l.pending) && len(l.iov) == 0 && !l.waiting && l.gc.OutboundBuffered() == 0)
		}
	}()
	for l.head < len(l.pending) && !l.dead {
		resp := l.pending[l.head]
		if resp == nil { // Fail's marker: close after what came before
			if l.direct {
				c.handOver()
				return
			}
			if c.flush() {
				_ = l.el.Close(l.gc)
			}
			return
		}
		for ; l.part < resp.Parts(); l.part++ {
			b, fr := resp.Part(l.part)
			if fr == nil {
				if len(b) > 0 {
					l.iov = append(l.iov, b)
				}
				continue
			}
			if !c.flush() || !c.sendRange(fr) {
				return
			}
		}
		l.pending[l.head] = nil
		l.head++
		l.part = 0
		l.batch = append(l.batch, resp)
		if len(l.iov) >= maxIov {
			if !c.flush() {
				return
			}
		}
	}
	c.flush()
}

// writevDirect writes the gathered bytes on the socket itself (a direct
// write). What the socket does not take stays in iov for the loop.
func (c *Conn) writevDirect() bool {
	l := &c.loop
	for {
		l.iovecs = l.iovecs[:0]
		for _, b := range l.iov {
			v := unix.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			l.iovecs = append(l.iovecs, v)
		}
		r, _, e := unix.Syscall(unix.SYS_WRITEV, uintptr(l.fd), uintptr(unsafe.Pointer(&l.iovecs[0])), uintptr(len(l.iovecs)))
		clear(l.iovecs) // drop the pointers into the responses
		n := int(r)
		var err error
		if e != 0 {
			n, err = 0, e
		}
		if n > 0 {
			c.srv.stats.responseWrites.Add(1)
			i := 0
			for ; i < len(l.iov) && n >= len(l.iov[i]); i++ {
				n -= len(l.iov[i])
			}
			k := copy(l.iov, l.iov[i:])
			clear(l.iov[k:])
			l.iov = l.iov[:k]
			if k > 0 {
				l.iov[0] = l.iov[0][n:]
			}
		}
		switch {
		case len(l.iov) == 0:
			return true
		case err == unix.EINTR || (err == nil && n > 0):
			continue
		default: // EAGAIN, or an error the loop's write meets again and closes on
			return c.handOver()
		}
	}
}

// flush writes the gathered bytes with one writev and releases the
// responses that are done. It reports whether the connection is alive.
func (c *Conn) flush() bool {
	l := &c.loop
	if len(l.iov) > 0 && l.direct {
		if !c.writevDirect() {
			return false
		}
	} else if len(l.iov) > 0 {
		// gnet writes now what the socket takes and keeps the rest, in
		// order; on a write error it closes the connection (OnClose).
		_, _ = l.gc.Writev(l.iov)
		c.srv.stats.responseWrites.Add(1)
		clear(l.iov)
		l.iov = l.iov[:0]
	}
	if len(l.batch) > 0 {
		for _, resp := range l.batch {
			resp.Release()
		}
		c.outstanding.Add(-int32(len(l.batch)))
		clear(l.batch)
		l.batch = l.batch[:0]
		c.lastActive.Store(c.srv.now())
	}
	return !l.dead
}

// sendRange sends the rest of a file range. It reports true once the
// whole range is out (its File released), false when it must wait for the
// socket or the connection died.
func (c *Conn) sendRange(fr *wire.FileRange) bool {
	l := &c.loop
	for l.sent < fr.Len {
		if !l.direct && l.gc.OutboundBuffered() > 0 {
			// Bytes before the range are still in gnet's buffer.
			_ = l.gc.Flush()
			if l.dead {
				return false
			}
			if l.gc.OutboundBuffered() > 0 {
				return c.blocked(fr)
			}
		}
		l.off = fr.Pos + l.sent
		n, err := c.srv.sendfile(l.fd, fr.File.Fd(), &l.off, int(min(fr.Len-l.sent, sendfileChunk)))
		if n > 0 {
			l.sent += int64(n)
			if c.relayed {
				// Into the user-space TLS relay, which copies it.
				c.srv.stats.copied.Add(int64(n))
			} else {
				c.srv.stats.zeroCopy.Add(int64(n))
			}
		}
		if l.direct && err != unix.EINTR && (err != nil || n == 0) {
			// The socket is full (the loop waits for it), or the loop's
			// write meets the same error and deals with it.
			return c.handOver()
		}
		switch err {
		case nil:
			if n == 0 {
				c.abort(fmt.Errorf("file range (pos %d, len %d) ended %d bytes early", fr.Pos, fr.Len, fr.Len-l.sent))
				return false
			}
		case unix.EINTR:
		case unix.EAGAIN:
			return c.blocked(fr)
		case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
			// This file cannot be sent with sendfile.
			return c.copyRange(fr)
		default:
			c.abort(fmt.Errorf("sendfile: %w", err))
			return false
		}
	}
	fr.File.Release()
	fr.File = nil
	l.sent = 0
	return true
}

// copyRange sends the rest of a range by reading it into a pooled buffer
// and writing through gnet, which buffers what the socket does not take,
// in order (all of the rest, however large: the buffer grows).
func (c *Conn) copyRange(fr *wire.FileRange) bool {
	l := &c.loop
	buf := copyPool.Get()
	defer copyPool.Put(buf)
	if cap(buf.B) < copyChunk {
		buf.B = make([]byte, copyChunk)
	}
	for l.sent < fr.Len {
		p := buf.B[:min(int64(cap(buf.B)), fr.Len-l.sent)]
		n, err := unix.Pread(fr.File.Fd(), p, fr.Pos+l.sent)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			c.abort(fmt.Errorf("read file range (pos %d, len %d) at %d: %d bytes, %v", fr.Pos, fr.Len, l.sent, n, err))
			return false
		}
		_, _ = l.gc.Write(p[:n])
		if l.dead {
			return false
		}
		l.sent += int64(n)
		c.srv.stats.copied.Add(int64(n))
	}
	fr.File.Release()
	fr.File = nil
	l.sent = 0
	return true
}

// blocked handles a file range that found the socket full: by default it
// waits for the socket to drain and goes on with sendfile; with
// Config.CopyWhenBlocked it copies the rest of the range into gnet's
// buffer instead.
func (c *Conn) blocked(fr *wire.FileRange) bool {
	c.srv.stats.socketFull.Add(1)
	if c.srv.cfg.CopyWhenBlocked {
		return c.copyRange(fr)
	}
	c.wait()
	return false
}

// wait parks the write until the socket can take more bytes.
func (c *Conn) wait() {
	c.loop.waiting = true
	if err := c.srv.poller.arm(c); err != nil {
		c.abort(fmt.Errorf("wait for socket: %w", err))
	}
}

// abort closes the connection now: its frame can no longer be completed.
// A peer that closed its end (EPIPE, ECONNRESET) is a client leaving with
// a response on its way, a consumer's close during a fetch: logged at
// debug level, as Kafka logs a disconnect, not as a warning.
func (c *Conn) abort(err error) {
	level := slog.LevelWarn
	if errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET) {
		level = slog.LevelDebug
	}
	c.srv.log.Log(context.Background(), level, "closing connection: write failed", "conn", c.id, "remote", c.remote, "err", err)
	_ = c.loop.el.Close(c.loop.gc)
}

// releaseOutput releases every response the loop holds. On the loop, once
// the connection is dead.
func (c *Conn) releaseOutput() {
	l := &c.loop
	for _, resp := range l.pending[l.head:] {
		if resp != nil {
			resp.Release()
		}
	}
	clear(l.pending)
	l.pending, l.head, l.part, l.sent = l.pending[:0], 0, 0, 0
	for _, resp := range l.batch {
		resp.Release()
	}
	clear(l.batch)
	l.batch = l.batch[:0]
	clear(l.iov)
	l.iov = l.iov[:0]
}
