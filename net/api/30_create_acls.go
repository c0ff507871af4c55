package api

// CreateAcls: v0-v3 (v1 adds the pattern type, KIP-290; v2 flexible). Each
// creation succeeds or fails alone; an ACL identical to one that exists is
// a success that changes nothing. Needs ALTER on the cluster
// (CLUSTER_AUTHORIZATION_FAILED); without an authorizer,
// SECURITY_DISABLED.

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/net/server"
)

func init() { register(kmsg.CreateACLs.Int16(), 0, 3, (*Handler).createACLs).since4(1) }

func (h *Handler) createACLs(req *server.Request) error {
	r := kmsg.NewPtrCreateACLsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrCreateACLsResponse()
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(r.Creations))
	failAll := func(err *kerr.Error, msg string) {
		for i := range resp.Results {
			resp.Results[i] = kmsg.NewCreateACLsResponseResult()
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = err.Code, strPtr(msg)
		}
		respond(req, resp)
	}
	if err, msg := h.aclAdminDenied(req); err != nil {
		failAll(err, msg)
		return nil
	}
	existing := h.cluster.Image().ACLs()
	var groups [][]metadata.Record
	var owners []int
	for i, c := range r.Creations {
		resp.Results[i] = kmsg.NewCreateACLsResponseResult()
		a := &metadata.ACL{ID: metadata.NewUUID(), ResourceType: int8(c.ResourceType), ResourceName: strings.Clone(c.ResourceName),
			PatternType: int8(c.ResourcePatternType), Principal: strings.Clone(c.Principal), Host: strings.Clone(c.Host),
			Operation: int8(c.Operation), Permission: int8(c.PermissionType)}
		if r.Version == 0 {
			a.PatternType = patternLiteral
		}
		if msg := validateNewACL(a); msg != "" {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.InvalidRequest.Code, strPtr(msg)
			continue
		}
		dup := false
		for _, e := range existing {
			dup = dup || sameEntry(a, e)
		}
		if !dup {
			groups = append(groups, []metadata.Record{a})
			owners = append(owners, i)
		}
	}
	if len(groups) > 0 {
		for gi, msg := range h.alterACLs(groups) {
			if msg != "" {
				resp.Results[owners[gi]].ErrorCode, resp.Results[owners[gi]].ErrorMessage = kerr.UnknownServerError.Code, strPtr(msg)
			}
		}
	}
	respond(req, resp)
	return nil
}

// aclAdminDenied is why CreateAcls or DeleteAcls is refused as a whole:
// no authorizer (SECURITY_DISABLED) or no ALTER on the cluster; nil when
// the request may go on.
func (h *Handler) aclAdminDenied(req *server.Request) (*kerr.Error, string) {
	switch {
	case h.authz == nil:
		return kerr.SecurityDisabled, "No Authorizer is configured."
	case !h.authorized(req, opAlter, resCluster, clusterName):
		return kerr.ClusterAuthorizationFailed, kerr.ClusterAuthorizationFailed.Description
	}
	return nil, ""
}
