package api

// ReadShareGroupStateSummary: v0-v1 (KIP-932, inter-broker; v1 adds the
// delivery-complete count, KIP-1226). A share group's coordinator reads
// the summary of share partitions' state on this broker's share
// coordinator (coord/share.Store) for DescribeShareGroupOffsets: the state
// epoch, leader epoch and share-partition start offset, and the offsets
// from it whose delivery is complete. A share partition without saved
// state answers start offset -1 and epochs 0, no error. As Kafka's share
// coordinator: an empty group id or a negative partition answers
// INVALID_REQUEST, a topic id or partition the metadata does not know
// UNKNOWN_TOPIC_OR_PARTITION, a state partition another broker leads
// NOT_COORDINATOR, one loading COORDINATOR_LOAD_IN_PROGRESS. It needs
// CLUSTER_ACTION on the cluster.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/share"
	"kzero/net/server"
)

func init() {
	register(kmsg.ReadShareGroupStateSummary.Int16(), 0, 1, (*Handler).readShareGroupStateSummary)
}

func (h *Handler) readShareGroupStateSummary(req *server.Request) error {
	r := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrReadShareGroupStateSummaryResponse()
	gate := h.shareStateGate(req)
	for _, t := range r.Topics {
		rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateSummaryResponseTopicPartition()
			rp.Partition, rp.StartOffset = p.Partition, -1
			if rp.ErrorCode = gate.precheck(r.GroupID, p.Partition, true); rp.ErrorCode == 0 {
				k := share.Key{Group: r.GroupID, Topic: t.TopicID, Partition: p.Partition}
				err := h.shareStateCheck(gate.st, k)
				var sum share.Summary
				if err == nil {
					sum, err = gate.st.Summary(k)
				}
				switch {
				case err != nil:
					rp.ErrorCode, rp.ErrorMessage = errCode(err), errMessage(err)
				default:
					rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset = sum.StateEpoch, sum.LeaderEpoch, sum.StartOffset
					if sum.StartOffset >= 0 {
						rp.DeliveryCompleteCount = sum.DeliveryComplete
					}
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}
