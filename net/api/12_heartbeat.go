package api

// Heartbeat: v0-v4 (v3 adds group.instance.id, KIP-345; v4 flexible).
// REBALANCE_IN_PROGRESS tells a member to rejoin; ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID and FENCED_INSTANCE_ID that it is no longer in the
// group it thinks. While the coordinator loads, members are answered with
// no error, as Kafka does.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/net/server"
)

func init() { register(kmsg.Heartbeat.Int16(), 0, 4, (*Handler).heartbeat) }

func (h *Handler) heartbeat(req *server.Request) error {
	r := kmsg.NewPtrHeartbeatRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	hr := &group.HeartbeatRequest{Group: r.Group, MemberID: r.MemberID, Generation: r.Generation}
	if r.InstanceID != nil {
		hr.InstanceID = *r.InstanceID
	}
	resp := kmsg.NewPtrHeartbeatResponse()
	if !h.authorized(req, opRead, resGroup, r.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
	} else {
		resp.ErrorCode = errCode(h.groups.Heartbeat(hr))
	}
	respond(req, resp)
	return nil
}
