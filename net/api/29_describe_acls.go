package api

// DescribeAcls: v0-v3 (v1 pattern types, KIP-290; v2 flexible). One filter;
// the matching ACLs grouped by resource pattern. Needs DESCRIBE on the
// cluster; without an authorizer, SECURITY_DISABLED.

import (
	"cmp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/net/server"
)

func init() { register(kmsg.DescribeACLs.Int16(), 0, 3, (*Handler).describeACLs).since4(1) }

func (h *Handler) describeACLs(req *server.Request) error {
	r := kmsg.NewPtrDescribeACLsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDescribeACLsResponse()
	f := aclFilter{resourceType: int8(r.ResourceType), name: r.ResourceName, patternType: int8(r.ResourcePatternType),
		principal: r.Principal, host: r.Host, operation: int8(r.Operation), permission: int8(r.PermissionType)}
	if r.Version == 0 {
		f.patternType = patternLiteral
	}
	switch {
	case h.authz == nil:
		resp.ErrorCode, resp.ErrorMessage = kerr.SecurityDisabled.Code, strPtr("No Authorizer is configured on the broker")
	case !h.authorized(req, opDescribe, resCluster, clusterName):
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, strPtr(kerr.ClusterAuthorizationFailed.Description)
	case f.invalid() != "":
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, strPtr(f.invalid())
	default:
		var matched []*metadata.ACL
		for _, a := range h.cluster.Image().ACLs() {
			if f.matches(a) {
				matched = append(matched, a)
			}
		}
		slices.SortFunc(matched, func(a, b *metadata.ACL) int {
			return cmp.Or(cmp.Compare(a.ResourceType, b.ResourceType), strings.Compare(a.ResourceName, b.ResourceName),
				cmp.Compare(a.PatternType, b.PatternType), strings.Compare(a.Principal, b.Principal), strings.Compare(a.Host, b.Host),
				cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Permission, b.Permission))
		})
		for _, a := range matched {
			n := len(resp.Resources)
			if n == 0 || resp.Resources[n-1].ResourceName != a.ResourceName || int8(resp.Resources[n-1].ResourceType) != a.ResourceType ||
				int8(resp.Resources[n-1].ResourcePatternType) != a.PatternType {
				res := kmsg.NewDescribeACLsResponseResource()
				res.ResourceType, res.ResourceName = kmsg.ACLResourceType(a.ResourceType), a.ResourceName
				res.ResourcePatternType = kmsg.ACLResourcePatternType(a.PatternType)
				resp.Resources = append(resp.Resources, res)
				n++
			}
			e := kmsg.NewDescribeACLsResponseResourceACL()
			e.Principal, e.Host = a.Principal, a.Host
			e.Operation, e.PermissionType = kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.Permission)
			resp.Resources[n-1].ACLs = append(resp.Resources[n-1].ACLs, e)
		}
	}
	respond(req, resp)
	return nil
}
