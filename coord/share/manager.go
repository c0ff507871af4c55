package share

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Config is the broker's share partition and share session settings, with
// Kafka's keys and defaults.
type Config struct {
	Limits
	// MaxSessions is group.share.max.share.sessions (2000): the share
	// sessions this broker keeps.
	MaxSessions int
}

func (c *Config) setDefaults() {
	if c.LockDuration <= 0 {
		c.LockDuration = 30_000
	}
	if c.DeliveryLimit <= 0 {
		c.DeliveryLimit = 5
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 2000
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 2000
	}
}

// Key names a share partition: a share group's view of a topic partition.
type Key struct {
	Group     string
	Topic     [16]byte
	Partition int32
}

// Entry is one share partition with the lock that guards it, the leader
// epoch of the replica it was built on and the state epoch of the saved
// state it was read from.
type Entry struct {
	key  Key
	m    *Manager
	gone atomic.Bool // dropped from the manager (Forget, DeleteGroup)

	mu          sync.Mutex
	leaderEpoch int32
	// stateEpoch is the saved state's when the partition was read; its
	// writes carry it, and the share coordinator fences them once the
	// share group's coordinator has initialized the state again
	// (AlterShareGroupOffsets).
	stateEpoch int32
	// fenced: a write was fenced (FENCED_STATE_EPOCH,
	// FENCED_LEADER_EPOCH); the next Lock reads the state again and Peek
	// finds nothing, as Kafka's share partition manager drops a fenced
	// share partition from its cache.
	fenced bool
	p      *Partition
	expiry expiry // ends the acquisition locks when due (expiry.go)
}

// Manager holds this broker's share partitions and share sessions. Its
// methods are safe for concurrent use; a share partition's calls are
// serialized by its entry's lock (Lock).
type Manager struct {
	cfg   Config
	store *Store // nil: share partition state is kept in memory only
	// remote reaches the share coordinator when another broker leads
	// the state partition; nil: such state is kept in memory only.
	remote Remote

	mu       sync.Mutex
	parts    map[Key]*Entry
	sessions map[sessionKey]*Session
	waiters  map[*waiter]struct{} // parked share fetches (waiter.go)
}

// NewManager returns a manager with no share partitions, saving their
// state in store (nil: in memory only).
func NewManager(cfg Config, store *Store) *Manager {
	cfg.setDefaults()
	return &Manager{cfg: cfg, store: store, parts: map[Key]*Entry{}, sessions: map[sessionKey]*Session{}}
}

// Store is where share partition state is saved; nil if nowhere.
func (m *Manager) Store() *Store { return m.store }

// Limits are the broker's share partition limits, which a group's configs
// may override.
func (m *Manager) Limits() Limits { return m.cfg.Limits }

// Lock returns the share partition of k, locked, built on the replica's
// current leader epoch: a share partition built under another epoch
// (this broker lost and regained the leadership, another leader served
// it meanwhile), or a new one, is read from the store, else starts at
// start() (share.auto.offset.reset). The caller unlocks it
// (Entry.Unlock). An error (the state's coordinator is loading) leaves
// nothing locked.
//
// limits are the group's now (its configs may change them at any time).
func (m *Manager) Lock(k Key, leaderEpoch int32, limits Limits, start func() int64) (*Entry, *Partition, error) {
	m.mu.Lock()
	e := m.parts[k]
	if e == nil {
		k.Group = strings.Clone(k.Group)
		e = &Entry{key: k, m: m, leaderEpoch: -1}
		m.parts[k] = e
	}
	m.mu.Unlock()
	e.mu.Lock()
	if e.p == nil || e.fenced || e.leaderEpoch != leaderEpoch {
		p, stateEpoch, err := m.load(k, leaderEpoch, limits, start)
		if err != nil {
			e.mu.Unlock()
			return nil, nil, err
		}
		e.p, e.leaderEpoch, e.stateEpoch, e.fenced = p, leaderEpoch, stateEpoch, false
	}
	e.p.limits = limits
	return e, e.p, nil
}

// load reads a share partition's saved state and its state epoch, or
// starts it afresh when it has none, or only a state epoch (initialized
// without a start offset), or its coordinator is another broker it cannot
// reach.
func (m *Manager) load(k Key, leaderEpoch int32, limits Limits, start func() int64) (*Partition, int32, error) {
	if m.store != nil {
		snap, found, err := m.store.Read(k)
		if m.remoteFor(k, err) {
			if snap, found, err = m.remote.Read(k, leaderEpoch); err != nil {
				return nil, 0, fmt.Errorf("share state of %s: %w", stateKey(k), err)
			}
		}
		switch {
		case errors.Is(err, kerr.CoordinatorLoadInProgress):
			return nil, 0, err
		case errors.Is(err, kerr.NotCoordinator) && m.store.cfg.Leader != nil:
			// Led here but not served yet (the image that makes this
			// broker its leader is being applied): wait for it rather
			// than start afresh over saved state.
			if local, exists := m.store.cfg.Leader(m.store.PartitionFor(k)); local && exists {
				return nil, 0, fmt.Errorf("share state of %s: %w", stateKey(k), kerr.CoordinatorLoadInProgress)
			}
		case err == nil && found && snap.StartOffset >= 0:
			return RestorePartition(snap.StartOffset, snap.Batches, limits), snap.StateEpoch, nil // capped at max.record.locks
		case err == nil:
			return NewPartition(start(), limits), snap.StateEpoch, nil
		}
	}
	return NewPartition(start(), limits), 0, nil
}

