package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"

	"kzero/net/wire"
)

// This file is a connection's request pipeline: the event loop queues
// requests (enqueue), one runner goroutine at a time serves them in order
// (run), and completed responses queue for the loop (send, fail), which
// writes them (writer.go).

// enqueue queues a request read on the loop and starts a runner if none is
// active. On the event loop.
func (c *Conn) enqueue(r *Request) {
	c.mu.Lock()
	if c.mu.failed {
		c.mu.Unlock()
		r.free()
		return
	}
	c.outstanding.Add(1)
	c.srv.stats.requests.Add(1)
	if !c.mu.active && c.srv.cfg.Inline != nil && c.srv.cfg.Inline(r.Header.APIKey, r.Header.APIVersion) {
		c.mu.active, c.mu.inline = true, true
		c.mu.Unlock()
		c.serveInline(r)
		return
	}
	c.mu.inbox = append(c.mu.inbox, r)
	start := !c.mu.active
	if start {
		c.mu.active = true
		c.srv.runners.Add(1)
		c.srv.stats.runners.Add(1)
	}
	c.mu.Unlock()
	if start {
		go c.run()
	}
}

// serveInline serves a request on the event loop (Config.Inline), the
// connection being idle: no request can arrive meanwhile, since only the
// loop enqueues. A response sent during Serve, from here or from another
// goroutine, is written when readFrames has served the frames at hand
// (drainInline), with the responses of the other requests they held, in
// one writev; a request completed later starts a runner as usual
// (resume).
func (c *Conn) serveInline(r *Request) {
	c.serve(r)
	done := !r.state.CompareAndSwap(stateServing, stateReturned)
	if done {
		r.free()
	}
	c.mu.Lock()
	c.mu.inline = false
	if done {
		c.mu.active = false
	}
	c.mu.Unlock()
}

// drainInline writes the responses that inline requests left in the
// outbox: a drain scheduled while a request was served inline queues no
// task (scheduleLocked), and until this drain none is queued for them.
// On the loop, when readFrames stops.
func (c *Conn) drainInline() {
	c.mu.Lock()
	drain := c.mu.scheduled && !c.mu.queued
	c.mu.Unlock()
	if drain {
		_ = c.drain(context.Background())
	}
}

// run serves queued requests one at a time until the inbox is empty or a
// request completes later than its Serve call (then its completion starts
// the next runner). Requests of one connection are therefore served in
// order and never two at once, and no goroutine waits for a slow request.
func (c *Conn) run() {
	defer c.srv.runners.Done()
	for {
		r := c.next()
		if r == nil {
			return
		}
		c.serve(r)
		if r.state.CompareAndSwap(stateServing, stateReturned) {
			return // completes later
		}
		r.free()
	}
}

// serve calls the handler; a panic fails the request (closing the
// connection) instead of the broker.
func (c *Conn) serve(r *Request) {
	defer func() {
		if p := recover(); p != nil {
			c.srv.log.Error("handler panic", "conn", c.id, "remote", c.remote,
				"api_key", r.Header.APIKey, "panic", p, "stack", string(debug.Stack()))
			if r.state.Load() == stateServing {
				r.Fail(fmt.Errorf("handler panic: %v", p))
			}
		}
	}()
	c.srv.handler.Serve(r)
}

// next pops the next request to serve, or marks the connection inactive.
func (c *Conn) next() *Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.mu.inbox) == 0 || c.mu.failed || c.mu.closed {
		c.mu.active = false
		return nil
	}
	r := c.mu.inbox[0]
	n := copy(c.mu.inbox, c.mu.inbox[1:])
	c.mu.inbox[n] = nil
	c.mu.inbox = c.mu.inbox[:n]
	return r
}

// resume starts a runner after a request completed outside Serve, if
// requests queued behind it.
func (c *Conn) resume() {
	c.mu.Lock()
	if c.mu.closed || c.mu.failed || len(c.mu.inbox) == 0 {
		// Nothing queued behind it (a consumer's fetch, the common case):
		// the connection goes idle here rather than through a runner
		// started only to find the inbox empty, a goroutine and often a
		// thread woken per long-poll fetch.
		c.mu.active = false
		c.mu.Unlock()
		return
	}
	c.srv.runners.Add(1)
	c.srv.stats.runners.Add(1)
	c.mu.Unlock()
	go c.run()
}

