package api

// ShareGroupHeartbeat: v1 (KIP-932, share groups; v0 was Kafka 4.0's early
// access and is gone). A member names itself, joins with epoch 0 and its
// subscribed topic names, heartbeats every group.share.heartbeat.interval.ms
// and leaves with epoch -1; the coordinator assigns partitions with the
// simple assignor (a partition may go to several members) and sends a
// member its assignment when it changes. Errors: FENCED_MEMBER_EPOCH,
// UNKNOWN_MEMBER_ID, GROUP_MAX_SIZE_REACHED, INVALID_REQUEST,
// GROUP_ID_NOT_FOUND (a group of another type), the coordinator errors;
// READ on the group, else GROUP_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/net/server"
)

func init() {
	register(kmsg.ShareGroupHeartbeat.Int16(), 1, 1, (*Handler).shareGroupHeartbeat)
}

func (h *Handler) shareGroupHeartbeat(req *server.Request) error {
	r := kmsg.NewPtrShareGroupHeartbeatRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrShareGroupHeartbeatResponse()
	if !h.authorized(req, opRead, resGroup, r.GroupID) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		respond(req, resp)
		return nil
	}
	res := h.groups.ShareGroupHeartbeat(&group.ShareHeartbeatRequest{
		Group:                r.GroupID,
		MemberID:             r.MemberID,
		MemberEpoch:          r.MemberEpoch,
		RackID:               r.RackID,
		SubscribedTopicNames: r.SubscribedTopicNames,
		ClientID:             string(req.Header.ClientID),
		ClientHost:           clientHost(req),
		Configs:              h.cluster.Image().GroupConfigs(r.GroupID),
	})
	resp.ErrorCode = errCode(res.Err)
	if res.ErrMessage != "" {
		msg := res.ErrMessage
		resp.ErrorMessage = &msg
	}
	if res.MemberID != "" {
		id := res.MemberID
		resp.MemberID = &id
	}
	resp.MemberEpoch = res.MemberEpoch
	resp.HeartbeatIntervalMillis = res.HeartbeatInterval
	if res.HasAssignment {
		a := kmsg.NewShareGroupHeartbeatResponseAssignment()
		a.TopicPartitions = make([]kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition, len(res.Assignment))
		for i, t := range res.Assignment {
			rt := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
			rt.TopicID, rt.Partitions = t.TopicID, t.Partitions
			a.TopicPartitions[i] = rt
		}
		resp.Assignment = &a
	}
	respond(req, resp)
	return nil
}
