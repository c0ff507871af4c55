package coord

import (
	"context"

	"kzero/coord/control"
	"kzero/coord/metadata"
)

// ReassignTopic is one topic of an AlterPartitionReassignments request.
type ReassignTopic struct {
	Topic      string
	Partitions []ReassignPartition
}

// ReassignPartition is one partition's target replicas; nil cancels the
// reassignment in progress.
type ReassignPartition struct {
	Partition int32
	Replicas  []int32
}

// AlterPartitionReassignments starts, replaces or cancels partition
// reassignments (KIP-455) as coord/control decides them: the target's new
// replicas join the assignment as adding, the leaving ones are marked
// removing, and the reassignment completes when the ISR holds every target
// replica (the partition leader's ISR change, AlterPartition, completes
// it). A reorder, or a target whose replicas are all in the ISR already,
// completes at once. keepRF refuses targets that change a partition's
// replication factor (v1's AllowReplicationFactorChange false, KIP-860).
// The answer has one TopicResults per requested topic, in request order.
func (c *Controller) AlterPartitionReassignments(ctx context.Context, topics []ReassignTopic, keepRF bool) []TopicResults {
	var rs []control.Reassignment
	names := make([]string, len(topics))
	counts := make([]int, len(topics))
	for i, t := range topics {
		names[i], counts[i] = t.Topic, len(t.Partitions)
		for _, p := range t.Partitions {
			rs = append(rs, control.Reassignment{Topic: t.Topic, Partition: p.Partition, Replicas: p.Replicas, KeepReplicationFactor: keepRF})
		}
	}
	_ = c.caughtUp(ctx) // without a reachable quorum leader: decide on this node's image
	ctl := control.New(c.controlConfig())
	groups, results := ctl.AlterReassignments(c.Image(), rs)
	c.settle(ctx, groups, results, func(img *metadata.Image, idx []int) ([][]metadata.Record, []control.PartitionResult) {
		sub := make([]control.Reassignment, len(idx))
		for j, i := range idx {
			sub[j] = rs[i]
		}
		return ctl.AlterReassignments(img, sub)
	})
	return topicResults(names, counts, results)
}

// ListPartitionReassignments returns the reassignments in progress among
// the named partitions, or all of them when partitions is nil; unknown
// topics and partitions are left out, as Kafka does. It reads this node's
// image once caught up with the quorum's commit index (a read barrier), so
// a follower answers as the quorum leader would; without a reachable
// leader it answers from the image it has.
func (c *Controller) ListPartitionReassignments(ctx context.Context, partitions []control.TopicPartitions) []control.Ongoing {
	_ = c.caughtUp(ctx) // without a reachable quorum leader: this node's image
	return control.ListReassignments(c.Image(), partitions)
}
