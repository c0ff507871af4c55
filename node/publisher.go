package node

import (
	"slices"
	"strconv"

	"kzero/coord/group"
	"kzero/coord/metadata"
	"kzero/coord/share"
	"kzero/coord/txn"
	"kzero/log"
	"kzero/replica"
)

// applyImage makes the local replicas follow the metadata, for each
// partition with a replica here:
//   - become leader (this node is the leader): open the log, lead at the
//     leader epoch with the ISR; a new ISR or partition epoch of the same
//     leadership is taken as it comes (the leader asked for it);
//   - become follower (another node, or none, leads): open the log, stop
//     leading (waiting writes fail, fetches answer NOT_LEADER_OR_FOLLOWER)
//     and fetch from the leader, truncating first where the logs diverged;
//   - stop replica (the partition moved away, or its topic was deleted):
//     stop both roles; the log is deleted with its topic, kept otherwise
//     (set aside as stray at the next start).
func (n *Node) applyImage(prev, next *metadata.Image) {
	// Once the partitions are opened and removed: the group coordinator
	// loads the __consumer_offsets partitions led here.
	defer n.applyTxnImage(next)
	defer n.applyGroupImage(next)
	defer n.applyCoordinatorImage(n.shareState, share.StateTopic, next)
	// A broker fenced, unfenced or shutting down changes who may join an ISR.
	activeChanged := prev == nil || !sameActive(prev, next)
	// A change of dynamic broker configs may change every topic's log config.
	brokerChanged := prev == nil || !sameConfigs(prev.BrokerConfigs(""), next.BrokerConfigs("")) ||
		!sameConfigs(prev.BrokerConfigs(strconv.Itoa(int(n.nodeID))), next.BrokerConfigs(strconv.Itoa(int(n.nodeID))))
	if brokerChanged {
		n.applyDynamicBrokerConfigs(next)
	}
	var ineligible []int32
	for _, b := range next.Brokers() {
		if !b.Active() {
			ineligible = append(ineligible, b.ID)
		}
	}
	for _, t := range next.Topics() {
		var old *metadata.Topic
		if prev != nil {
			old = prev.Topic(t.Name)
		}
		logCfg := n.topicLogConfig(t, next)
		for _, p := range t.Partitions {
			if !slices.Contains(p.Replicas, n.nodeID) {
				continue
			}
			if !brokerChanged && !activeChanged && old != nil && old.ID == t.ID && int(p.Partition) < len(old.Partitions) &&
				samePartition(&old.Partitions[p.Partition], &p) && sameConfigs(old.Configs, t.Configs) {
				continue
			}
			tp := log.TopicPartition{Topic: t.Name, Partition: p.Partition}
			var err error
			if p.Leader == n.nodeID {
				_, err = n.replicas.MakeLeader(replica.LeaderSpec{
					TP:                tp,
					TopicID:           t.ID,
					LeaderEpoch:       p.LeaderEpoch,
					PartitionEpoch:    p.PartitionEpoch,
					Replicas:          p.Replicas,
					ISR:               p.ISR,
					Ineligible:        ineligible,
					MinInsyncReplicas: n.minInsync(t, next),
					Config:            logCfg,
				})
			} else {
				_, err = n.replicas.MakeFollower(replica.FollowerSpec{
					TP:          tp,
					TopicID:     t.ID,
					Leader:      p.Leader,
					LeaderEpoch: p.LeaderEpoch,
					Config:      logCfg,
				})
			}
			if err != nil {
				// The replica is offline: Metadata, Produce and Fetch answer
				// KAFKA_STORAGE_ERROR for it (replica.Manager.Offline).
				n.logger.Error("cannot open partition; it is offline", "topic", t.Name, "partition", p.Partition, "err", err)
			}
		}
	}
	if prev == nil {
		return
	}
	for _, t := range prev.Topics() {
		nt := next.Topic(t.Name)
		deleted := nt == nil || nt.ID != t.ID
		for _, p := range t.Partitions {
			tp := log.TopicPartition{Topic: t.Name, Partition: p.Partition}
			switch {
			case deleted:
				n.stopReplica(tp, true)
			case int(p.Partition) >= len(nt.Partitions):
				n.stopReplica(tp, false) // partitions only grow; kept if ever seen
			case !slices.Contains(nt.Partitions[p.Partition].Replicas, n.nodeID):
				n.stopReplica(tp, false) // moved away
			}
		}
	}
}

// sameActive reports whether the same brokers are active (registered,
// unfenced, not shutting down) in both images.
func sameActive(a, b *metadata.Image) bool {
	active := func(img *metadata.Image) []int32 {
		var ids []int32
		for _, br := range img.Brokers() {
			if br.Active() {
				ids = append(ids, br.ID)
			}
		}
		slices.Sort(ids)
		return ids
	}
	return slices.Equal(active(a), active(b))
}

