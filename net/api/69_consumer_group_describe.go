package api

// ConsumerGroupDescribe: v0-v1 (KIP-848). Each consumer group's state,
// epochs, assignor and members: subscription, current and target
// assignment (topic ids and names); v1 adds the member type (1: a
// consumer protocol member, 0: a classic member of a group migrating
// between the protocols). A group that does not exist, or is a classic group, gets
// GROUP_ID_NOT_FOUND; an empty id INVALID_GROUP_ID. Authorized operations:
// without an authorizer, all of a group's when asked for.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/net/server"
)

func init() {
	register(kmsg.ConsumerGroupDescribe.Int16(), 0, 1, (*Handler).consumerGroupDescribe)
}

func (h *Handler) consumerGroupDescribe(req *server.Request) error {
	r := kmsg.NewPtrConsumerGroupDescribeRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrConsumerGroupDescribeResponse()
	for _, id := range r.Groups {
		rg := kmsg.NewConsumerGroupDescribeResponseGroup()
		if !h.authorized(req, opDescribe, resGroup, id) {
			rg.Group, rg.ErrorCode, rg.AuthorizedOperations = id, kerr.GroupAuthorizationFailed.Code, authorizedOperationsOmitted
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		d := h.groups.DescribeConsumerGroup(id)
		rg.Group, rg.ErrorCode = id, errCode(d.Err)
		if d.ErrMessage != "" {
			msg := d.ErrMessage
			rg.ErrorMessage = &msg
		}
		rg.AuthorizedOperations = authorizedOperationsOmitted
		if r.IncludeAuthorizedOperations {
			rg.AuthorizedOperations = h.authorizedOps(req, resGroup, id, groupOperations)
		}
		rg.State = d.State.String()
		rg.Epoch, rg.AssignmentEpoch, rg.AssignorName = d.Epoch, d.AssignmentEpoch, d.AssignorName
		for _, m := range d.Members {
			rm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
			rm.MemberID, rm.MemberEpoch, rm.ClientID, rm.ClientHost = m.MemberID, m.MemberEpoch, m.ClientID, m.ClientHost
			rm.InstanceID, rm.RackID, rm.SubscribedTopicRegex = optional(m.InstanceID), optional(m.RackID), optional(m.SubscribedTopicRegex)
			rm.SubscribedTopics = m.SubscribedTopicNames
			if rm.SubscribedTopics == nil {
				rm.SubscribedTopics = []string{}
			}
			rm.Assignment, rm.TargetAssignment = describedAssignment(m.Assignment), describedAssignment(m.TargetAssignment)
			rm.MemberType = 1
			if m.Classic {
				rm.MemberType = 0
			}
			rg.Members = append(rg.Members, rm)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	respond(req, resp)
	return nil
}

// optional is "" as null.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func describedAssignment(ts []group.TopicPartitions) kmsg.Assignment {
	a := kmsg.NewAssignment()
	a.TopicPartitions = make([]kmsg.AssignmentTopicPartition, len(ts))
	for i, t := range ts {
		tp := kmsg.NewAssignmentTopicPartition()
		tp.TopicID, tp.Topic, tp.Partitions = t.TopicID, t.Topic, t.Partitions
		a.TopicPartitions[i] = tp
	}
	return a
}
