package share

import (
	"context"
	"testing"
	"time"
)

// A share fetch parked on a partition whose records another member holds
// wakes when their lock ends, on the lock timer: no request comes to look
// at the partition meanwhile.
func TestLockExpiryWakesParkedFetch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := NewManager(Config{}, nil)
	k := Key{Group: "g", Topic: [16]byte{1}, Partition: 0}
	limits := m.Limits()
	limits.LockDuration = 50

	// The fetch parks first, so no wake can go out before it waits.
	woken := make(chan struct{})
	defer m.Wait([]Key{k}, func() { close(woken) })()

	e, p, err := m.Lock(k, 0, limits, func() int64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Acquire(time.Now().UnixMilli(), "a", 0, 3, 100, true, nil, nil); len(got) != 1 {
		t.Fatalf("acquired %+v", got)
	}
	if m.peekAcquirable(t, k) {
		t.Fatal("records held by a are acquirable")
	}
	e.Unlock() // arms the lock timer

	select {
	case <-woken:
	case <-ctx.Done():
		t.Fatal("the parked fetch was not woken when the lock ended")
	}
	if !m.Acquirable(k, 3) {
		t.Fatal("woken, but nothing is acquirable")
	}
	e, p = m.Peek(k)
	defer e.Unlock()
	if s := p.Spans(); len(s) != 1 || s[0].State != "available" || s[0].Count != 1 {
		t.Fatalf("after the lock ended: %+v", s)
	}
}

// peekAcquirable is Acquirable on a partition the caller holds locked.
func (m *Manager) peekAcquirable(t *testing.T, k Key) bool {
	t.Helper()
	m.mu.Lock()
	e := m.parts[k]
	m.mu.Unlock()
	off, ok := e.p.FetchOffset()
	return ok && off < 3
}

// A partition dropped from the manager (its saved state was replaced) has
// its lock timer do nothing: the entry may be stale.
func TestForgottenPartitionIgnoresItsTimer(t *testing.T) {
	m := NewManager(Config{}, nil)
	k := Key{Group: "g", Topic: [16]byte{1}, Partition: 0}
	limits := m.Limits()
	limits.LockDuration = 1
	e, p, err := m.Lock(k, 0, limits, func() int64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	p.Acquire(0, "a", 0, 3, 100, true, nil, nil) // locked until 1 ms past the epoch: long due
	m.Forget(k)
	e.Unlock() // the timer fires at once
	e.expire() // as the timer does
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := p.Spans(); len(s) != 1 || s[0].State != "acquired" {
		t.Fatalf("a forgotten partition's locks were ended: %+v", s)
	}
}
