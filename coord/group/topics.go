package group

import "github.com/twmb/franz-go/pkg/kerr"

// Topics is the cluster's topics as a consumer group coordinator needs them
// to resolve KIP-848 subscriptions (names and regular expressions) to topic
// ids and partition counts. A value is a snapshot (the broker's metadata
// image), given to the coordinator with SetTopics.
type Topics interface {
	// Version changes whenever topics are created, deleted or get
	// partitions (the metadata image offset).
	Version() int64
	ByName(name string) (TopicInfo, bool)
	ByID(id [16]byte) (TopicInfo, bool)
	// All lists every topic, internal ones included.
	All() []TopicInfo
}

// TopicInfo is one topic.
type TopicInfo struct {
	Name       string
	ID         [16]byte
	Partitions int32
	Internal   bool
}

// noTopics is the view of a coordinator configured without topics.
type noTopics struct{}

func (noTopics) Version() int64                  { return 0 }
func (noTopics) ByName(string) (TopicInfo, bool) { return TopicInfo{}, false }
func (noTopics) ByID([16]byte) (TopicInfo, bool) { return TopicInfo{}, false }
func (noTopics) All() []TopicInfo                { return nil }

// deletedTopics lists the topics of old that next no longer has (by id: a
// topic deleted and created again under its name counts as deleted).
func deletedTopics(old, next Topics) map[string]bool {
	if old.Version() == next.Version() {
		return nil
	}
	var gone map[string]bool
	for _, t := range old.All() {
		if _, ok := next.ByID(t.ID); ok {
			continue
		}
		if gone == nil {
			gone = map[string]bool{}
		}
		gone[t.Name] = true
	}
	return gone
}

// purgeTopics deletes every group's offsets of the topics named, as
// Kafka's coordinator does when partitions are deleted: tombstones, then
// the offsets are dropped; a group left empty with no offsets is deleted.
// Shards still loading keep theirs.
func (c *Coordinator) purgeTopics(topics map[string]bool) {
	for _, s := range c.table.All() {
		s.purgeTopics(c.now(), topics)
	}
}

func (s *shard) purgeTopics(now int64, topics map[string]bool) {
	if !s.LockActive() {
		return
	}
	var ready []func()
	for _, e := range s.mu.groups {
		var tps []TopicPartition
		for _, tp := range e.g.allPartitions() {
			if topics[tp.Topic] {
				tps = append(tps, tp)
			}
		}
		if len(tps) == 0 {
			continue
		}
		if err := s.appendTombstonesLocked(e.g, tps, false); err != nil {
			s.c.logger.Warn("cannot delete the offsets of deleted topics", "group", e.g.id, "partition", s.Partition, "err", err)
			continue
		}
		for _, tp := range tps {
			delete(e.g.offsets, tp)
			e.g.dropTxnOffsets(tp)
		}
		if !e.g.deletable() {
			continue
		}
		if err := s.appendTombstonesLocked(e.g, nil, true); err != nil {
			s.c.logger.Warn("cannot delete a group left without offsets", "group", e.g.id, "partition", s.Partition, "err", err)
			continue
		}
		e.g.markDead(now, kerr.GroupIDNotFound)
		ready = append(ready, s.settleLocked(e, now)...)
	}
	s.Unlock()
	for _, f := range ready {
		f()
	}
}
