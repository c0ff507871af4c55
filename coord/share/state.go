package share

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
	"kzero/coord/shards"
	krecord "kzero/record"
	"kzero/replica"
)

// StateTopic is the internal topic of share partition state.
const StateTopic = "__share_group_state"

// StateConfig is the share coordinator's configuration, with Kafka's keys
// and defaults.
type StateConfig struct {
	NumPartitions     int32 // share.coordinator.state.topic.num.partitions (50)
	ReplicationFactor int16 // share.coordinator.state.topic.replication.factor (3), capped by the live brokers
	MinISR            int   // share.coordinator.state.topic.min.isr (2)
	SegmentBytes      int64 // share.coordinator.state.topic.segment.bytes (100 MiB)
	// Leader says whether this broker leads partition p of
	// __share_group_state (local) and whether the topic exists, from the
	// metadata image: a share partition whose state partition is led here
	// but not loaded yet waits for it. Nil: the topic never exists.
	Leader func(p int32) (local, exists bool)
	Logger *slog.Logger
}

func (c *StateConfig) setDefaults() {
	if c.NumPartitions <= 0 {
		c.NumPartitions = 50
	}
	if c.ReplicationFactor <= 0 {
		c.ReplicationFactor = 3
	}
	if c.MinISR <= 0 {
		c.MinISR = 2
	}
	if c.SegmentBytes <= 0 {
		c.SegmentBytes = 100 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Store is the share coordinator (Kafka's ShareCoordinatorShard, run on
// the coordinator runtime of coord/shards): the durable state of share
// partitions, kept in __share_group_state. A share partition's state
// belongs to partition abs(hash("group:topicId:partition")) % partitions
// of the topic, Java's String.hashCode as Kafka computes it, led by the
// broker that serves it; its shard is rebuilt from the partition when this
// broker becomes its leader. The share partition leaders and share group
// coordinators of this broker call it in process; those of other brokers
// through the inter-broker APIs 83-87 (Remote on their side).
type Store struct {
	cfg   StateConfig
	table *shards.Table[*stateShard]
}

// NewStore returns a store leading no partition yet.
func NewStore(cfg StateConfig) *Store {
	cfg.setDefaults()
	s := &Store{cfg: cfg}
	s.table = shards.NewTable(shards.Config{Topic: StateTopic, Partitions: cfg.NumPartitions, CommitTimeout: 5 * time.Second},
		func(rt *shards.Shard) *stateShard {
			return &stateShard{Shard: rt, store: s, states: map[Key]*Snapshot{}}
		})
	return s
}

// TopicSpec is how __share_group_state is created: its partition count,
// its replication factor for this many live brokers, and its configs.
func (s *Store) TopicSpec(liveBrokers int) (partitions int32, replicationFactor int16, configs map[string]string) {
	rf := s.cfg.ReplicationFactor
	if liveBrokers > 0 && int(rf) > liveBrokers {
		rf = int16(liveBrokers)
	}
	return s.cfg.NumPartitions, rf, map[string]string{
		"cleanup.policy":      "compact",
		"compression.type":    "producer",
		"segment.bytes":       strconv.FormatInt(s.cfg.SegmentBytes, 10),
		"min.insync.replicas": strconv.Itoa(min(s.cfg.MinISR, int(rf))),
	}
}

// SetPartitionCount tells the store how many partitions the topic has.
func (s *Store) SetPartitionCount(n int32) { s.table.SetPartitionCount(n) }

// Lead makes this broker the share coordinator of p's share partitions;
// the channel closes once they are loaded.
func (s *Store) Lead(p *replica.Partition) <-chan struct{} { return s.table.Lead(p) }

// Resign drops the shard of a partition this broker no longer leads.
func (s *Store) Resign(partition int32) { s.table.Resign(partition) }

// Leading lists the partitions this broker coordinates.
func (s *Store) Leading() []int32 { return s.table.Leading() }

// Close stops the store.
func (s *Store) Close() { s.table.Close() }

// stateKey is Kafka's text key of a share partition for partitioning:
// "group:topicId:partition".
func stateKey(k Key) string {
	return k.Group + ":" + metadata.TopicIDString(k.Topic) + ":" + strconv.Itoa(int(k.Partition))
}

// ValidStateKey reports whether s is a share coordinator key as Kafka
// forms it: "group:topicId:partition", a non-empty group, a topic id in
// Kafka's text form and a partition number.
func ValidStateKey(s string) bool {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return false
	}
	j := strings.LastIndexByte(s[:i], ':')
	if j <= 0 {
		return false
	}
	if _, ok := metadata.ParseTopicID(s[j+1 : i]); !ok {
		return false
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	return err == nil && p >= 0
}

// PartitionFor is the __share_group_state partition of a share partition.
func (s *Store) PartitionFor(k Key) int32 { return s.table.PartitionFor(stateKey(k)) }

// Read returns a share partition's saved state; found is false when it has
// none. Errors wrap kerr.NotCoordinator (another broker coordinates it) or
// kerr.CoordinatorLoadInProgress.
func (s *Store) Read(k Key) (snap Snapshot, found bool, err error) {
	sh, err := s.table.Lock(s.PartitionFor(k))
	if err != nil {
		return Snapshot{}, false, err
	}
	defer sh.Unlock()
	if st := sh.states[k]; st != nil {
		return *st, true, nil
	}
	return Snapshot{}, false, nil
}

// Write saves a share partition's state (a ShareSnapshot record) and
// returns once it is committed.
func (s *Store) Write(k Key, snap Snapshot) error {
	sh, err := s.table.Lock(s.PartitionFor(k))
	if err != nil {
		return err
	}
	defer sh.Unlock()
	return s.writeLocked(sh, k, snap)
}

// writeLocked is Write with the shard locked.
func (s *Store) writeLocked(sh *stateShard, k Key, snap Snapshot) error {
	prev := sh.states[k]
	now := time.Now().UnixMilli()
	snap.WriteTime, snap.CreateTime = now, now
	if prev != nil {
		snap.SnapshotEpoch, snap.CreateTime = prev.SnapshotEpoch+1, prev.CreateTime
		if snap.StateEpoch == 0 {
			snap.StateEpoch = prev.StateEpoch
		}
	}
	sh.scratch = appendStateKey(sh.scratch[:0], snapshotType, k)
	kn := len(sh.scratch)
	sh.scratch = appendSnapshot(sh.scratch, &snap)
	b := sh.BatchLocked(krecord.NoProducerID, krecord.NoProducerEpoch)
	b.Add(&krecord.Record{Key: sh.scratch[:kn], Value: sh.scratch[kn:]})
	if _, err := sh.WriteLocked(); err != nil {
		return fmt.Errorf("write the share state of %s: %w", stateKey(k), err)
	}
	k.Group = cloneString(k.Group)
	sh.states[k] = &snap
	return nil
}

// Delete removes the saved state of a share group's partitions that this
// broker coordinates (tombstones).
func (s *Store) Delete(keys []Key) error {
	for _, k := range keys {
		sh, err := s.table.Lock(s.PartitionFor(k))
		if err != nil {
			continue
		}
		err = sh.deleteLocked(k)
		sh.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// deleteLocked writes k's tombstone, if it has state.
func (sh *stateShard) deleteLocked(k Key) error {
	if sh.states[k] == nil {
		return nil
	}
	sh.scratch = appendStateKey(sh.scratch[:0], snapshotType, k)
	b := sh.BatchLocked(krecord.NoProducerID, krecord.NoProducerEpoch)
	b.Add(&krecord.Record{Key: sh.scratch})
	if _, err := sh.WriteLocked(); err != nil {
		return err
	}
	delete(sh.states, k)
	return nil
}

// GroupStates lists the saved states of group's share partitions this
// broker coordinates.
func (s *Store) GroupStates(group string) map[Key]Snapshot {
	out := map[Key]Snapshot{}
	for _, sh := range s.table.All() {
		if !sh.LockActive() {
			continue
		}
		for k, st := range sh.states {
			if k.Group == group {
				out[k] = *st
			}
		}
		sh.Unlock()
	}
	return out
}

func cloneString(s string) string { return string([]byte(s)) }

// stateShard is the share partitions' states of one partition of
// __share_group_state; the runtime's lock guards them.
type stateShard struct {
	*shards.Shard
	store   *Store
	states  map[Key]*Snapshot
	scratch []byte
}

// Load reads the partition: the last snapshot of each share partition,
// with the updates after it laid over it; a tombstone deletes it.
func (sh *stateShard) Load() shards.Install {
	states := map[Key]*Snapshot{}
	var rr krecord.Iter
	defer rr.Release()
	skipped := 0
	var firstErr error
	err := sh.Replica().ScanAll(func(b krecord.Batch) error {
		if b.IsControl() {
			return nil
		}
		if err := rr.Reset(b, 0); err != nil {
			return fmt.Errorf("batch at offset %d: %w", b.BaseOffset(), err)
		}
		for rr.Next() {
			rec := rr.Record()
			r, ok, err := decodeStateRecord(rec.Key, rec.Value)
			if err != nil {
				if skipped == 0 {
					firstErr = err
				}
				skipped++
				continue
			}
			if ok {
				applyStateRecord(states, &r)
			}
		}
		return rr.Err()
	})
	return func() func() {
		if err != nil {
			sh.store.cfg.Logger.Error("cannot read all of __share_group_state partition", "partition", sh.Replica().TP.Partition, "err", err)
		}
		if skipped > 0 {
			sh.store.cfg.Logger.Warn("skipped undecodable __share_group_state records", "records", skipped, "first_err", firstErr)
		}
		sh.states = states
		return nil
	}
}

// applyStateRecord lays one record over the states read so far.
func applyStateRecord(states map[Key]*Snapshot, r *stateRecord) {
	switch {
	case r.tombstone:
		delete(states, r.key)
	case r.typ == snapshotType:
		snap := r.snap
		states[r.key] = &snap
	default:
		prev := states[r.key]
		if prev == nil {
			return // an update without its snapshot: nothing to lay it on
		}
		if r.snap.StartOffset >= 0 {
			prev.StartOffset = r.snap.StartOffset
		}
		prev.LeaderEpoch = r.snap.LeaderEpoch
		prev.Batches = overlay(prev.Batches, r.snap.Batches, prev.StartOffset)
	}
}

// maxStateWindow bounds the records a saved state may span past its start
// (Kafka's group.share.partition.max.record.locks is at most 10000): a
// record claiming more cannot make a load allocate without bound.
const maxStateWindow = 1 << 16

// overlay lays newer batches over older ones, dropping what is below
// start.
func overlay(old, newer []StateBatch, start int64) []StateBatch {
	lim := Limits{MaxInFlight: maxStateWindow, DeliveryLimit: 1 << 15}
	p := RestorePartition(start, old, lim)
	return stateOf(RestorePartition(p.Start(), append(stateOf(p), newer...), lim))
}

func stateOf(p *Partition) []StateBatch {
	_, bs := p.State()
	return bs
}

// Unload drops the shard's states.
func (sh *stateShard) Unload() func() {
	sh.states = map[Key]*Snapshot{}
	return nil
}

// Await waits until the store serves k's state partition, when this
// broker leads it (a store that has just been created or is loading);
// it returns at once with kerr.NotCoordinator when another broker
// leads it, and with the last error when ctx ends.
func (s *Store) Await(ctx context.Context, k Key) error {
	p := s.PartitionFor(k)
	for {
		sh, err := s.table.Lock(p)
		if err == nil {
			sh.Unlock()
			return nil
		}
		if errors.Is(err, kerr.NotCoordinator) {
			if s.cfg.Leader == nil {
				return err
			}
			if local, exists := s.cfg.Leader(p); exists && !local {
				return err
			}
		}
		var loaded <-chan struct{}
		if sh, ok := s.table.Get(p); ok {
			loaded = sh.Loaded()
		}
		select {
		case <-ctx.Done():
			return err
		case <-loaded:
		case <-time.After(20 * time.Millisecond): // the image making this broker its leader is on its way
		}
	}
}