// send queues a sealed response for the loop. From any goroutine.
func (c *Conn) send(resp *wire.Response) {
	c.mu.Lock()
	if c.mu.closed || c.mu.failed {
		c.mu.Unlock()
		resp.Release()
		return
	}
	c.mu.outbox = append(c.mu.outbox, resp)
	if c.mu.direct {
		c.mu.Unlock() // the goroutine writing directly takes it
		return
	}
	if !c.mu.scheduled && !c.mu.inline && c.loopIdle.Load() && resp.Size() <= directMaxBytes {
		c.mu.direct = true
		c.mu.Unlock()
		c.writeDirect()
		return
	}
	c.scheduleLocked()
	c.mu.Unlock()
}

// fail stops the connection: no further request is served, and the loop
// closes it after writing the responses already queued. From any goroutine.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.mu.closed || c.mu.failed {
		c.mu.Unlock()
		return
	}
	c.mu.failed = true
	c.mu.outbox = append(c.mu.outbox, nil)
	if !c.mu.direct { // else the goroutine writing directly hands it to the loop
		c.scheduleLocked()
	}
	c.mu.Unlock()
	c.srv.log.Info("closing connection: request failed", "conn", c.id, "remote", c.remote, "err", err)
}

// scheduleLocked queues one drain of the outbox on the loop, unless one is
// queued already. The outbox, not gnet's task queues, orders responses:
// gnet may run two Execute tasks out of order under load (a task queued
// while its urgent queue is full goes to a second queue), and a drain
// always takes the whole outbox in order. Execute runs under c.mu so it
// cannot race OnClose: once closed is set, nothing is queued for the loop.
func (c *Conn) scheduleLocked() {
	if c.mu.scheduled {
		return
	}
	c.mu.scheduled = true
	if c.mu.inline {
		return // the loop serving inline drains when its frames are served (drainInline)
	}
	c.mu.queued = true
	if err := c.loop.el.Execute(context.Background(), c.loop.drainTask); err != nil {
		// The engine is shutting down: OnClose will release the outbox.
		c.srv.log.Debug("queue response drain", "conn", c.id, "err", err)
	}
}

// onOpen sets up a new connection. On its event loop.
func (s *Server) onOpen(gc gnet.Conn) *Conn {
	c := &Conn{
		id:     s.nextID.Add(1),
		srv:    s,
		remote: gc.RemoteAddr(),
		local:  gc.LocalAddr(),
	}
	l, _ := gc.Context().(*listener)
	if h, ok := gc.Context().(*handoff); ok {
		l = h.l
		c.remote, c.local, c.principal = h.remote, h.local, h.principal
		c.kernelTLS, c.relayed = h.kernel, !h.kernel
	}
	if l != nil {
		c.listener = l.Name
		if l.PreAuthMaxBytes > 0 && l.PreAuthMaxBytes < s.cfg.MaxRequestBytes {
			c.preAuthMax.Store(int32(l.PreAuthMaxBytes))
		}
	}
	c.loop.gc, c.loop.el, c.loop.fd = gc, gc.EventLoop(), gc.Fd()
	c.loop.reader.max, c.loop.reader.mem = s.cfg.MaxRequestBytes, c
	c.loop.epfd = loopEpoll(c.loop.el)
	c.loop.drainTask = gnet.RunnableFunc(c.drain)
	c.loop.resumeTask = gnet.RunnableFunc(c.resumeReading)
	c.loop.wakeTask = gnet.RunnableFunc(c.writable)
	c.loopIdle.Store(true)
	c.lastActive.Store(s.now())
	s.register(c)
	s.stats.opened.Add(1)
	return c
}

// onClose releases everything the connection holds. On its event loop,
// from gnet's close, before gnet closes the socket; possibly from within
// a write of this connection (gnet closes on a write error).
func (c *Conn) onClose(err error) {
	l := &c.loop
	c.wmu.Lock() // wait for a direct write to end
	defer c.wmu.Unlock()
	l.dead = true
	c.srv.poller.forget(c)
	c.srv.mem.forget(c)
	l.reader.release()
	c.mu.Lock()
	c.mu.closed = true
	inbox, outbox := c.mu.inbox, c.mu.outbox
	c.mu.inbox, c.mu.outbox = nil, nil
	c.mu.Unlock()
	for _, r := range inbox {
		r.free()
	}
	for _, resp := range outbox {
		if resp != nil {
			resp.Release()
		}
	}
	if !l.writing {
		c.releaseOutput()
	}
	c.srv.unregister(c)
	c.srv.releaseConn(c)
	c.srv.stats.closed.Add(1)
	if c.kernelTLS && errors.Is(err, unix.EIO) {
		// A record that is not application data (tls_kernel.go).
		c.srv.stats.kernelTLSRecordCloses.Add(1)
	}
	c.srv.log.Debug("connection closed", "conn", c.id, "remote", c.remote, "err", err)
}
