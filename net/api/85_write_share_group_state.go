package api

// WriteShareGroupState: v0-v1 (KIP-932, inter-broker; v1 adds the
// delivery-complete count, which kzero's snapshots do not keep). A share
// partition leader on another broker saves a share partition's state on
// this broker's share coordinator (coord/share.Store): a ShareSnapshot
// record on __share_group_state, answered once committed. A write with an
// older leader epoch or state epoch than the saved state's is fenced
// (FENCED_LEADER_EPOCH, FENCED_STATE_EPOCH), so a deposed leader cannot
// overwrite its successor's progress; a state partition another broker
// leads answers NOT_COORDINATOR, one loading
// COORDINATOR_LOAD_IN_PROGRESS. It needs CLUSTER_ACTION on the cluster.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/share"
	"kzero/net/server"
)

func init() {
	register(kmsg.WriteShareGroupState.Int16(), 0, 1, (*Handler).writeShareGroupState)
}

func (h *Handler) writeShareGroupState(req *server.Request) error {
	r := kmsg.NewPtrWriteShareGroupStateRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrWriteShareGroupStateResponse()
	gate := h.shareStateGate(req)
	for _, t := range r.Topics {
		rt := kmsg.NewWriteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
			rp.Partition = p.Partition
			if rp.ErrorCode = gate.precheck(r.GroupID, p.Partition, p.StartOffset >= -1 && validStateBatches(p.StateBatches)); rp.ErrorCode == 0 {
				snap := share.Snapshot{StateEpoch: p.StateEpoch, LeaderEpoch: p.LeaderEpoch, StartOffset: p.StartOffset}
				for _, b := range p.StateBatches {
					snap.Batches = append(snap.Batches, share.StateBatch{First: b.FirstOffset, Last: b.LastOffset, State: b.DeliveryState, Count: b.DeliveryCount})
				}
				err := gate.st.WriteFenced(share.Key{Group: r.GroupID, Topic: t.TopicID, Partition: p.Partition}, snap)
				rp.ErrorCode, rp.ErrorMessage = errCode(err), errMessage(err)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}

// validStateBatches: every batch's offsets ordered and not negative.
func validStateBatches(bs []kmsg.WriteShareGroupStateRequestTopicPartitionStateBatch) bool {
	for _, b := range bs {
		if b.FirstOffset > b.LastOffset || b.FirstOffset < 0 {
			return false
		}
	}
	return true
}