// samePartition reports whether nothing this node's replica depends on
// changed: the leader, the epochs (the ISR moves the partition epoch) and
// the replicas.
func samePartition(a, b *metadata.Partition) bool {
	return a.Leader == b.Leader && a.LeaderEpoch == b.LeaderEpoch && a.PartitionEpoch == b.PartitionEpoch &&
		slices.Equal(a.Replicas, b.Replicas) && slices.Equal(a.ISR, b.ISR)
}

// stopReplica drops a partition from this node: its log is deleted when
// its topic was, kept otherwise (moved away, to be set aside as stray at
// the next start).
func (n *Node) stopReplica(tp log.TopicPartition, deleteLog bool) {
	if err := n.replicas.Remove(tp, deleteLog); err != nil {
		n.logger.Error("cannot remove partition", "partition", tp.String(), "err", err)
	}
}

// setAsideStrays moves aside the partition logs on disk that the metadata
// does not give this node: a topic it does not know (deleted while the node
// was down, or a metadata log that lost it), a partition it does not have,
// or another topic of the same name. Kafka calls them stray. They are
// renamed <topic>-<partition>.<id>-stray and logged, never deleted.
func (n *Node) setAsideStrays(img *metadata.Image) {
	for tp, l := range n.logs.Logs() {
		reason := ""
		t := img.Topic(tp.Topic)
		switch {
		case t == nil:
			reason = "the metadata has no such topic"
		case int(tp.Partition) >= len(t.Partitions):
			reason = "the metadata has no such partition"
		case !slices.Contains(t.Partitions[tp.Partition].Replicas, n.nodeID):
			reason = "this node is not one of its replicas"
		default:
			if id, ok, _ := log.ReadTopicID(l.Dir()); ok && id != t.ID {
				reason = "it belongs to another topic of the same name"
			}
		}
		if reason == "" {
			continue
		}
		id, _, _ := log.ReadTopicID(l.Dir())
		to, err := n.logs.SetAside(tp)
		if err != nil {
			n.logger.Error("cannot set aside a stray partition", "partition", tp.String(), "err", err)
			continue
		}
		n.logger.Warn("stray partition set aside, not deleted", "partition", tp.String(),
			"topic_id", metadata.TopicIDString(id), "reason", reason, "moved_to", to)
	}
}

func sameConfigs(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// imageTopics is a metadata image as the group coordinator resolves
// consumer group subscriptions against it.
type imageTopics struct{ img *metadata.Image }

func (t imageTopics) Version() int64 { return t.img.Offset() }

func (t imageTopics) ByName(name string) (group.TopicInfo, bool) {
	if tp := t.img.Topic(name); tp != nil {
		return topicInfo(tp), true
	}
	return group.TopicInfo{}, false
}

func (t imageTopics) ByID(id [16]byte) (group.TopicInfo, bool) {
	if tp := t.img.TopicByID(id); tp != nil {
		return topicInfo(tp), true
	}
	return group.TopicInfo{}, false
}

func (t imageTopics) All() []group.TopicInfo {
	ts := t.img.Topics()
	out := make([]group.TopicInfo, len(ts))
	for i, tp := range ts {
		out[i] = topicInfo(tp)
	}
	return out
}

func topicInfo(t *metadata.Topic) group.TopicInfo {
	return group.TopicInfo{Name: t.Name, ID: t.ID, Partitions: int32(len(t.Partitions)), Internal: t.Internal()}
}

// partitionCoordinator is what the group and transaction coordinators
// share: they lead the partitions of their internal topic this node leads.
type partitionCoordinator interface {
	SetPartitionCount(n int32)
	Lead(p *replica.Partition) <-chan struct{}
	Resign(partition int32)
	Leading() []int32
}

// applyGroupImage tells the group coordinator the topics its consumer
// groups subscribe to and which __consumer_offsets partitions this node
// leads, after applyImage opened them.
func (n *Node) applyGroupImage(next *metadata.Image) {
	n.groups.SetTopics(imageTopics{next})
	n.applyCoordinatorImage(n.groups, group.TopicName, next)
}

// applyTxnImage tells the transaction coordinator which
// __transaction_state partitions this node leads.
func (n *Node) applyTxnImage(next *metadata.Image) {
	n.applyCoordinatorImage(n.txns, txn.TopicName, next)
}

// applyCoordinatorImage makes c lead the partitions of its topic that this
// node leads and resign the others.
func (n *Node) applyCoordinatorImage(c partitionCoordinator, topic string, next *metadata.Image) {
	t := next.Topic(topic)
	if t == nil {
		for _, p := range c.Leading() {
			c.Resign(p)
		}
		return
	}
	c.SetPartitionCount(int32(len(t.Partitions)))
	for _, p := range t.Partitions {
		part, ok := n.replicas.Partition(log.TopicPartition{Topic: t.Name, Partition: p.Partition})
		if p.Leader == n.nodeID && ok {
			c.Lead(part)
			continue
		}
		c.Resign(p.Partition)
	}
}
