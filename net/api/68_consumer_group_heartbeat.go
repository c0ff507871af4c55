package api

// ConsumerGroupHeartbeat: v0-v1 (KIP-848, the consumer group protocol). The
// coordinator assigns partitions itself (the "uniform" and "range"
// assignors, group.consumer.assignors): a member joins with epoch 0 and
// its subscription (topic names, or from v1 a RE2 regular expression
// matched against whole topic names), heartbeats every
// group.consumer.heartbeat.interval.ms with the partitions it owns, and
// gets its assignment as it changes; partitions move between members only
// once revoked. v0 names new members; from v1 members name themselves
// (KIP-1082). Errors: FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID,
// UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED,
// UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION, INVALID_REQUEST,
// GROUP_ID_NOT_FOUND (a classic group with members), and the coordinator
// errors.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/net/server"
)

func init() {
	register(kmsg.ConsumerGroupHeartbeat.Int16(), 0, 1, (*Handler).consumerGroupHeartbeat)
}

func (h *Handler) consumerGroupHeartbeat(req *server.Request) error {
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	hr := &group.ConsumerHeartbeatRequest{
		Version:              r.Version,
		Group:                r.Group,
		MemberID:             r.MemberID,
		MemberEpoch:          r.MemberEpoch,
		InstanceID:           r.InstanceID,
		RackID:               r.RackID,
		RebalanceTimeout:     r.RebalanceTimeoutMillis,
		SubscribedTopicNames: r.SubscribedTopicNames,
		SubscribedTopicRegex: r.SubscribedTopicRegex,
		ServerAssignor:       r.ServerAssignor,
		ClientID:             string(req.Header.ClientID),
		ClientHost:           clientHost(req),
	}
	if r.Topics != nil {
		hr.Owned = make([]group.TopicPartitions, len(r.Topics))
		for i, t := range r.Topics {
			hr.Owned[i] = group.TopicPartitions{TopicID: t.TopicID, Partitions: t.Partitions}
		}
	}
	if !h.authorized(req, opRead, resGroup, r.Group) {
		resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		respond(req, resp)
		return nil
	}
	hr.Configs = h.cluster.Image().GroupConfigs(r.Group)
	res := h.groups.ConsumerGroupHeartbeat(hr)
	resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
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
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		a.Topics = make([]kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic, len(res.Assignment))
		for i, t := range res.Assignment {
			rt := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			rt.TopicID, rt.Partitions = t.TopicID, t.Partitions
			a.Topics[i] = rt
		}
		resp.Assignment = &a
	}
	respond(req, resp)
	return nil
}
