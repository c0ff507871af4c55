package control

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
)

// Reassignment is one partition of an AlterPartitionReassignments request
// (KIP-455): its target replicas, nil to cancel the reassignment in
// progress.
type Reassignment struct {
	Topic     string
	Partition int32
	Replicas  []int32
	// KeepReplicationFactor refuses a target whose size is not the
	// partition's replication factor (KIP-860: AlterPartitionReassignments
	// v1 with AllowReplicationFactorChange false). During a reassignment
	// the replication factor is that of its target: the replicas less the
	// ones being removed.
	KeepReplicationFactor bool
}

// AlterReassignments decides an AlterPartitionReassignments request, one
// group per partition. A reassignment goes as in Kafka:
//
//  1. the assignment becomes the target replicas followed by the current
//     ones that leave, with AddingReplicas (new) and RemovingReplicas
//     (leaving) set; a target that only reorders the current replicas, or
//     whose new replicas are already in the ISR, completes at once;
//  2. the leader adds the new replicas to the ISR as they catch up
//     (AlterPartition);
//  3. the change that puts the last new replica in the ISR also completes
//     the reassignment: the leaving replicas go from the replicas and the
//     ISR, the leader epoch is bumped, and a leaving leader is replaced.
//
// A new target replaces a reassignment in progress (computed from the
// current, combined replica list). Cancelling (nil replicas) goes back to
// the replicas from before: the adding replicas leave the assignment and
// the ISR; if that would empty the ISR, the first remaining replica
// becomes the ISR, which is an unclean election and needs the topic's
// unclean.leader.election.enable.
//
// Errors per partition: UNKNOWN_TOPIC_OR_PARTITION; INVALID_REPLICA_ASSIGNMENT
// for an empty target, a broker twice or an unregistered broker, or a
// cancellation that needs an unclean election the topic does not allow;
// INVALID_REPLICATION_FACTOR for a target of another size when
// KeepReplicationFactor is set; NO_REASSIGNMENT_IN_PROGRESS for a
// cancellation without one.
func (c *Controller) AlterReassignments(img *metadata.Image, rs []Reassignment) ([][]metadata.Record, []PartitionResult) {
	v := newView(img)
	results := make([]PartitionResult, len(rs))
	for i, r := range rs {
		res := &results[i]
		res.Topic, res.Partition, res.Group = r.Topic, r.Partition, -1
		t := img.Topic(r.Topic)
		if t == nil {
			res.Err, res.Message = kerr.UnknownTopicOrPartition, fmt.Sprintf("Unable to find a topic named %s.", r.Topic)
			continue
		}
		p, ok := v.partition(t, r.Partition)
		if !ok {
			res.Err, res.Message = kerr.UnknownTopicOrPartition, fmt.Sprintf("Unable to find partition %s:%d.", r.Topic, r.Partition)
			continue
		}
		var rec *metadata.PartitionChange
		var err error
		if r.Replicas == nil {
			rec, err = c.cancelReassignment(v, t, p)
		} else {
			rec, err = c.reassign(v, t, p, r.Replicas, r.KeepReplicationFactor)
		}
		if err != nil {
			res.Err, res.Message = metadata.Split(err)
		}
		if rec != nil {
			res.Group = v.emit(v.add(nil, rec))
		}
	}
	return v.groups, results
}

func (c *Controller) reassign(v *view, t *metadata.Topic, p metadata.Partition, target []int32, keepRF bool) (*metadata.PartitionChange, error) {
	if len(target) == 0 {
		return nil, metadata.Reject(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.")
	}
	for i, b := range target {
		if v.broker(b) == nil {
			return nil, metadata.Reject(kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker %d, but no such broker is registered.", b)
		}
		if slices.Contains(target[i+1:], b) {
			return nil, metadata.Reject(kerr.InvalidReplicaAssignment, "The manual partition assignment includes the broker %d more than once.", b)
		}
	}
	if rf := len(p.Replicas) - len(p.RemovingReplicas); keepRF && len(target) != rf {
		return nil, metadata.Reject(kerr.InvalidReplicationFactor, "The replication factor is changed from %d to %d", rf, len(target))
	}
	removing := without(p.Replicas, target)
	ch := c.change(v, t, p, v.active)
	ch.replicas = append(slices.Clone(target), removing...)
	ch.adding, ch.removing = nilIfEmpty(without(target, p.Replicas)), nilIfEmpty(removing)
	return ch.build(t.ID), nil
}

func (c *Controller) cancelReassignment(v *view, t *metadata.Topic, p metadata.Partition) (*metadata.PartitionChange, error) {
	if !p.Reassigning() {
		return nil, metadata.Reject(kerr.NoReassignmentInProgress, "No partition reassignment is in progress for this topic or partition.")
	}
	replicas := without(p.Replicas, p.AddingReplicas)
	isr := without(p.ISR, p.AddingReplicas)
	unclean := c.cfg.Unclean(v.img, t)
	if len(isr) == 0 {
		if !unclean {
			return nil, metadata.Reject(kerr.InvalidReplicaAssignment, "Unable to revert partition assignment for %s:%d because it would require an unclean leader election.", t.Name, p.Partition)
		}
		isr = replicas[:1]
	}
	ch := c.change(v, t, p, v.active)
	ch.isr, ch.replicas, ch.adding, ch.removing = isr, replicas, nil, nil
	if unclean {
		ch.election = electUnclean
	}
	return ch.build(t.ID), nil
}

func nilIfEmpty(a []int32) []int32 {
	if len(a) == 0 {
		return nil
	}
	return a
}

// Ongoing is a reassignment in progress, as ListPartitionReassignments
// shows it.
type Ongoing struct {
	Topic            string
	Partition        int32
	Replicas         []int32
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// ListReassignments returns the reassignments in progress among the named
// partitions, or among all when partitions is nil; unknown topics and
// partitions are left out, as Kafka does.
func ListReassignments(img *metadata.Image, partitions []TopicPartitions) []Ongoing {
	var out []Ongoing
	add := func(t *metadata.Topic, p int32) {
		if p < 0 || int(p) >= len(t.Partitions) || !t.Partitions[p].Reassigning() {
			return
		}
		q := &t.Partitions[p]
		out = append(out, Ongoing{Topic: t.Name, Partition: p, Replicas: q.Replicas, AddingReplicas: q.AddingReplicas, RemovingReplicas: q.RemovingReplicas})
	}
	if partitions == nil {
		for _, t := range img.Topics() {
			for p := range t.Partitions {
				add(t, int32(p))
			}
		}
		return out
	}
	for _, tps := range partitions {
		if t := img.Topic(tps.Topic); t != nil {
			for _, p := range tps.Partitions {
				add(t, p)
			}
		}
	}
	return out
}
