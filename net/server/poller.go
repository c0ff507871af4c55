package server

import (
	"context"
	"log/slog"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// writablePoller tells event loops when a socket whose send buffer was
// full can take bytes again: gnet has no such callback, and without one a
// file range that hit EAGAIN would have to be copied instead of sent with
// sendfile. It is a private epoll set with one goroutine waiting on it.
// A connection's loop registers its socket once (EPOLLOUT, one-shot) and
// re-arms it each time a write waits; when the socket is writable the
// goroutine queues the connection's wakeTask on its loop.
//
// Lifetime: arm and forget run on the connection's loop; forget runs from
// OnClose, before gnet closes the socket, so the set never holds a closed
// or reused descriptor. The goroutine looks connections up by id under mu,
// which forget also takes, so it never queues a task for a connection
// after OnClose returned; a task queued before that finds the connection
// dead and does nothing.
type writablePoller struct {
	epfd int
	stop int // eventfd that ends run
	done chan struct{}
	log  *slog.Logger

	mu    sync.Mutex
	conns map[uint64]*Conn
}

func newWritablePoller(log *slog.Logger) (*writablePoller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	stop, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, os.NewSyscallError("eventfd", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1, Pad: -1}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, stop, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(stop)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	p := &writablePoller{epfd: epfd, stop: stop, done: make(chan struct{}), log: log, conns: make(map[uint64]*Conn)}
	go p.run()
	return p, nil
}

// arm asks for one wake-up of c's loop once c's socket is writable. On c's
// loop.
func (p *writablePoller) arm(c *Conn) error {
	l := &c.loop
	ev := unix.EpollEvent{Events: unix.EPOLLOUT | unix.EPOLLONESHOT, Fd: int32(uint32(c.id)), Pad: int32(uint32(c.id >> 32))}
	if l.polled {
		return os.NewSyscallError("epoll_ctl mod", unix.EpollCtl(p.epfd, unix.EPOLL_CTL_MOD, l.fd, &ev))
	}
	p.mu.Lock()
	p.conns[c.id] = c
	p.mu.Unlock()
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, l.fd, &ev); err != nil {
		p.mu.Lock()
		delete(p.conns, c.id)
		p.mu.Unlock()
		return os.NewSyscallError("epoll_ctl add", err)
	}
	l.polled = true
	return nil
}

// forget removes c's socket. On c's loop, before the socket is closed.
func (p *writablePoller) forget(c *Conn) {
	l := &c.loop
	if !l.polled {
		return
	}
	l.polled = false
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, l.fd, nil); err != nil {
		p.log.Warn("writable poller: remove socket", "conn", c.id, "err", err)
	}
	p.mu.Lock()
	delete(p.conns, c.id)
	p.mu.Unlock()
}

func (p *writablePoller) run() {
	defer close(p.done)
	events := make([]unix.EpollEvent, 128)
	for {
		n, err := unix.EpollWait(p.epfd, events, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			// Not expected (the set is ours); writes that wait now stay
			// parked until their connections close.
			p.log.Error("writable poller stopped", "err", os.NewSyscallError("epoll_wait", err))
			return
		}
		p.mu.Lock()
		for _, ev := range events[:n] {
			if ev.Fd == -1 && ev.Pad == -1 {
				p.mu.Unlock()
				return
			}
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if c := p.conns[id]; c != nil {
				// Execute does not block; a refusal means the engine is
				// shutting down and OnClose will clean up.
				_ = c.loop.el.Execute(context.Background(), c.loop.wakeTask)
			}
		}
		p.mu.Unlock()
	}
}

// close ends the goroutine and closes the epoll set. After the engine
// stopped (every connection forgotten).
func (p *writablePoller) close() {
	var one = [8]byte{1}
	_, _ = unix.Write(p.stop, one[:])
	<-p.done
	unix.Close(p.epfd)
	unix.Close(p.stop)
}
