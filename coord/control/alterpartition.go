package control

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
)

// AlterPartition is an AlterPartition request (v2+: topics by id; v3:
// ISR members with their broker epochs, KIP-903), the ISR change a
// partition leader asks for.
type AlterPartition struct {
	Broker      int32 // the leader asking
	BrokerEpoch int64
	Topics      []AlterPartitionTopic
}

// AlterPartitionTopic is one topic of an AlterPartition request.
type AlterPartitionTopic struct {
	TopicID    [16]byte
	Partitions []ISRChange
}

// ISRChange is one partition of an AlterPartition request.
type ISRChange struct {
	Partition      int32
	LeaderEpoch    int32
	PartitionEpoch int32
	NewISR         []ISRMember
	LeaderRecovery metadata.LeaderRecovery
}

// ISRMember is one member of a requested ISR. Epoch -1 skips the broker
// epoch check (requests before v3 carry no epochs).
type ISRMember struct {
	Broker int32
	Epoch  int64
}

// AlterPartitionReply answers an AlterPartition request.
type AlterPartitionReply struct {
	Err    error // STALE_BROKER_EPOCH for the whole request; nil otherwise
	Topics []AlterPartitionTopicReply
}

// AlterPartitionTopicReply is one topic of an AlterPartitionReply.
type AlterPartitionTopicReply struct {
	TopicID    [16]byte
	Partitions []ISRResult
}

// ISRResult is one partition of an AlterPartitionReply: an error, or the
// partition's state after the change.
type ISRResult struct {
	Partition      int32
	Err            error
	Message        string
	Leader         int32
	LeaderEpoch    int32
	ISR            []int32
	PartitionEpoch int32
	LeaderRecovery metadata.LeaderRecovery
	// Group is the index of the group carrying this partition's change, -1
	// when nothing changes. If that group does not apply (the partition
	// changed since the image this was decided on), answer its Rejection
	// (INVALID_UPDATE_VERSION): the leader retries with fresh state.
	Group int
}

// AlterPartition decides an AlterPartition request with Kafka 4.x's
// checks, in Kafka's order: the sender's broker epoch
// (STALE_BROKER_EPOCH, for the whole request); per topic, a known topic id
// (UNKNOWN_TOPIC_ID); per partition, a known partition
// (UNKNOWN_TOPIC_OR_PARTITION), epochs not ahead of the controller's
// (NOT_CONTROLLER: the sender saw a newer controller), the leader epoch
// (FENCED_LEADER_EPOCH), the sender leads (INVALID_REQUEST, as Kafka
// answers), the partition epoch (INVALID_UPDATE_VERSION), an ISR of
// distinct replicas holding the leader (INVALID_REQUEST), a recovering
// leader's ISR of itself alone and no step back from recovered to
// recovering (INVALID_REQUEST), and every ISR member registered, unfenced,
// not shutting down and of the stated broker epoch (INELIGIBLE_REPLICA).
//
// Each accepted change is one group. An ISR change bumps the partition
// epoch and not the leader epoch. If the new ISR completes a reassignment
// that removes the leader, a new leader is elected and the sender gets
// NEW_LEADER_ELECTED, with the change still made (Kafka's behaviour).
func (c *Controller) AlterPartition(img *metadata.Image, r AlterPartition) ([][]metadata.Record, AlterPartitionReply) {
	v := newView(img)
	if b := v.broker(r.Broker); b == nil || b.Epoch != r.BrokerEpoch {
		return nil, AlterPartitionReply{Err: kerr.StaleBrokerEpoch}
	}
	reply := AlterPartitionReply{Topics: make([]AlterPartitionTopicReply, len(r.Topics))}
	for i, rt := range r.Topics {
		tr := &reply.Topics[i]
		tr.TopicID = rt.TopicID
		tr.Partitions = make([]ISRResult, len(rt.Partitions))
		t := img.TopicByID(rt.TopicID)
		for j, rp := range rt.Partitions {
			res := &tr.Partitions[j]
			res.Partition, res.Group = rp.Partition, -1
			if t == nil {
				res.Err = kerr.UnknownTopicID
				continue
			}
			c.alterISR(v, t, r.Broker, rp, res)
		}
	}
	return v.groups, reply
}

