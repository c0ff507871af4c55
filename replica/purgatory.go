package replica

import (
	"sync"
	"sync/atomic"
	"time"
)

// Waiter is a long-poll fetch waiting for data: it watches partitions and
// fires once, when enough bytes were appended to them or when its wait
// expires, whichever comes first. It holds no goroutine while waiting.
type Waiter struct {
	need  atomic.Int64 // bytes still wanted
	fire  func()
	timer atomic.Pointer[time.Timer]
	parts []*Partition
	once  sync.Once
}

// Wait registers a waiter on parts that calls fire (from another
// goroutine) once minBytes more bytes arrive on them or maxWait passes.
func Wait(parts []*Partition, minBytes int64, maxWait time.Duration, fire func()) *Waiter {
	w := &Waiter{fire: fire, parts: parts}
	w.need.Store(max(minBytes, 1))
	for _, p := range parts {
		p.mu.Lock()
		p.mu.watchers[w] = struct{}{}
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
		w.stopTimer()
		for _, p := range w.parts {
			p.mu.Lock()
			delete(p.mu.watchers, w)
			p.mu.Unlock()
		}
		w.fire()
	})
}

// Cancel unregisters the waiter without firing it.
func (w *Waiter) Cancel() {
	w.once.Do(func() {
		w.stopTimer()
		for _, p := range w.parts {
			p.mu.Lock()
			delete(p.mu.watchers, w)
			p.mu.Unlock()
		}
	})
}

func (w *Waiter) stopTimer() {
	if t := w.timer.Load(); t != nil {
		t.Stop()
	}
}

// notify tells the partition's waiters its high watermark moved over
// grown more bytes; a waiter counts them toward its MinBytes.
func (p *Partition) notify(grown int64) {
	p.mu.Lock()
	if len(p.mu.watchers) == 0 {
		p.mu.Unlock()
		return
	}
	var ready []*Waiter
	for w := range p.mu.watchers {
		if w.need.Add(-grown) <= 0 {
			ready = append(ready, w)
		}
	}
	p.mu.Unlock()
	for _, w := range ready {
		go w.trigger()
	}
}
