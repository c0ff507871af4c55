package api

// ListGroups: v0-v5. The groups this broker coordinates; v4 adds their
// state and a states filter (KIP-518), v5 their type and a types filter
// (KIP-848: "classic", or "consumer" for consumer protocol groups, whose
// states are Empty, Assigning, Reconciling and Stable). Filters ignore
// case. While a
// partition of __consumer_offsets is loading, its groups are missing and
// the response carries COORDINATOR_LOAD_IN_PROGRESS.

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.ListGroups.Int16(), 0, 5, (*Handler).listGroups) }

func (h *Handler) listGroups(req *server.Request) error {
	r := kmsg.NewPtrListGroupsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrListGroupsResponse()
	groups, err := h.groups.ListGroups()
	resp.ErrorCode = errCode(err)
	// DESCRIBE on the cluster lists all; otherwise the groups the
	// principal may DESCRIBE.
	all := h.authorized(req, opDescribe, resCluster, clusterName)
	for _, g := range groups {
		if !all && !h.authorized(req, opDescribe, resGroup, g.Group) {
			continue
		}
		if !matchesAny(g.State.String(), r.StatesFilter) || !matchesAny(g.Type, r.TypesFilter) {
			continue
		}
		rg := kmsg.NewListGroupsResponseGroup()
		rg.Group, rg.ProtocolType, rg.GroupState, rg.GroupType = g.Group, g.ProtocolType, g.State.String(), g.Type
		resp.Groups = append(resp.Groups, rg)
	}
	respond(req, resp)
	return nil
}

// matchesAny reports whether v is in filter, ignoring case; an empty
// filter matches everything.
func matchesAny(v string, filter []string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, f := range filter {
		if strings.EqualFold(v, f) {
			return true
		}
	}
	return false
}
