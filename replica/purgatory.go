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
// waiting. It fires only once registered on every partition: a firing
// that comes sooner waits for the registration to end.
type Waiter struct {
	need     atomic.Int64 // bytes still wanted
	fire     func()
	timer    atomic.Pointer[time.Timer]
	parts    []*Partition
	follower bool
	inline   bool         // Parked.Inline
	state    atomic.Int32 // registering, deferred or armed
	once     sync.Once
}

// A Waiter's states: a firing while it registers is deferred until it is
// armed.
const (
	registering int32 = iota
	deferred
	armed
)

// Parked is what a fetch that found too little read, for its waiter
// (Park): the partitions, the offset each read could go up to (a
// ReadResult's End), and for a follower's fetch the HW it knows of each
// (math.MaxInt64: it did not say).
type Parked struct {
	Parts     []*Partition
	Seen      []int64
	KnownHW   []int64 // a follower's fetch only
	Follower  bool
	Committed bool // read_committed: a consumer reads up to the LSO
	// Inline: fire reads file ranges and queues an answer, a few
	// microseconds, so the produce (or follower fetch) that satisfies it
	// may call it on its own goroutine (see fire). Not for a fetch that
	// converts message formats.
	Inline bool
}

// Park registers the waiter of a fetch that read r: it calls fire (from
// another goroutine, or with r.Inline from the produce that satisfies it)
// once minBytes more bytes are readable (a consumer's:
// below the HW; a follower's: appended), once the HW of r.Parts[i] passes
// r.KnownHW[i] (a follower's), or when maxWait passes. Having registered,
// it looks again: an append or HW move between the read and the
// registration woke no one, so a partition readable past r.Seen (or, for
// a follower, with a HW past r.KnownHW) fires it at once. The waiter owns
// r's slices until it calls fire, which may then reuse them for its own
// read: the caller must not touch them after Park returns.
func Park(r Parked, minBytes int64, maxWait time.Duration, fire func()) *Waiter {
	w := register(r.Parts, r.KnownHW, minBytes, maxWait, fire, r.Follower, r.Inline)
	moved := false
	for i, p := range r.Parts {
		if p.ReadBound(r.Follower, r.Committed) > r.Seen[i] || r.Follower && p.HighWatermark() > r.KnownHW[i] {
			moved = true
			break
		}
	}
	w.arm(moved)
	return w
}

// Wait registers a consumer fetch's waiter on parts that calls fire (from
// another goroutine) once minBytes more bytes are below their HW or
// maxWait passes.
func Wait(parts []*Partition, minBytes int64, maxWait time.Duration, fire func()) *Waiter {
	w := register(parts, nil, minBytes, maxWait, fire, false, false)
	w.arm(false)
	return w
}

// register registers a waiter on parts, not yet armed.
func register(parts []*Partition, knownHW []int64, minBytes int64, maxWait time.Duration, fire func(), follower, inline bool) *Waiter {
	w := &Waiter{fire: fire, parts: parts, follower: follower, inline: inline}
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

// arm lets the waiter fire, and fires it when now is set or a firing came
// while it registered.
func (w *Waiter) arm(now bool) {
	if now || !w.state.CompareAndSwap(registering, armed) {
		w.state.Store(armed)
		go w.trigger()
	}
}

// trigger fires the waiter once and unregisters it; before it is armed,
// it leaves the firing to arm.
func (w *Waiter) trigger() {
	if w.state.CompareAndSwap(registering, deferred) || w.state.Load() == deferred {
		return
	}
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

// readyLocked credits grown bytes to the waiters of set and appends those
// now satisfied to ready. Caller holds p.mu.
func readyLocked[V any](ready []*Waiter, set map[*Waiter]V, grown int64) []*Waiter {
	for w := range set {
		if w.need.Add(-grown) <= 0 {
			ready = append(ready, w)
		}
	}
	return ready
}

// fire runs satisfied waiters. With inline set, the caller (a client's
// produce, a follower's fetch: no locks held) answers the fetches that
// allow it (Parked.Inline) itself, as Kafka's produce path completes the
// delayed fetches it satisfies: a goroutine per wake-up waited behind the
// event loop that started it until sysmon retook the loop's P for another
// thread, a hand-off per produce that showed in the tail latency at a
// steady 3,000 produces a second (latency-raw-1k-50mbs). Every other
// waiter gets its own goroutine, so that what it does cannot hold up the
// caller.
func fire(ready []*Waiter, inline bool) {
	for _, w := range ready {
		if inline && w.inline {
			w.trigger()
		} else {
			go w.trigger()
		}
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
	fire(ready, false)
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

// Waiting is the number of fetches parked on p: for tests that must know a
// fetch waits before they make it ready.
func (p *Partition) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.watchers) + len(p.mu.followerWatchers)
}
