package server

import (
	"context"
	"os"
	"reflect"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// Pausing a connection's reads. gnet v2 has no way to stop reading a
// connection: its loop reads whenever epoll says the socket is readable,
// and what OnTraffic leaves unread piles up in the connection's inbound
// buffer, without bound. So a connection over its memory (memory.go)
// takes its socket's read interest out of its loop's epoll set itself:
// the kernel then keeps what the client sends, and once the socket's
// receive buffer is full TCP flow control stops the client. Resuming puts
// the interest back and goes on with what gnet holds.
//
// gnet does not expose a loop's epoll descriptor: loopEpoll reads it from
// the loop's unexported poller (gnet v2.9.7; TestRequestMemoryCapPausesReading
// fails if a gnet upgrade moves it, and without it a connection over its
// memory stops consuming but gnet goes on reading). The interest set kzero
// writes is gnet's own (EPOLLIN|EPOLLPRI, plus EPOLLOUT while gnet has
// bytes to write), with the socket as the event's data as gnet registers
// it; a paused one keeps EPOLLRDHUP, so a client that closes is closed. gnet rewrites it when its write buffer drains or fills, which can
// resume reading of a paused connection; the next OnTraffic sees the
// connection paused and takes the interest out again, so each such event
// lets in at most one gnet read (64 KiB).

// loopEpoll is the epoll descriptor of gnet's event loop el, or -1.
func loopEpoll(el gnet.EventLoop) int {
	v := reflect.ValueOf(el)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return -1
	}
	p := v.Elem().FieldByName("poller")
	if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Struct {
		return -1
	}
	fd := p.Elem().FieldByName("fd")
	if fd.Kind() != reflect.Int {
		return -1
	}
	return int(fd.Int())
}

// setReadInterest sets the socket's interest in its loop's epoll set:
// readable or not, and writable while gnet has bytes to write. On the
// loop.
func (c *Conn) setReadInterest(read bool) {
	l := &c.loop
	if l.epfd < 0 {
		return
	}
	// A paused socket still watches for the peer's close (EPOLLRDHUP):
	// without EPOLLIN nothing else reports a FIN, and a client that gave up
	// would hold its memory until the idle timeout. gnet closes a
	// connection whose event is EPOLLRDHUP without EPOLLIN.
	events := uint32(unix.EPOLLRDHUP)
	if read {
		events = unix.EPOLLIN | unix.EPOLLPRI
	}
	if l.gc.OutboundBuffered() > 0 {
		events |= unix.EPOLLOUT
	}
	ev := unix.EpollEvent{Events: events, Fd: int32(l.fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, l.fd, &ev); err != nil {
		c.srv.log.Warn("cannot pause or resume reading a connection; its reads are not bounded",
			"conn", c.id, "err", os.NewSyscallError("epoll_ctl", err))
		l.epfd = -1
	}
}

// pauseReading stops reading c until wakeReading. On the loop.
func (c *Conn) pauseReading() {
	l := &c.loop
	if l.paused {
		return
	}
	l.paused = true
	c.srv.stats.readPauses.Add(1)
	c.setReadInterest(false)
}

// wakeReading queues a resume of c's reads on its loop. From any
// goroutine; a connection not paused ignores it.
func (c *Conn) wakeReading() {
	if err := c.loop.el.Execute(context.Background(), c.loop.resumeTask); err != nil {
		c.srv.log.Debug("queue read resume", "conn", c.id, "err", err)
	}
}

// resumeReading puts the read interest back and reads what gnet holds.
// On the loop, queued by wakeReading.
func (c *Conn) resumeReading(context.Context) error {
	l := &c.loop
	if l.dead || !l.paused {
		return nil
	}
	l.paused = false
	c.setReadInterest(true)
	if c.readFrames() == gnet.Close {
		_ = l.gc.Close()
	}
	return nil
}
