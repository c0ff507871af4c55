package api

// DeleteGroups: v0-v2 (v0 restored by KAFKA-18352 for Sarama). Each group
// is deleted with its committed offsets (tombstones in
// __consumer_offsets) if it has no members; else NON_EMPTY_GROUP, and
// GROUP_ID_NOT_FOUND for a group that does not exist. A share group's
// share partition state goes with it, on this broker's share coordinator
// and on the others' (DeleteShareGroupState).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.DeleteGroups.Int16(), 0, 2, (*Handler).deleteGroups) }

func (h *Handler) deleteGroups(req *server.Request) error {
	r := kmsg.NewPtrDeleteGroupsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDeleteGroupsResponse()
	var allowed []string
	for _, g := range r.Groups {
		if h.authorized(req, opDelete, resGroup, g) {
			allowed = append(allowed, g)
			continue
		}
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group, rg.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
		resp.Groups = append(resp.Groups, rg)
	}
	shareGroup := make([]bool, len(allowed))
	for i, g := range allowed {
		_, _, err := h.groups.ShareGroupStatus(g, false)
		shareGroup[i] = err == nil
	}
	for i, err := range h.groups.DeleteGroups(allowed) {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group, rg.ErrorCode = allowed[i], errCode(err)
		resp.Groups = append(resp.Groups, rg)
		switch {
		case err != nil:
		case shareGroup[i]:
			h.deleteShareGroupState(allowed[i])
		default:
			h.shares.DeleteGroup(allowed[i])
		}
	}
	respond(req, resp)
	return nil
}
