package share

// A share fetch with nothing to acquire waits for records: new ones (the
// replica purgatory wakes it when the high watermark moves) or records
// that become acquirable again (Kafka completes its DelayedShareFetch
// then). The second kind wakes it through Notify, which Entry.Unlock
// calls when the partition says records were freed (Partition.TakeFreed):
// an acknowledgement released some or moved the SPSO making room under
// max.record.locks, a share session ended, or a lock ended (the lock
// timer of expiry.go).

// waiter is a parked share fetch: the share partitions it waits on and
// how to wake it (at most once; the caller's func must be idempotent).
type waiter struct {
	keys []Key
	fire func()
}

// Wait registers fire to run when one of keys may have records to
// acquire again (Notify); cancel unregisters it.
func (m *Manager) Wait(keys []Key, fire func()) (cancel func()) {
	w := &waiter{keys: keys, fire: fire}
	m.mu.Lock()
	if m.waiters == nil {
		m.waiters = map[*waiter]struct{}{}
	}
	m.waiters[w] = struct{}{}
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.waiters, w)
		m.mu.Unlock()
	}
}

// Notify wakes the share fetches waiting on k.
func (m *Manager) Notify(k Key) {
	var fire []func()
	m.mu.Lock()
	for w := range m.waiters {
		for _, wk := range w.keys {
			if wk == k {
				fire = append(fire, w.fire)
				delete(m.waiters, w)
				break
			}
		}
	}
	m.mu.Unlock()
	for _, f := range fire {
		f()
	}
}

// Acquirable reports whether k's share partition has records a share fetch
// could acquire below bound (the partition's high watermark, or last
// stable offset): available ones, or room for new ones under bound. A
// share fetch about to park checks it after registering (Wait), since a
// wake before then went to nobody.
func (m *Manager) Acquirable(k Key, bound int64) bool {
	e, p := m.Peek(k)
	if e == nil {
		return false
	}
	defer e.Unlock()
	off, ok := p.FetchOffset()
	return ok && off < bound
}
