package server

import (
	"sync"
	"sync/atomic"
)

// requestMemory is queued.max.request.bytes: the bytes held by request
// frames being read and queued, per connection and in total. A frame's
// bytes are held from the moment its buffer is taken (the buffer's size
// class, as the frame reader grows it) until its request completes.
//
// A connection that may not take more stops reading (pause.go) until
// memory frees: its own requests completing (the per-connection cap), or
// anyone's (the total). The total works as Kafka's memory pool does: a
// reservation is granted while the total is under the limit, so it can
// exceed it by one grant per event loop, and a large frame is not starved
// by small ones. Two exceptions keep the broker answering while full: a
// connection holding nothing may always read a frame up to smallFrame
// (metadata, heartbeats, ApiVersions), and a connection whose only holding
// is the frame being read is not held back by the per-connection cap.
type requestMemory struct {
	limit     int64 // total; negative: unbounded
	connLimit int64 // per connection; negative: unbounded

	held  atomic.Int64
	nwait atomic.Int32 // len(waiting), read without mu by give

	mu      sync.Mutex
	waiting []memWaiter // connections paused for the total, in order
}

type memWaiter struct {
	c *Conn
	n int64
}

// take reserves n bytes for c, or registers c to be woken when memory
// frees and returns false. On c's loop.
func (m *requestMemory) take(c *Conn, n int64, small bool) bool {
	if m.limit < 0 || small {
		m.held.Add(n)
		return true
	}
	if m.held.Load() < m.limit {
		m.held.Add(n)
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.waiting = append(m.waiting, memWaiter{c, n})
	m.nwait.Add(1)
	// A give between the check above and the registration saw no waiter:
	// check again now that c is registered.
	if m.held.Load() < m.limit {
		m.waiting = m.waiting[:len(m.waiting)-1]
		m.nwait.Add(-1)
		m.held.Add(n)
		return true
	}
	return false
}

// give returns n bytes and wakes the connections waiting for them, in
// order, as many as the memory now free is meant for. From any goroutine.
func (m *requestMemory) give(n int64) {
	held := m.held.Add(-n)
	if m.nwait.Load() == 0 || held >= m.limit {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	promised := int64(0)
	for len(m.waiting) > 0 && m.held.Load()+promised < m.limit {
		w := m.waiting[0]
		m.waiting[0] = memWaiter{}
		m.waiting = m.waiting[1:]
		m.nwait.Add(-1)
		promised += w.n
		w.c.wakeReading()
	}
	if len(m.waiting) == 0 {
		m.waiting = nil
	}
}

// forget drops c from the waiting list. From c's OnClose.
func (m *requestMemory) forget(c *Conn) {
	if m.nwait.Load() == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := m.waiting[:0]
	for _, w := range m.waiting {
		if w.c != c {
			kept = append(kept, w)
		}
	}
	clear(m.waiting[len(kept):])
	m.nwait.Add(int32(len(kept) - len(m.waiting)))
	m.waiting = kept
}

// reserve implements frameMemory for c's frame reader. On c's loop.
func (c *Conn) reserve(partial, n int) bool {
	m := &c.srv.mem
	if q := c.queued.Load(); q > 0 && m.connLimit >= 0 && q+int64(partial+n) > m.connLimit {
		// Over the per-connection cap: wait for c's own requests. The flag
		// is set before checking again, so a release in between either
		// sees it or is seen.
		c.waitOwn.Store(true)
		if q := c.queued.Load(); q > 0 && q+int64(partial+n) > m.connLimit {
			c.pauseReading()
			return false
		}
		c.waitOwn.Store(false)
	}
	small := partial == 0 && n <= smallFrame && c.queued.Load() == 0
	if !m.take(c, int64(n), small) {
		c.pauseReading()
		return false
	}
	return true
}

// release implements frameMemory: a partial frame dropped. On c's loop.
func (c *Conn) release(n int) { c.srv.mem.give(int64(n)) }

// releaseFrame returns the bytes of a whole frame whose request is done.
// From any goroutine.
func (c *Conn) releaseFrame(n int) {
	c.queued.Add(-int64(n))
	c.frames.Add(-1)
	c.srv.mem.give(int64(n))
	if c.waitOwn.Load() && c.waitOwn.CompareAndSwap(true, false) {
		c.wakeReading()
	}
}
