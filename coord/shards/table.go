package shards

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/replica"
)

// Coordinated is a coordinator's shard: a type embedding *Shard (which
// gives it Runtime) that loads and unloads its state.
type Coordinated interface {
	Runtime() *Shard
	// Load reads the shard's state from its partition (Runtime().Replica())
	// without the shard's lock, and returns how to install it.
	Load() Install
	// Unload drops the shard's state, with the shard locked and already
	// Closed: requests waiting on it are answered NOT_COORDINATOR. What
	// it returns (maybe nil) runs once the lock is released.
	Unload() (after func())
}

// Install puts what a Load read into its shard, with the shard locked,
// just before it serves. What it returns (maybe nil) runs once the shard
// serves and its lock is released. It is not called for a shard resigned
// or replaced while loading.
type Install func() (after func())

// Config is how a Table runs its shards.
type Config struct {
	// Topic is the internal topic, for errors.
	Topic string
	// Partitions is the topic's partition count until SetPartitionCount
	// says otherwise (offsets.topic.num.partitions,
	// transaction.state.log.num.partitions).
	Partitions int32
	// CommitTimeout bounds how long a write waits for the high watermark
	// (offsets.commit.timeout.ms, 5 s).
	CommitTimeout time.Duration
	// ReloadOnNewEpoch makes a Lead of the partition a shard serves, at a
	// newer leader epoch, replace the shard with a new one loaded afresh
	// (Kafka's transaction coordinator: its epoch is stamped on markers).
	// Otherwise the shard only takes the new epoch (Kafka's group
	// coordinator runtime).
	ReloadOnNewEpoch bool
}

// Table is a coordinator's shards by partition. Its methods are safe for
// concurrent use.
type Table[T Coordinated] struct {
	cfg        Config
	newShard   func(*Shard) T
	partitions atomic.Int32

	mu     sync.RWMutex
	shards map[int32]T
	closed bool
}

// NewTable returns a table leading no partition; newShard makes the
// coordinator's shard around a runtime shard.
func NewTable[T Coordinated](cfg Config, newShard func(*Shard) T) *Table[T] {
	if cfg.CommitTimeout <= 0 {
		cfg.CommitTimeout = 5 * time.Second
	}
	t := &Table[T]{cfg: cfg, newShard: newShard, shards: map[int32]T{}}
	t.partitions.Store(cfg.Partitions)
	return t
}

// SetPartitionCount sets the internal topic's partition count, once it
// exists: keys hash over them.
func (t *Table[T]) SetPartitionCount(n int32) {
	if n > 0 {
		t.partitions.Store(n)
	}
}

// PartitionFor is the partition of a key (PartitionFor over the topic's
// partition count).
func (t *Table[T]) PartitionFor(key string) int32 {
	return PartitionFor(key, t.partitions.Load())
}

// Lead makes this broker the coordinator of p's partition, which it now
// leads at p's leader epoch: a new shard loads in the background, and
// replaces the shard of an older leadership. Leading a partition already
// served at this epoch (or a later one) changes nothing. It returns a
// channel closed once the current shard's load ended.
func (t *Table[T]) Lead(p *replica.Partition) <-chan struct{} {
	epoch := p.LeaderEpoch()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		done := make(chan struct{})
		close(done)
		return done
	}
	old, had := t.shards[p.TP.Partition]
	if had {
		o := old.Runtime()
		if o.part == p && (epoch <= o.Epoch() || !t.cfg.ReloadOnNewEpoch) {
			if epoch > o.Epoch() {
				o.epoch.Store(epoch)
			}
			t.mu.Unlock()
			return o.loaded
		}
	}
	s := t.newShard(newShard(p, epoch, t.cfg.CommitTimeout))
	t.shards[p.TP.Partition] = s
	t.mu.Unlock()
	if had {
		unload(old)
	}
	go t.load(s)
	return s.Runtime().loaded
}

// load runs a shard's load and installs what it read if the shard is
// still the table's and loading.
func (t *Table[T]) load(c T) {
	s := c.Runtime()
	defer close(s.loaded)
	install := c.Load()
	t.mu.RLock()
	cur, ok := t.shards[s.Partition]
	current := ok && cur.Runtime() == s
	t.mu.RUnlock()
	s.mu.Lock()
	if !current || s.state != Loading {
		s.mu.Unlock()
		return
	}
	var after func()
	if install != nil {
		after = install()
	}
	s.state = Active
	s.mu.Unlock()
	if after != nil {
		after()
	}
}

// Resign drops the shard of a partition this broker no longer leads.
func (t *Table[T]) Resign(partition int32) {
	t.mu.Lock()
	c, ok := t.shards[partition]
	delete(t.shards, partition)
	t.mu.Unlock()
	if ok {
		unload(c)
	}
}

// unload closes a shard: a write waiting is woken first, then with the
// lock its coordinator drops its state.
func unload[T Coordinated](c T) {
	s := c.Runtime()
	s.resign()
	s.mu.Lock()
	s.state = Closed
	after := c.Unload()
	s.mu.Unlock()
	if after != nil {
		after()
	}
}

// Leading lists the partitions this broker coordinates (loaded or not),
// in order.
func (t *Table[T]) Leading() []int32 {
	t.mu.RLock()
	out := make([]int32, 0, len(t.shards))
	for p := range t.shards {
		out = append(out, p)
	}
	t.mu.RUnlock()
	slices.Sort(out)
	return out
}

// Close resigns every partition; later Leads do nothing.
func (t *Table[T]) Close() {
	t.mu.Lock()
	t.closed = true
	shards := t.shards
	t.shards = map[int32]T{}
	t.mu.Unlock()
	for _, c := range shards {
		unload(c)
	}
}

// Closed reports whether Close was called.
func (t *Table[T]) Closed() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.closed
}

// Lock returns the shard of partition, locked, if it serves; otherwise an
// error wrapping kerr.NotCoordinator (not led here, or resigned) or
// kerr.CoordinatorLoadInProgress.
func (t *Table[T]) Lock(partition int32) (T, error) {
	t.mu.RLock()
	c, ok := t.shards[partition]
	t.mu.RUnlock()
	if !ok {
		var zero T
		return zero, fmt.Errorf("%s-%d is not led here: %w", t.cfg.Topic, partition, kerr.NotCoordinator)
	}
	s := c.Runtime()
	s.mu.Lock()
	switch s.state {
	case Loading:
		s.mu.Unlock()
		var zero T
		return zero, fmt.Errorf("%s-%d is loading: %w", t.cfg.Topic, partition, kerr.CoordinatorLoadInProgress)
	case Closed:
		s.mu.Unlock()
		var zero T
		return zero, fmt.Errorf("%s-%d was resigned: %w", t.cfg.Topic, partition, kerr.NotCoordinator)
	}
	return c, nil
}

// Get returns the shard of partition, in whatever state, unlocked.
func (t *Table[T]) Get(partition int32) (T, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	c, ok := t.shards[partition]
	return c, ok
}

// All lists the shards, in whatever state, unlocked.
func (t *Table[T]) All() []T {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]T, 0, len(t.shards))
	for _, c := range t.shards {
		out = append(out, c)
	}
	return out
}