func (c *Controller) alterISR(v *view, t *metadata.Topic, sender int32, rp ISRChange, res *ISRResult) {
	p, ok := v.partition(t, rp.Partition)
	fail := func(err error, format string, args ...any) {
		res.Err, res.Message = err, fmt.Sprintf(format, args...)
	}
	switch {
	case !ok:
		fail(kerr.UnknownTopicOrPartition, "unknown partition %s-%d", t.Name, rp.Partition)
		return
	case rp.LeaderEpoch > p.LeaderEpoch || rp.PartitionEpoch > p.PartitionEpoch:
		fail(kerr.NotController, "the partition is at leader epoch %d, partition epoch %d here", p.LeaderEpoch, p.PartitionEpoch)
		return
	case rp.LeaderEpoch < p.LeaderEpoch:
		fail(kerr.FencedLeaderEpoch, "the current leader epoch is %d, not %d", p.LeaderEpoch, rp.LeaderEpoch)
		return
	case sender != p.Leader:
		fail(kerr.InvalidRequest, "the current leader is %d", p.Leader)
		return
	case rp.PartitionEpoch < p.PartitionEpoch:
		fail(kerr.InvalidUpdateVersion, "the current partition epoch is %d, not %d", p.PartitionEpoch, rp.PartitionEpoch)
		return
	}
	isr := make([]int32, len(rp.NewISR))
	for i, m := range rp.NewISR {
		isr[i] = m.Broker
	}
	switch {
	case len(isr) == 0 || hasDup(isr) || !containsAll(p.Replicas, isr):
		fail(kerr.InvalidRequest, "invalid ISR %v for replicas %v", isr, p.Replicas)
		return
	case !slices.Contains(isr, p.Leader):
		fail(kerr.InvalidRequest, "the ISR %v does not hold the leader %d", isr, p.Leader)
		return
	case rp.LeaderRecovery != metadata.Recovered && rp.LeaderRecovery != metadata.Recovering:
		fail(kerr.InvalidRequest, "leader recovery state %d", rp.LeaderRecovery)
		return
	case rp.LeaderRecovery == metadata.Recovering && len(isr) > 1:
		fail(kerr.InvalidRequest, "the ISR %v has more than the leader while it recovers from an unclean election", isr)
		return
	case p.LeaderRecovery == metadata.Recovered && rp.LeaderRecovery == metadata.Recovering:
		fail(kerr.InvalidRequest, "the leader recovery state cannot go from recovered to recovering")
		return
	}
	for _, m := range rp.NewISR {
		b := v.broker(m.Broker)
		var why string
		switch {
		case b == nil:
			why = "not registered"
		case b.InControlledShutdown:
			why = "shutting down"
		case b.Fenced:
			why = "fenced"
		case m.Epoch != -1 && m.Epoch != b.Epoch:
			why = fmt.Sprintf("broker epoch %d, not %d", b.Epoch, m.Epoch)
		}
		if why != "" {
			fail(kerr.IneligibleReplica, "replica %d is ineligible for the ISR: %s", m.Broker, why)
			return
		}
	}
	ch := c.change(v, t, p, v.active)
	ch.isr, ch.recovery = isr, rp.LeaderRecovery
	if c.cfg.Unclean(v.img, t) {
		ch.election = electUnclean
	}
	if rec := ch.build(t.ID); rec != nil {
		res.Group = v.emit(v.add(nil, rec))
		p, _ = v.partition(t, rp.Partition)
		if rec.Leader != metadata.NoLeaderChange && rec.Leader != sender {
			fail(kerr.NewLeaderElected, "the change completed a reassignment and elected leader %d", rec.Leader)
			return
		}
	}
	res.Leader, res.LeaderEpoch, res.ISR, res.PartitionEpoch, res.LeaderRecovery = p.Leader, p.LeaderEpoch, p.ISR, p.PartitionEpoch, p.LeaderRecovery
}

func hasDup(a []int32) bool {
	for i, x := range a {
		if slices.Contains(a[i+1:], x) {
			return true
		}
	}
	return false
}
