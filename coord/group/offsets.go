package group

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerProtocolType is the protocol type of Kafka consumers, whose
// member metadata names the topics they subscribe to.
const consumerProtocolType = "consumer"

// validateCommit checks an OffsetCommit's generation and member against
// the group, as Kafka's classic groups do.
func (g *Group) validateCommit(r *CommitRequest) error {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	if g.consumer != nil {
		return g.consumer.validateCommit(r.MemberID, r.Generation, false, r.UnknownGroupIsNotFound)
	}
	if g.share != nil {
		return kerr.GroupIDNotFound // share groups commit no offsets
	}
	if g.streams != nil {
		return g.streams.validateCommit(r.MemberID, r.Generation, false)
	}
	if r.Generation < 0 && g.state == Empty {
		// Outside group management (an admin client, a consumer that
		// assigns itself): allowed while the group has no members.
		return nil
	}
	if r.Generation >= 0 || r.MemberID != "" || r.InstanceID != "" {
		if err := g.validateMember(r.MemberID, r.InstanceID); err != nil {
			return err
		}
		if r.Generation != g.generation {
			return kerr.IllegalGeneration
		}
	} else if g.state != Empty {
		return kerr.UnknownMemberID
	}
	if g.state == CompletingRebalance {
		// The member has its generation but not its assignment yet.
		return kerr.RebalanceInProgress
	}
	return nil
}

// setOffset records a committed offset (once stored).
func (g *Group) setOffset(tp TopicPartition, o Offset) { g.offsets[tp] = o }

// HasOffsets reports whether the group holds committed offsets.
func (g *Group) HasOffsets() bool { return len(g.offsets) > 0 }

// Offsets returns the group's committed offsets, as a copy.
func (g *Group) Offsets() map[TopicPartition]Offset {
	out := make(map[TopicPartition]Offset, len(g.offsets))
	for tp, o := range g.offsets {
		out[tp] = o
	}
	return out
}

// sortedPartitions lists the partitions with offsets, by topic and
// partition.
func (g *Group) sortedPartitions() []TopicPartition {
	tps := make([]TopicPartition, 0, len(g.offsets))
	for tp := range g.offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return tps
}

