package api

// LeaveGroup: v0-v5. v0-v2 remove one member by id; v3+ remove a batch of
// members by member id and/or group.instance.id (KIP-345), each with its
// own error code (v4 flexible, v5 adds a reason, KIP-800). A static member
// named with another member id is FENCED_INSTANCE_ID.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/net/server"
)

func init() { register(kmsg.LeaveGroup.Int16(), 0, 5, (*Handler).leaveGroup) }

func (h *Handler) leaveGroup(req *server.Request) error {
	r := kmsg.NewPtrLeaveGroupRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	var members []group.LeaveMember
	if r.Version < 3 {
		members = []group.LeaveMember{{MemberID: r.MemberID}}
	} else {
		members = make([]group.LeaveMember, len(r.Members))
		for i, m := range r.Members {
			members[i].MemberID = m.MemberID
			if m.InstanceID != nil {
				members[i].InstanceID = *m.InstanceID
			}
		}
	}
	if !h.authorized(req, opRead, resGroup, r.Group) {
		resp := kmsg.NewPtrLeaveGroupResponse()
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		respond(req, resp)
		return nil
	}
	errs, err := h.groups.LeaveGroup(r.Group, members)
	resp := kmsg.NewPtrLeaveGroupResponse()
	resp.ErrorCode = errCode(err)
	if r.Version < 3 {
		if err == nil && len(errs) == 1 {
			resp.ErrorCode = errCode(errs[0])
		}
		respond(req, resp)
		return nil
	}
	if err == nil {
		for i, m := range r.Members {
			rm := kmsg.NewLeaveGroupResponseMember()
			rm.MemberID, rm.InstanceID, rm.ErrorCode = m.MemberID, m.InstanceID, errCode(errs[i])
			resp.Members = append(resp.Members, rm)
		}
	}
	respond(req, resp)
	return nil
}
