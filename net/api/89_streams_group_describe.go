package api

// StreamsGroupDescribe: v0 (KIP-1071). Each streams group's state (Empty,
// NotReady, Assigning, Reconciling, Stable), epochs, topology
// (subtopologies with their source, repartition and changelog topics) and
// members: process id, user endpoint, client tags, topology epoch, and
// current and target tasks (active, standby, warm-up). TaskOffsets and
// TaskEndOffsets are empty lists, as Kafka 4.3 serves them: its
// coordinator refuses the offsets members would report. v0 only, as
// Kafka 4.3; v1 (Kafka 4.4: topology descriptions, KIP-1331, and the
// assignor name, KIP-1357) is not served. A group that does not exist or is of another
// type gets GROUP_ID_NOT_FOUND; an empty id INVALID_GROUP_ID. Authorized
// operations: without an authorizer, all of a group's when asked for.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() {
	register(kmsg.StreamsGroupDescribe.Int16(), 0, 0, (*Handler).streamsGroupDescribe)
}

func (h *Handler) streamsGroupDescribe(req *server.Request) error {
	r := kmsg.NewPtrStreamsGroupDescribeRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrStreamsGroupDescribeResponse()
	for _, id := range r.Groups {
		if !h.authorized(req, opDescribe, resGroup, id) {
			rg := kmsg.NewStreamsGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode, rg.AuthorizedOperations = id, kerr.GroupAuthorizationFailed.Code, authorizedOperationsOmitted
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		rg, err := h.groups.DescribeStreamsGroup(id)
		rg.ErrorCode = errCode(err)
		rg.AuthorizedOperations = authorizedOperationsOmitted
		if r.IncludeAuthorizedOperations && rg.ErrorCode == 0 {
			rg.AuthorizedOperations = h.authorizedOps(req, resGroup, id, groupOperations)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	respond(req, resp)
	return nil
}
