package api

// ReadShareGroupState: v0 (KIP-932, inter-broker). A share partition
// leader on another broker reads the saved state of share partitions
// whose __share_group_state partition this broker leads (coord/share.Store,
// the share coordinator): the state epoch, the share-partition start
// offset and the in-flight state batches. A share partition with no saved
// state answers start offset -1 and no batches, no error (the reader
// starts it at share.auto.offset.reset). A reader whose leader epoch is
// older than the saved state's is fenced (FENCED_LEADER_EPOCH); a state
// partition another broker leads answers NOT_COORDINATOR, one loading
// COORDINATOR_LOAD_IN_PROGRESS. It needs CLUSTER_ACTION on the cluster, as
// Kafka's share coordinator APIs do.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/share"
	"kzero/net/server"
)

func init() {
	register(kmsg.ReadShareGroupState.Int16(), 0, 0, (*Handler).readShareGroupState)
}

func (h *Handler) readShareGroupState(req *server.Request) error {
	r := kmsg.NewPtrReadShareGroupStateRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrReadShareGroupStateResponse()
	gate := h.shareStateGate(req)
	for _, t := range r.Topics {
		rt := kmsg.NewReadShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
			rp.Partition, rp.StartOffset = p.Partition, -1
			if rp.ErrorCode = gate.precheck(r.GroupID, p.Partition, true); rp.ErrorCode == 0 {
				snap, found, err := gate.st.ReadFenced(share.Key{Group: r.GroupID, Topic: t.TopicID, Partition: p.Partition}, p.LeaderEpoch)
				switch {
				case err != nil:
					rp.ErrorCode, rp.ErrorMessage = errCode(err), errMessage(err)
				case found:
					rp.StateEpoch, rp.StartOffset = snap.StateEpoch, snap.StartOffset
					for _, b := range snap.Batches {
						rb := kmsg.NewReadShareGroupStateResponseTopicPartitionStateBatch()
						rb.FirstOffset, rb.LastOffset, rb.DeliveryState, rb.DeliveryCount = b.First, b.Last, b.State, b.Count
						rp.StateBatches = append(rp.StateBatches, rb)
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