// Save writes the share partition's state to the store, or to the share
// coordinator on another broker (Remote); a no-op without either. The
// caller holds its lock. A write the coordinator fences (the state was
// initialized again under a newer state epoch, or a newer leader wrote)
// marks the entry fenced, so the next Lock reads the state again, and is
// NOT_LEADER_OR_FOLLOWER to the caller, as Kafka's share partition
// answers it.
func (m *Manager) Save(k Key, e *Entry) error {
	if m.store == nil {
		return nil
	}
	start, batches := e.p.State()
	snap := Snapshot{StateEpoch: e.stateEpoch, LeaderEpoch: e.leaderEpoch, StartOffset: start, Batches: batches}
	err := m.store.WriteFenced(k, snap)
	if m.remoteFor(k, err) {
		err = m.remote.Write(k, snap)
	} else if errors.Is(err, kerr.NotCoordinator) {
		return nil
	}
	if errors.Is(err, kerr.FencedStateEpoch) || errors.Is(err, kerr.FencedLeaderEpoch) {
		e.fenced = true
		return &fencedError{err}
	}
	return err
}

// fencedError is a Save the share coordinator fenced: the share
// partition's acknowledgements are NOT_LEADER_OR_FOLLOWER, which a client
// does not retry. It must not be mapped like the state partition's own
// write errors (coord/shards.GroupError turns NOT_LEADER_OR_FOLLOWER into
// NOT_COORDINATOR, which a client retries: the retried acknowledgements
// would reach the share partition read again, where the same member may
// hold the same offsets again, delivered anew).
type fencedError struct{ err error }

func (f *fencedError) Error() string   { return f.err.Error() }
func (f *fencedError) Unwrap() []error { return []error{kerr.NotLeaderForPartition, f.err} }

// Fenced reports whether err is a Save the share coordinator fenced.
func Fenced(err error) bool {
	var f *fencedError
	return errors.As(err, &f)
}

// Peek returns the share partition of k if this broker has one, locked;
// nil otherwise.
func (m *Manager) Peek(k Key) (*Entry, *Partition) {
	m.mu.Lock()
	e := m.parts[k]
	m.mu.Unlock()
	if e == nil {
		return nil, nil
	}
	e.mu.Lock()
	if e.p == nil || e.fenced {
		e.mu.Unlock()
		return nil, nil
	}
	return e, e.p
}

// Unlock releases the share partition; it wakes the share fetches
// parked on it if records became acquirable, and arms the timer that ends
// its acquisition locks (expiry.go).
func (e *Entry) Unlock() { e.unlockAndWake() }

// Forget drops the share partition of k: the next use reads it from the
// store again (its saved state was changed, or deleted).
func (m *Manager) Forget(k Key) {
	m.mu.Lock()
	if e := m.parts[k]; e != nil {
		e.gone.Store(true)
	}
	delete(m.parts, k)
	m.mu.Unlock()
}

// DeleteGroup drops every share partition of group (the group was
// deleted).
func (m *Manager) DeleteGroup(group string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.parts {
		if k.Group == group {
			m.parts[k].gone.Store(true)
			delete(m.parts, k)
		}
	}
}

// GroupPartitions lists the share partitions of group this broker has.
func (m *Manager) GroupPartitions(group string) []Key {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Key
	for k := range m.parts {
		if k.Group == group {
			out = append(out, k)
		}
	}
	return out
}

// releaseMember gives back what member holds in the share partitions
// listed; then, if the group has no share session left here, its share
// partitions are put away (groupEmptied).
func (m *Manager) releaseMember(group, member string, tps []TP) {
	for _, tp := range tps {
		k := Key{Group: group, Topic: tp.Topic, Partition: tp.Partition}
		if e, p := m.Peek(k); e != nil {
			p.ReleaseMember(member)
			e.Unlock() // wakes the share fetches parked on it
		}
	}
	m.groupEmptied(group)
}

// groupEmptied puts away group's share partitions once no member of it
// has a share session here, as Kafka's share partition manager drops a
// group's share partitions from its cache when the group's last share
// session ends (ShareGroupListener.onGroupEmpty): each one's state is
// saved and the next fetch reads it again, so what changed it meanwhile
// (AlterShareGroupOffsets, DeleteShareGroupOffsets, on whichever broker)
// takes effect even when the share partition would never write again to
// be fenced. Share partitions whose state has no home (no
// __share_group_state, or a coordinator this broker cannot reach) are kept:
// their state lives only here.
func (m *Manager) groupEmptied(group string) {
	var keys []Key
	var entries []*Entry
	m.mu.Lock()
	for sk := range m.sessions {
		if sk.group == group {
			m.mu.Unlock()
			return
		}
	}
	for k, e := range m.parts {
		if k.Group == group && m.durable(k) {
			keys, entries = append(keys, k), append(entries, e)
		}
	}
	m.mu.Unlock()
	for i, e := range entries {
		e.mu.Lock()
		if e.p != nil && !e.fenced {
			_ = m.Save(keys[i], e) // best effort: the saved state is consistent without it
		}
		e.fenced = true // a Lock that holds e reads the state again
		e.mu.Unlock()
		m.mu.Lock()
		if m.parts[keys[i]] == e {
			delete(m.parts, keys[i])
			e.gone.Store(true) // its lock timer does nothing now
		}
		m.mu.Unlock()
	}
}

// durable reports whether k's state has a home: the state topic exists
// and this broker leads k's state partition or can reach the broker that
// does.
func (m *Manager) durable(k Key) bool {
	if m.store == nil || m.store.cfg.Leader == nil {
		return false
	}
	local, exists := m.store.cfg.Leader(m.store.PartitionFor(k))
	return exists && (local || m.remote != nil)
}

// errSessionLimit: group.share.max.share.sessions sessions are open.
var errSessionLimit = fmt.Errorf("the share session cache is full: %w", kerr.ShareSessionLimitReached)
