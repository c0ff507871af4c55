package api

// ShareGroupDescribe: v1 (KIP-932). Each share group's state (Empty or
// Stable), epochs, assignor ("simple") and members: subscription and
// assignment (topic ids and names). A group that does not exist, or is of
// another type, gets GROUP_ID_NOT_FOUND; an empty id INVALID_GROUP_ID.
// Authorized operations: without an authorizer, all of a group's when
// asked for.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() {
	register(kmsg.ShareGroupDescribe.Int16(), 1, 1, (*Handler).shareGroupDescribe)
}

func (h *Handler) shareGroupDescribe(req *server.Request) error {
	r := kmsg.NewPtrShareGroupDescribeRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrShareGroupDescribeResponse()
	for _, id := range r.GroupIDs {
		rg := kmsg.NewShareGroupDescribeResponseGroup()
		rg.GroupID = id
		if !h.authorized(req, opDescribe, resGroup, id) {
			rg.ErrorCode, rg.AuthorizedOperations = kerr.GroupAuthorizationFailed.Code, authorizedOperationsOmitted
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		d := h.groups.DescribeShareGroup(id)
		rg.ErrorCode = errCode(d.Err)
		if d.ErrMessage != "" {
			msg := d.ErrMessage
			rg.ErrorMessage = &msg
		}
		rg.AuthorizedOperations = authorizedOperationsOmitted
		if r.IncludeAuthorizedOperations {
			rg.AuthorizedOperations = h.authorizedOps(req, resGroup, id, groupOperations)
		}
		rg.GroupState = d.State.String()
		rg.GroupEpoch, rg.AssignmentEpoch, rg.Assignor = d.Epoch, d.AssignmentEpoch, d.AssignorName
		for _, m := range d.Members {
			rm := kmsg.NewShareGroupDescribeResponseGroupMember()
			rm.MemberID, rm.MemberEpoch, rm.ClientID, rm.ClientHost = m.MemberID, m.MemberEpoch, m.ClientID, m.ClientHost
			rm.RackID = optional(m.RackID)
			rm.SubscribedTopicNames = m.SubscribedTopicNames
			if rm.SubscribedTopicNames == nil {
				rm.SubscribedTopicNames = []string{}
			}
			for _, t := range m.Assignment {
				tp := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
				tp.TopicID, tp.Topic, tp.Partitions = t.TopicID, t.Topic, t.Partitions
				rm.Assignment.TopicPartitions = append(rm.Assignment.TopicPartitions, tp)
			}
			rg.Members = append(rg.Members, rm)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	respond(req, resp)
	return nil
}