// fetchOffsets answers an OffsetFetch: the partitions asked, or every
// partition with an offset when topics is nil. A partition without an
// offset gets -1; with requireStable, a partition with offsets of an open
// transaction gets UNSTABLE_OFFSET_COMMIT (KIP-447), in either form.
func (g *Group) fetchOffsets(topics []FetchTopic, requireStable bool) []FetchedTopic {
	fetched := func(tp TopicPartition) FetchedPartition {
		fp := FetchedPartition{Partition: tp.Partition, Offset: -1, LeaderEpoch: -1}
		if requireStable && g.hasTxnOffset(tp) {
			fp.Err = kerr.UnstableOffsetCommit
			return fp
		}
		if o, ok := g.offsets[tp]; ok {
			fp.Offset, fp.LeaderEpoch, fp.Metadata = o.Offset, o.LeaderEpoch, o.Metadata
		}
		return fp
	}
	if topics == nil {
		var out []FetchedTopic
		for _, tp := range g.sortedPartitions() {
			if n := len(out); n == 0 || out[n-1].Topic != tp.Topic {
				out = append(out, FetchedTopic{Topic: tp.Topic})
			}
			t := &out[len(out)-1]
			t.Partitions = append(t.Partitions, fetched(tp))
		}
		return out
	}
	out := make([]FetchedTopic, len(topics))
	for i, t := range topics {
		out[i] = FetchedTopic{Topic: t.Topic, Partitions: make([]FetchedPartition, len(t.Partitions))}
		for j, p := range t.Partitions {
			out[i].Partitions[j] = fetched(TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	return out
}

// subscribedTopics are the topics the members of a consumer group
// subscribe to, from their metadata for the group's protocol; ok is false
// when they are unknown (not a consumer group, or undecodable metadata).
func (g *Group) subscribedTopics() (topics map[string]bool, ok bool) {
	if g.consumer != nil {
		return g.consumer.subscribedNames(noTopics{}), true
	}
	if g.streams != nil {
		return g.streams.sourceTopicNames(), true
	}
	if g.protocolType != consumerProtocolType {
		return nil, false
	}
	topics = map[string]bool{}
	if len(g.members) == 0 {
		return topics, true
	}
	if g.protocol == "" {
		return nil, false
	}
	for _, m := range g.order {
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(m.metadataFor(g.protocol)); err != nil {
			return nil, false
		}
		for _, t := range meta.Topics {
			topics[t] = true
		}
	}
	return topics, true
}

// expireOffsets drops the offsets past retention (ms) and returns them:
// all of an empty group's once retention passed since it became empty
// (since each commit for a group only used for offsets), and those of
// topics a stable consumer group no longer subscribes to since their
// commit. An offset committed with a retention time expires at it.
func (g *Group) expireOffsets(now, retention int64) []TopicPartition {
	var base func(o Offset) int64
	var subscribed map[string]bool
	switch {
	case g.consumer != nil || g.streams != nil:
		// Consumer and streams groups: from each commit, except for topics the
		// members subscribe to.
		subscribed, _ = g.subscribedTopics()
		base = func(o Offset) int64 { return o.CommitTime }
	case g.protocolType != "" && g.state == Empty:
		base = func(o Offset) int64 {
			if g.stateTime > 0 {
				return g.stateTime
			}
			return o.CommitTime
		}
	case g.protocolType == consumerProtocolType && g.state == Stable:
		topics, ok := g.subscribedTopics()
		if !ok {
			return nil
		}
		subscribed = topics
		base = func(o Offset) int64 { return o.CommitTime }
	case g.protocolType == "":
		base = func(o Offset) int64 { return o.CommitTime }
	default:
		return nil
	}
	var expired []TopicPartition
	for _, tp := range g.sortedPartitions() {
		o := g.offsets[tp]
		if subscribed[tp.Topic] || g.hasTxnOffset(tp) {
			// An offset an open transaction may replace is kept until
			// the transaction ends.
			continue
		}
		if (o.ExpireTime >= 0 && now >= o.ExpireTime) || (o.ExpireTime < 0 && now-base(o) >= retention) {
			delete(g.offsets, tp)
			expired = append(expired, tp)
		}
	}
	return expired
}

// validateDeleteOffsets checks an OffsetDelete against the group.
func (g *Group) validateDeleteOffsets() error {
	switch {
	case g.state == Dead:
		return kerr.GroupIDNotFound
	case g.consumer == nil && g.streams == nil && g.state != Empty && g.protocolType != consumerProtocolType:
		return kerr.NonEmptyGroup
	}
	return nil
}

// subscribedTo reports whether the group's members consume topic, so its
// offsets may not be deleted.
func (g *Group) subscribedTo(topic string) bool {
	if g.State() == Empty {
		return false
	}
	topics, ok := g.subscribedTopics()
	return ok && topics[topic]
}

// validateDelete checks a DeleteGroups against the group.
func (g *Group) validateDelete() error {
	switch g.State() {
	case Dead:
		return kerr.GroupIDNotFound
	case Empty:
		return nil
	}
	return kerr.NonEmptyGroup
}

// deletable reports whether the offsets expiry may delete the group: empty,
// no offsets (committed or in an open transaction), nobody about to join.
func (g *Group) deletable() bool {
	// A share group's progress is not in its offsets (it is the share
	// partitions' state): it lives until deleted, as in Kafka.
	return g.share == nil && g.State() == Empty && len(g.offsets) == 0 && len(g.txnOffsets) == 0 && len(g.pending) == 0
}

// markDead ends the group: deleted, expired or unloaded. Waiting requests
// are answered with err.
func (g *Group) markDead(now int64, err error) {
	for _, m := range g.order {
		g.invokeJoin(m, joinError(err, m.id))
		g.invokeSync(m, SyncResult{Err: err})
		m.deadline = 0
	}
	clear(g.pending)
	g.join.deadline, g.syncDeadline = 0, 0
	g.transition(now, Dead)
}
