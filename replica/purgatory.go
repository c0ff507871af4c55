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
//
// A Waiter may be the caller's, reused wait after wait (Parked.Waiter), so
// that a parked fetch allocates nothing: each wait is a generation, and
// every firing (an append's, a HW move's, the timer's) names the
// generation it was meant for; one that comes after the waiter fired and
// began another wait finds a later generation and does nothing.
type Waiter struct {
	state    atomic.Uint64 // generation<<2 | phase (registering, deferred, armed, fired)
	need     atomic.Int64  // bytes still wanted
	fire     func()
	timer    *waiterTimer // nil until the first wait with a timeout
	parts    []*Partition
	follower bool
	inline   bool // Parked.Inline
}

// A Waiter's phases in a generation: a firing while it registers is
// deferred until it is armed; fired is final.
const (
	registering uint64 = iota
	deferred
	armed
	fired
)

// waiterTimer is a Waiter's timer, kept from one wait to the next. Its
// func reads the generation from the waiterTimer rather than the Waiter:
// a timer whose firing could not be stopped is left to fire into its own
// past generation, and the Waiter takes a new one.
type waiterTimer struct {
	t   *time.Timer
	w   *Waiter
	gen atomic.Uint64
}

func (wt *waiterTimer) fire() { wt.w.trigger(wt.gen.Load(), true) }

// waiterRef is a Waiter found ready under a partition's lock, with the
// generation it was registered for.
type waiterRef struct {
	w   *Waiter
	gen uint64
}

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
	// Waiter, if not nil, is the caller's to wait with, and to reuse for
	// its next Park once this one's fire has been called.
	Waiter *Waiter
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
	w := r.Waiter
	if w == nil {
		w = new(Waiter)
	}
	gen := w.register(r.Parts, r.KnownHW, minBytes, maxWait, fire, r.Follower, r.Inline)
	moved := false
	for i, p := range r.Parts {
		if p.ReadBound(r.Follower, r.Committed) > r.Seen[i] || r.Follower && p.HighWatermark() > r.KnownHW[i] {
			moved = true
			break
		}
	}
	w.arm(gen, moved)
	return w
}

// Wait registers a consumer fetch's waiter on parts that calls fire (from
// another goroutine) once minBytes more bytes are below their HW or
// maxWait passes.
func Wait(parts []*Partition, minBytes int64, maxWait time.Duration, fire func()) *Waiter {
	w := new(Waiter)
	w.arm(w.register(parts, nil, minBytes, maxWait, fire, false, false), false)
	return w
}

// register starts the waiter's next generation on parts, not yet armed,
// and returns it.
func (w *Waiter) register(parts []*Partition, knownHW []int64, minBytes int64, maxWait time.Duration, fire func(), follower, inline bool) uint64 {
	gen := w.state.Load()>>2 + 1
	w.fire, w.parts, w.follower, w.inline = fire, parts, follower, inline
	w.need.Store(max(minBytes, 1))
	w.state.Store(gen<<2 | registering)
	for i, p := range parts {
		p.mu.Lock()
		if follower {
			p.mu.followerWatchers[w] = knownHW[i]
		} else {
			p.mu.watchers[w] = struct{}{}
		}
		p.mu.Unlock()
	}
	// An append may fire the waiter before the timer is set; the timer
	// then fires into a spent generation.
	if w.timer == nil {
		wt := &waiterTimer{w: w}
		wt.gen.Store(gen)
		wt.t = time.AfterFunc(maxWait, wt.fire)
		w.timer = wt
	} else {
		w.timer.gen.Store(gen)
		w.timer.t.Reset(maxWait)
	}
	return gen
}

// arm lets generation gen of the waiter fire, and fires it when now is
// set or a firing came while it registered.
func (w *Waiter) arm(gen uint64, now bool) {
	if now || !w.state.CompareAndSwap(gen<<2|registering, gen<<2|armed) {
		w.state.Store(gen<<2 | armed)
		go w.trigger(gen, false)
	}
}

// trigger fires generation gen of the waiter once and unregisters it;
// before it is armed, it leaves the firing to arm; for a later generation
// it does nothing. byTimer: the waiter's timer calls it, so stopping the
// timer is moot.
func (w *Waiter) trigger(gen uint64, byTimer bool) {
	for {
		s := w.state.Load()
		if s>>2 != gen {
			return
		}
		switch s & 3 {
		case registering:
			if w.state.CompareAndSwap(s, gen<<2|deferred) {
				return
			}
		case armed:
			if w.state.CompareAndSwap(s, gen<<2|fired) {
				w.unregister(byTimer)
				w.fire() // the caller may reuse w from here on
				return
			}
		default: // deferred until armed, or fired
			return
		}
	}
}

// Fire fires the waiter now (once, like any firing): its caller saw data
// arrive that the registration may have missed.
func (w *Waiter) Fire() {
	gen := w.state.Load() >> 2
	go w.trigger(gen, false)
}

// Cancel unregisters the waiter without firing it.
func (w *Waiter) Cancel() {
	for {
		s := w.state.Load()
		if s&3 == fired {
			return
		}
		if w.state.CompareAndSwap(s, s&^3|fired) {
			w.unregister(false)
			return
		}
	}
}

// unregister stops the timer and takes the waiter off its partitions. A
// timer that fired meanwhile (Stop fails) is left to fire into this
// generation, and the next wait gets a new one.
func (w *Waiter) unregister(byTimer bool) {
	if !byTimer && w.timer != nil && !w.timer.t.Stop() {
		w.timer = nil
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
func readyLocked[V any](ready []waiterRef, set map[*Waiter]V, grown int64) []waiterRef {
	if len(set) == 0 {
		return ready
	}
	for w := range set {
		if w.need.Add(-grown) <= 0 {
			ready = append(ready, w.ref())
		}
	}
	return ready
}

// ref is the waiter with its generation. Caller holds the lock of a
// partition it is registered on, so that is the generation registered.
func (w *Waiter) ref() waiterRef { return waiterRef{w, w.state.Load() >> 2} }

// fire runs satisfied waiters. With inline set, the caller (a client's
// produce, a follower's fetch: no locks held) answers the fetches that
// allow it (Parked.Inline) itself, as Kafka's produce path completes the
// delayed fetches it satisfies: a goroutine per wake-up waited behind the
// event loop that started it until sysmon retook the loop's P for another
// thread, a hand-off per produce that showed in the tail latency at a
// steady 3,000 produces a second (latency-raw-1k-50mbs). Every other
// waiter gets its own goroutine, so that what it does cannot hold up the
// caller.
func fire(ready []waiterRef, inline bool) {
	for _, r := range ready {
		if inline && r.w.inline {
			r.w.trigger(r.gen, false)
		} else {
			go r.w.trigger(r.gen, false)
		}
	}
}

// hwReadyLocked returns the follower waiters that knew a HW below hw.
// Caller holds p.mu.
func (p *Partition) hwReadyLocked(hw int64, ready []waiterRef) []waiterRef {
	for w, known := range p.mu.followerWatchers {
		if known < hw {
			ready = append(ready, w.ref())
		}
	}
	return ready
}

// wakeAll answers every fetch waiting on the partition: its role changed.
func (p *Partition) wakeAll() {
	p.mu.Lock()
	var ready []waiterRef
	for w := range p.mu.watchers {
		ready = append(ready, w.ref())
	}
	for w := range p.mu.followerWatchers {
		ready = append(ready, w.ref())
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
