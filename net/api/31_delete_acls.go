package api

// DeleteAcls: v0-v3 (v1 pattern types, KIP-290; v2 flexible). Each filter
// deletes the ACLs it matches (MATCH and ANY allowed), listed in its
// result. Needs ALTER on the cluster; without an authorizer,
// SECURITY_DISABLED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/net/server"
)

func init() { register(kmsg.DeleteACLs.Int16(), 0, 3, (*Handler).deleteACLs).since4(1) }

func (h *Handler) deleteACLs(req *server.Request) error {
	r := kmsg.NewPtrDeleteACLsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDeleteACLsResponse()
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(r.Filters))
	failAll := func(err *kerr.Error, msg string) {
		for i := range resp.Results {
			resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = err.Code, strPtr(msg)
		}
		respond(req, resp)
	}
	if err, msg := h.aclAdminDenied(req); err != nil {
		failAll(err, msg)
		return nil
	}
	acls := h.cluster.Image().ACLs()
	var group []metadata.Record
	removed := map[[16]byte]bool{}
	matches := make([][]*metadata.ACL, len(r.Filters))
	for i, fl := range r.Filters {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
		f := aclFilter{resourceType: int8(fl.ResourceType), name: fl.ResourceName, patternType: int8(fl.ResourcePatternType),
			principal: fl.Principal, host: fl.Host, operation: int8(fl.Operation), permission: int8(fl.PermissionType)}
		if r.Version == 0 {
			f.patternType = patternLiteral
		}
		if msg := f.invalid(); msg != "" {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.InvalidRequest.Code, strPtr(msg)
			continue
		}
		for _, a := range acls {
			if f.matches(a) {
				matches[i] = append(matches[i], a)
				if !removed[a.ID] {
					removed[a.ID] = true
					group = append(group, &metadata.RemoveACL{ID: a.ID})
				}
			}
		}
	}
	var fail string
	if len(group) > 0 {
		fail = h.alterACLs([][]metadata.Record{group})[0]
	}
	for i, ms := range matches {
		for _, a := range ms {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName = kmsg.ACLResourceType(a.ResourceType), a.ResourceName
			m.ResourcePatternType = kmsg.ACLResourcePatternType(a.PatternType)
			m.Principal, m.Host = a.Principal, a.Host
			m.Operation, m.PermissionType = kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.Permission)
			if fail != "" {
				m.ErrorCode, m.ErrorMessage = kerr.UnknownServerError.Code, strPtr(fail)
			}
			resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, m)
		}
	}
	respond(req, resp)
	return nil
}
