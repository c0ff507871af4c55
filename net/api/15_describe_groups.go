package api

// DescribeGroups: v0-v6. Each group's state, protocol type and members
// (ids, group.instance.id from v4, client id and host); a Stable group's
// members come with their metadata for the group's protocol and their
// assignment. A KIP-848 consumer group is described as Kafka describes it
// to classic tools: protocol type "consumer", its assignor as the
// protocol, its state (Empty, Assigning, Reconciling, Stable), and each
// member's subscription and assignment in the consumer protocol's
// classic encoding. A group that does not exist is described as Dead before v6
// and gets GROUP_ID_NOT_FOUND from v6 (KIP-1043). Authorized operations
// (v3+, KIP-430): without an authorizer, all of a group's (READ, DELETE,
// DESCRIBE) when asked for.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/net/server"
)

func init() { register(kmsg.DescribeGroups.Int16(), 0, 6, (*Handler).describeGroups) }

// groupOperations is the bit field of READ 3, DELETE 6 and DESCRIBE 8.
const groupOperations = 1<<3 | 1<<6 | 1<<8

func (h *Handler) describeGroups(req *server.Request) error {
	r := kmsg.NewPtrDescribeGroupsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDescribeGroupsResponse()
	for _, id := range r.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group = id
		rg.AuthorizedOperations = authorizedOperationsOmitted
		if r.IncludeAuthorizedOperations {
			rg.AuthorizedOperations = h.authorizedOps(req, resGroup, id, groupOperations)
		}
		d, found, err := h.groups.DescribeGroup(id)
		switch {
		case !h.authorized(req, opDescribe, resGroup, id):
			rg.ErrorCode = kerr.GroupAuthorizationFailed.Code
			rg.State = ""
		case err != nil:
			rg.ErrorCode = errCode(err)
			rg.State = group.Dead.String()
		case !found && r.Version >= 6:
			rg.ErrorCode = kerr.GroupIDNotFound.Code
			msg := fmt.Sprintf("Group %s not found.", id)
			rg.ErrorMessage = &msg
			rg.State = group.Dead.String()
		default:
			rg.State, rg.ProtocolType, rg.Protocol = d.State.String(), d.ProtocolType, d.Protocol
			for _, m := range d.Members {
				rm := kmsg.NewDescribeGroupsResponseGroupMember()
				rm.MemberID, rm.ClientID, rm.ClientHost = m.MemberID, m.ClientID, m.ClientHost
				if m.InstanceID != "" {
					iid := m.InstanceID
					rm.InstanceID = &iid
				}
				rm.ProtocolMetadata, rm.MemberAssignment = nonNil(m.Metadata), nonNil(m.Assignment)
				rg.Members = append(rg.Members, rm)
			}
		}
		resp.Groups = append(resp.Groups, rg)
	}
	respond(req, resp)
	return nil
}

// nonNil makes a null byte field an empty one, for fields that are not
// nullable.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
