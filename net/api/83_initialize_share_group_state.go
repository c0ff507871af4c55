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
	gate := h.shareStateGate(req)
	for _, t := range r.Topics {
		rt := kmsg.NewInitializeShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
			rp.Partition = p.Partition
			if rp.ErrorCode = gate.precheck(r.GroupID, p.Partition, p.StartOffset >= -1); rp.ErrorCode == 0 {
				k := share.Key{Group: r.GroupID, Topic: t.TopicID, Partition: p.Partition}
				err := h.shareStateCheck(gate.st, k)
				if err == nil {
					err = gate.st.Initialize(k, p.StateEpoch, p.StartOffset)
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

// shareStateGate is what the share coordinator's APIs (83-87) check
// before any share partition: the caller's CLUSTER_ACTION on the cluster
// and this broker's share coordinator.
type shareStateGate struct {
	denied bool
	st     *share.Store // nil: no share coordinator here
}

func (h *Handler) shareStateGate(req *server.Request) shareStateGate {
	return shareStateGate{denied: !h.authorized(req, opClusterAct, resCluster, clusterName), st: h.shares.Store()}
}

// precheck is the error code of a share partition's entry before its
// state is looked at, or 0, in Kafka's order: CLUSTER_AUTHORIZATION_FAILED,
// INVALID_REQUEST for an empty group id, a negative partition or
// arguments the API refuses (!valid), NOT_COORDINATOR when this broker
// has no share coordinator.
func (g shareStateGate) precheck(group string, partition int32, valid bool) int16 {
	switch {
	case g.denied:
		return kerr.ClusterAuthorizationFailed.Code
	case group == "" || partition < 0 || !valid:
		return kerr.InvalidRequest.Code
	case g.st == nil:
		return kerr.NotCoordinator.Code
	}
	return 0
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
