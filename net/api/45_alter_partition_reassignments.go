package api

// AlterPartitionReassignments: v0-v1 (flexible). KIP-455: per partition,
// target replicas start (or replace) a reassignment, null replicas cancel
// the one in progress; v1 adds AllowReplicationFactorChange (KIP-860,
// Kafka 4.1), echoed in the response: false refuses a target that changes
// the partition's replication factor (INVALID_REPLICATION_FACTOR). Errors
// per partition: UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT
// (empty target, a broker twice, an unregistered broker, a cancellation
// that needs an unclean election the topic does not allow),
// NO_REASSIGNMENT_IN_PROGRESS. The reassignment completes once the ISR
// holds every target replica; ListPartitionReassignments shows it until
// then. Any node serves it (the decision goes to the quorum leader).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/net/server"
)

func init() {
	register(kmsg.AlterPartitionAssignments.Int16(), 0, 1, (*Handler).alterPartitionReassignments)
}

func (h *Handler) alterPartitionReassignments(req *server.Request) error {
	r := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	topics := make([]coord.ReassignTopic, len(r.Topics))
	for i, t := range r.Topics {
		topics[i].Topic = t.Topic
		for _, p := range t.Partitions {
			topics[i].Partitions = append(topics[i].Partitions, coord.ReassignPartition{Partition: p.Partition, Replicas: p.Replicas})
		}
	}
	allowRF := r.Version < 1 || r.AllowReplicationFactorChange
	ctx, cancel := context.WithTimeout(context.Background(), timeout(r.TimeoutMillis))
	defer cancel()
	results := h.cluster.AlterPartitionReassignments(ctx, topics, !allowRF)
	resp := kmsg.NewPtrAlterPartitionAssignmentsResponse()
	resp.AllowReplicationFactorChange = allowRF
	for _, t := range results {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition = p.Partition
			if p.Err != nil {
				rp.ErrorCode = errCode(p.Err)
				msg := p.Message
				if msg == "" {
					msg = kerrOf(p.Err).Description
				}
				rp.ErrorMessage = &msg
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}
