package replica

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Waiter is a long-poll fetch waiting for data: it watches partitions and
// fires once, when enough bytes became readable on them or when its wait
// expires, whichever comes first. A consumer's fetch is credited with the
// bytes a HW move makes visible, a follower's with the bytes appended; a
// follower that told the HW it knows (Fetch v18, KIP-1166) is also woken
// as soon as the HW passes it, so followers learn HW moves at once rather
// than after replica.fetch.wait.max.ms. It holds no goroutine while
// waiting.
type Waiter struct {
	need     atomic.Int64 // bytes still wanted
	fire     func()
	timer    atomic.Pointer[time.Timer]
	parts    []*Partition
	follower bool
	once     sync.Once
}

// Wait registers a consumer fetch's waiter on parts that calls fire (from
// another goroutine) once minBytes more bytes are below their HW or
// maxWait passes.
func Wait(parts []*Partition, minBytes int64, maxWait time.Duration, fire func()) *Waiter {
	return wait(parts, nil, minBytes, maxWait, fire, false)
}

// WaitFollower registers a follower fetch's waiter: it fires once minBytes
// more bytes are appended to parts, once the HW of parts[i] passes
// knownHW[i] (math.MaxInt64: the follower did not say), or when maxWait
// passes.
func WaitFollower(parts []*Partition, knownHW []int64, minBytes int64, maxWait time.Duration, fire func()) *Waiter {
	return wait(parts, knownHW, minBytes, maxWait, fire, true)
}

func wait(parts []*Partition, knownHW []int64, minBytes int64, maxWait time.Duration, fire func(), follower bool) *Waiter {
	w := &Waiter{fire: fire, parts: parts, follower: follower}
	w.need.Store(max(minBytes, 1))
	for i, p := range parts {
		p.mu.Lock()
		if follower {
			p.mu.followerWatchers[w] = knownHW[i]
		} else {
			p.mu.watchers[w] = struct{}{}
		}
		p.mu.Unlock()
	}
	// An append may fire the waiter before the timer exists; the timer
	// then fires into a spent Once.
	w.timer.Store(time.AfterFunc(maxWait, w.trigger))
	return w
}

// trigger fires the waiter once and unregisters it.
func (w *Waiter) trigger() {
	w.once.Do(func() {
		w.unregister()
		w.fire()
	})
}

// Fire fires the waiter now (once, like any firing): its caller saw data
// arrive that the registration may have missed.
func (w *Waiter) Fire() { go w.trigger() }

// Cancel unregisters the waiter without firing it.
func (w *Waiter) Cancel() { w.once.Do(w.unregister) }

func (w *Waiter) unregister() {
	if t := w.timer.Load(); t != nil {
		t.Stop()
	}
	for _, p := range w.parts {
		p.mu.Lock()
		if w.follower {
			delete(p.mu.followerWatchers, w)
		} else {
			delete(p.mu.watchers, w)
		}
		p.mu.Unlock()
	}
}

// readyLocked credits grown bytes to the waiters of set and returns those
// now satisfied. Caller holds p.mu.
func readyLocked[V any](set map[*Waiter]V, grown int64) []*Waiter {
	if len(set) == 0 {
		return nil
	}
	var ready []*Waiter
	for w := range set {
		if w.need.Add(-grown) <= 0 {
			ready = append(ready, w)
		}
	}
	return ready
}

// fire runs satisfied waiters, each on its own goroutine: a waiter's fetch
// reads and answers, which must not hold up the append that woke it.
func fire(ready []*Waiter) {
	for _, w := range ready {
		go w.trigger()
	}
}

// hwReadyLocked returns the follower waiters that knew a HW below hw.
// Caller holds p.mu.
func (p *Partition) hwReadyLocked(hw int64, ready []*Waiter) []*Waiter {
	for w, known := range p.mu.followerWatchers {
		if known < hw {
			ready = append(ready, w)
		}
	}
	return ready
}

// wakeAll answers every fetch waiting on the partition: its role changed.
func (p *Partition) wakeAll() {
	p.mu.Lock()
	var ready []*Waiter
	for w := range p.mu.watchers {
		ready = append(ready, w)
	}
	for w := range p.mu.followerWatchers {
		ready = append(ready, w)
	}
	p.mu.Unlock()
	fire(ready)
}

// commitWaiter is a write waiting for the HW to pass its last offset.
type commitWaiter struct {
	offset int64 // the HW that commits it: its last offset + 1
	done   func(error)
	timer  *time.Timer
	once   sync.Once
}

func (c *commitWaiter) complete(err error) {
	c.once.Do(func() {
		if c.timer != nil {
			c.timer.Stop()
		}
		c.done(err)
	})
}

// Committed calls done once the HW reaches offset (a write's last offset
// + 1): with nil, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank
// below min.insync.replicas meanwhile; NOT_LEADER_OR_FOLLOWER when this
// broker stops leading first; REQUEST_TIMED_OUT after timeout. It reports
// whether done was already called (the HW was there), on this goroutine.
// Otherwise done runs later on another goroutine.
func (p *Partition) Committed(offset int64, timeout time.Duration, done func(error)) bool {
	c := &commitWaiter{offset: offset, done: done}
	p.mu.Lock()
	switch {
	case p.Role() != Leader || p.mu.isr == nil:
		p.mu.Unlock()
		done(kerr.NotLeaderForPartition)
		return true
	case p.HighWatermark() >= offset:
		enough := p.mu.isr.isrSize() >= p.mu.minInsyncReplicas
		p.mu.Unlock()
		if enough {
			done(nil)
		} else {
			done(kerr.NotEnoughReplicasAfterAppend)
		}
		return true
	}
	c.timer = time.AfterFunc(timeout, func() {
		p.mu.Lock()
		for i, x := range p.mu.commits {
			if x == c {
				p.mu.commits = append(p.mu.commits[:i], p.mu.commits[i+1:]...)
				break
			}
		}
		p.mu.Unlock()
		c.complete(kerr.RequestTimedOut)
	})
	p.mu.commits = append(p.mu.commits, c)
	p.mu.Unlock()
	return false
}

// failCommits fails every write waiting for the HW.
func (p *Partition) failCommits(err error) {
	p.mu.Lock()
	cs := p.mu.commits
	p.mu.commits = nil
	p.mu.Unlock()
	for _, c := range cs {
		c.complete(err)
	}
}

// WaitCommitted blocks until the HW reaches offset, for a coordinator that
// must not answer before its write is committed; errors as Committed.
// With this broker the only ISR member it returns at once.
func (p *Partition) WaitCommitted(offset int64, timeout time.Duration) error {
	ch := make(chan error, 1)
	p.Committed(offset, timeout, func(err error) { ch <- err })
	return <-ch
}
