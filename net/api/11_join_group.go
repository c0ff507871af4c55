package api

// JoinGroup: v0-v9 (v0/v1 restored in Kafka 4.0.1, KAFKA-19444). Classic
// group protocol: from v4 a new member first gets MEMBER_ID_REQUIRED with
// its member id (KIP-394); v5 adds group.instance.id (KIP-345 static
// membership); v7 returns the protocol type (KIP-559); v8 carries a
// reason (KIP-800); v9 tells a restarted static leader to skip the
// assignment (KIP-814). Before v1 the rebalance timeout is the session
// timeout.
//
// The response waits for the rebalance: the request is answered from
// whichever goroutine completes it, no goroutine waits.

import (
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/net/server"
)

func init() { register(kmsg.JoinGroup.Int16(), 0, 9, (*Handler).joinGroup) }

func (h *Handler) joinGroup(req *server.Request) error {
	r := kmsg.NewPtrJoinGroupRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	jr := &group.JoinRequest{
		Group:                  r.Group,
		MemberID:               r.MemberID,
		ClientID:               string(req.Header.ClientID),
		ClientHost:             clientHost(req),
		ProtocolType:           r.ProtocolType,
		SessionTimeout:         r.SessionTimeoutMillis,
		RebalanceTimeout:       r.RebalanceTimeoutMillis,
		RequireKnownMemberID:   r.Version >= 4,
		SupportsSkipAssignment: r.Version >= 9,
	}
	if r.Version == 0 {
		jr.RebalanceTimeout = r.SessionTimeoutMillis
	}
	if r.InstanceID != nil {
		jr.InstanceID = *r.InstanceID
	}
	jr.Protocols = make([]group.Protocol, len(r.Protocols))
	for i, p := range r.Protocols {
		jr.Protocols[i] = group.Protocol{Name: p.Name, Metadata: p.Metadata}
	}
	version := r.Version
	if !h.authorized(req, opRead, resGroup, r.Group) {
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.ErrorCode, resp.Generation = kerr.GroupAuthorizationFailed.Code, -1
		if version < 7 {
			resp.Protocol = strPtr("")
		}
		respond(req, resp)
		return nil
	}
	h.groups.JoinGroup(jr, func(res group.JoinResult) {
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.SetVersion(version)
		resp.ErrorCode = errCode(res.Err)
		resp.Generation = res.Generation
		resp.MemberID = res.MemberID
		resp.LeaderID = res.Leader
		resp.SkipAssignment = res.SkipAssignment
		if res.ProtocolType != "" {
			pt := res.ProtocolType
			resp.ProtocolType = &pt
		}
		// Before v7 the protocol is not nullable: "" for none.
		if p := res.Protocol; p != "" || version < 7 {
			resp.Protocol = &p
		}
		resp.Members = make([]kmsg.JoinGroupResponseMember, len(res.Members))
		for i, m := range res.Members {
			rm := kmsg.NewJoinGroupResponseMember()
			rm.MemberID, rm.ProtocolMetadata = m.MemberID, m.Metadata
			if m.InstanceID != "" {
				id := m.InstanceID
				rm.InstanceID = &id
			}
			resp.Members[i] = rm
		}
		respond(req, resp)
	})
	return nil
}

// clientHost is the client's address as Kafka reports it in group
// descriptions: "/" and the IP.
func clientHost(req *server.Request) string {
	if c := req.Conn(); c != nil {
		if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
			return "/" + a.IP.String()
		}
		if a := c.RemoteAddr(); a != nil {
			host, _, err := net.SplitHostPort(a.String())
			if err == nil {
				return "/" + host
			}
		}
	}
	return ""
}
