package control

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
)

// ElectionType is an ElectLeaders election type, Kafka's values.
type ElectionType int8

// Election types.
const (
	Preferred ElectionType = 0 // move leadership to the first replica
	Unclean   ElectionType = 1 // elect a leader for a leaderless partition, from outside the ISR if need be
)

// TopicPartitions names partitions of a topic.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// PartitionResult is the outcome of one partition of an admin request.
type PartitionResult struct {
	Topic     string
	Partition int32
	Err       error // nil: done
	Message   string
	// Group is the index of the group carrying the change, -1 if none. If
	// that group does not apply, answer its Rejection instead.
	Group int
}

// ElectLeaders decides an ElectLeaders request (KIP-460) for the named
// partitions, or every partition when partitions is nil (then the
// partitions that need no election are left out of the results, as
// Kafka does). Per partition: UNKNOWN_TOPIC_OR_PARTITION;
// ELECTION_NOT_NEEDED when the preferred replica already leads (preferred)
// or the partition has a leader (unclean); PREFERRED_LEADER_NOT_AVAILABLE
// when the preferred replica is not in the ISR or not active;
// ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is active. An unclean
// election here ignores unclean.leader.election.enable: the operator asked
// for it. An unknown type is INVALID_REQUEST for the whole request.
func (c *Controller) ElectLeaders(img *metadata.Image, typ ElectionType, partitions []TopicPartitions) ([][]metadata.Record, []PartitionResult, error) {
	if typ != Preferred && typ != Unclean {
		return nil, nil, kerr.InvalidRequest
	}
	v := newView(img)
	var results []PartitionResult
	if partitions == nil {
		for _, t := range img.Topics() {
			for p := range t.Partitions {
				r := c.electOne(v, typ, t.Name, int32(p))
				if !errors.Is(r.Err, kerr.ElectionNotNeeded) {
					results = append(results, r)
				}
			}
		}
		return v.groups, results, nil
	}
	for _, tps := range partitions {
		for _, p := range tps.Partitions {
			results = append(results, c.electOne(v, typ, tps.Topic, p))
		}
	}
	return v.groups, results, nil
}

func (c *Controller) electOne(v *view, typ ElectionType, topic string, partition int32) PartitionResult {
	r := PartitionResult{Topic: topic, Partition: partition, Group: -1}
	t := v.img.Topic(topic)
	if t == nil {
		r.Err, r.Message = kerr.UnknownTopicOrPartition, fmt.Sprintf("No such topic as %s", topic)
		return r
	}
	p, ok := v.partition(t, partition)
	if !ok {
		r.Err, r.Message = kerr.UnknownTopicOrPartition, fmt.Sprintf("No such partition as %s-%d", topic, partition)
		return r
	}
	if typ == Preferred && p.Leader == p.PreferredLeader() || typ == Unclean && p.Leader != metadata.NoLeader {
		r.Err = kerr.ElectionNotNeeded
		return r
	}
	ch := c.change(v, t, p, v.active)
	ch.election = electPreferred
	if typ == Unclean {
		ch.election = electUnclean
	}
	rec := ch.build(t.ID)
	if rec == nil {
		r.Err = kerr.PreferredLeaderNotAvailable
		if typ == Unclean {
			r.Err = kerr.EligibleLeadersNotAvailable
		}
		return r
	}
	r.Group = v.emit(v.add(nil, rec))
	return r
}
