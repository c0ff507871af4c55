package api

// DeleteShareGroupState: v0 (KIP-932, inter-broker). The coordinator of
// a share group deleting its share partitions' state (DeleteGroups,
// DeleteShareGroupOffsets) asks the share coordinator of each, the leader
// of its __share_group_state partition, to delete it: a tombstone on that
// partition. A share partition with no saved state is no error; a state
// partition another broker leads answers NOT_COORDINATOR, one loading
// COORDINATOR_LOAD_IN_PROGRESS. It needs CLUSTER_ACTION on the cluster.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/share"
	"kzero/net/server"
)

func init() {
	register(kmsg.DeleteShareGroupState.Int16(), 0, 0, (*Handler).deleteShareGroupStateReq)
}

func (h *Handler) deleteShareGroupStateReq(req *server.Request) error {
	r := kmsg.NewPtrDeleteShareGroupStateRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDeleteShareGroupStateResponse()
	gate := h.shareStateGate(req)
	for _, t := range r.Topics {
		rt := kmsg.NewDeleteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteShareGroupStateResponseTopicPartition()
			rp.Partition = p.Partition
			if rp.ErrorCode = gate.precheck(r.GroupID, p.Partition, true); rp.ErrorCode == 0 {
				err := gate.st.DeleteChecked(share.Key{Group: r.GroupID, Topic: t.TopicID, Partition: p.Partition})
				rp.ErrorCode, rp.ErrorMessage = errCode(err), errMessage(err)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}
