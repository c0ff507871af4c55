package api

// ListPartitionReassignments: v0 (flexible). KIP-455: the reassignments in
// progress, each partition's replicas (the target and the leaving ones)
// and its adding and removing replicas; a null topic list lists all.
// Unknown topics and partitions, and partitions not being reassigned, are
// left out, as Kafka does. Any node answers as the quorum leader would: it
// first catches up with the quorum's commit index.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/control"
	"kzero/net/server"
)

func init() {
	register(kmsg.ListPartitionReassignments.Int16(), 0, 0, (*Handler).listPartitionReassignments)
}

func (h *Handler) listPartitionReassignments(req *server.Request) error {
	r := kmsg.NewPtrListPartitionReassignmentsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	var partitions []control.TopicPartitions
	if r.Topics != nil {
		partitions = make([]control.TopicPartitions, len(r.Topics))
		for i, t := range r.Topics {
			partitions[i] = control.TopicPartitions{Topic: t.Topic, Partitions: t.Partitions}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout(r.TimeoutMillis))
	defer cancel()
	resp := kmsg.NewPtrListPartitionReassignmentsResponse()
	for _, o := range h.cluster.ListPartitionReassignments(ctx, partitions) {
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != o.Topic {
			rt := kmsg.NewListPartitionReassignmentsResponseTopic()
			rt.Topic = o.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rt := &resp.Topics[len(resp.Topics)-1]
		rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		rp.Partition, rp.Replicas, rp.AddingReplicas, rp.RemovingReplicas = o.Partition, o.Replicas, o.AddingReplicas, o.RemovingReplicas
		rt.Partitions = append(rt.Partitions, rp)
	}
	respond(req, resp)
	return nil
}
