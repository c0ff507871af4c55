package api

// SyncGroup: v0-v5. The leader sends every member's assignment; each
// member gets its own back, byte for byte, once the assignment is stored
// in __consumer_offsets. v3 adds group.instance.id (KIP-345), v4 is
// flexible, v5 checks and returns the protocol type and name (KIP-559).
//
// The response waits for the leader's assignment: the request is answered
// from whichever goroutine stores it, no goroutine waits.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/net/server"
)

func init() { register(kmsg.SyncGroup.Int16(), 0, 5, (*Handler).syncGroup) }

func (h *Handler) syncGroup(req *server.Request) error {
	r := kmsg.NewPtrSyncGroupRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	sr := &group.SyncRequest{Group: r.Group, MemberID: r.MemberID, Generation: r.Generation,
		ProtocolType: r.ProtocolType, Protocol: r.Protocol}
	if r.InstanceID != nil {
		sr.InstanceID = *r.InstanceID
	}
	sr.Assignments = make([]group.Assignment, len(r.GroupAssignment))
	for i, a := range r.GroupAssignment {
		sr.Assignments[i] = group.Assignment{MemberID: a.MemberID, Assignment: a.MemberAssignment}
	}
	version := r.Version
	if !h.authorized(req, opRead, resGroup, r.Group) {
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.ErrorCode, resp.MemberAssignment = kerr.GroupAuthorizationFailed.Code, []byte{}
		respond(req, resp)
		return nil
	}
	h.groups.SyncGroup(sr, func(res group.SyncResult) {
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.SetVersion(version)
		resp.ErrorCode = errCode(res.Err)
		resp.MemberAssignment = res.Assignment
		if resp.MemberAssignment == nil {
			resp.MemberAssignment = []byte{}
		}
		if res.ProtocolType != "" {
			pt := res.ProtocolType
			resp.ProtocolType = &pt
		}
		if res.Protocol != "" {
			p := res.Protocol
			resp.Protocol = &p
		}
		respond(req, resp)
	})
	return nil
}
