package api

// InitializeShareGroupState: v0 (KIP-932, inter-broker). A share group's
// coordinator starts share partitions' state afresh on this broker's
// share coordinator (coord/share.Store), the leader of their
// __share_group_state partitions: a ShareSnapshot record with the state
// epoch and start offset given (-1: the share partition leader starts it
// at share.auto.offset.reset) and nothing in flight, answered once
// committed. AlterShareGroupOffsets sends it with a newer state epoch, so
// the share partition leader's next write is fenced and it reads the
// state again. As Kafka's share coordinator: a state epoch older than the
// saved one answers FENCED_STATE_EPOCH, an empty group id or a negative
// partition INVALID_REQUEST, a topic id or partition the metadata does not
// know UNKNOWN_TOPIC_OR_PARTITION, a state partition another broker leads
// NOT_COORDINATOR, one loading COORDINATOR_LOAD_IN_PROGRESS. It needs
// CLUSTER_ACTION on the cluster.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/share"
	"kzero/net/server"
)

func init() {
	register(kmsg.InitializeShareGroupState.Int16(), 0, 0, (*Handler).initializeShareGroupState)
}

func (h *Handler) initializeShareGroupState(req *server.Request) error {
	r := kmsg.NewPtrInitializeShareGroupStateRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrInitializeShareGroupStateResponse()
	denied := !h.authorized(req, opClusterAct, resCluster, clusterName)
	st := h.shares.Store()
	for _, t := range r.Topics {
		rt := kmsg.NewInitializeShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case denied:
				rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			case r.GroupID == "" || p.Partition < 0 || p.StartOffset < -1:
				rp.ErrorCode = kerr.InvalidRequest.Code
			case st == nil:
				rp.ErrorCode = kerr.NotCoordinator.Code
			default:
				k := share.Key{Group: r.GroupID, Topic: t.TopicID, Partition: p.Partition}
				err := h.shareStateCheck(st, k)
				if err == nil {
					err = st.Initialize(k, p.StateEpoch, p.StartOffset)
				}
				rp.ErrorCode, rp.ErrorMessage = errCode(err), errMessage(err)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}

// shareStateCheck is the share coordinator's answer before it looks at
// k's state, in Kafka's order: NOT_COORDINATOR or
// COORDINATOR_LOAD_IN_PROGRESS for a state partition it does not serve,
// then UNKNOWN_TOPIC_OR_PARTITION for a topic id or partition the
// metadata image does not know.
func (h *Handler) shareStateCheck(st *share.Store, k share.Key) error {
	if err := st.Serves(k); err != nil {
		return err
	}
	t := h.cluster.Image().TopicByID(k.Topic)
	if t == nil || int(k.Partition) >= len(t.Partitions) {
		return kerr.UnknownTopicOrPartition
	}
	return nil
}
