package api

import (
	"context"
	"fmt"
	"strings"

	"kzero/coord/metadata"
)

// aclFilter selects ACLs (DescribeAcls, DeleteAcls): ANY (1) matches every
// value of an enum, a nil string every string, and the MATCH pattern type
// every ACL that applies to the named resource (its literal name, the
// literal "*" and the prefixes of the name).
type aclFilter struct {
	resourceType int8
	name         *string
	patternType  int8
	principal    *string
	host         *string
	operation    int8
	permission   int8
}

func (f *aclFilter) matches(a *metadata.ACL) bool {
	if f.resourceType != resAny && f.resourceType != a.ResourceType ||
		f.operation != opAny && f.operation != a.Operation ||
		f.permission != permAny && f.permission != a.Permission ||
		f.principal != nil && *f.principal != a.Principal ||
		f.host != nil && *f.host != a.Host {
		return false
	}
	switch f.patternType {
	case patternAny:
		return f.name == nil || *f.name == a.ResourceName
	case patternMatch:
		if f.name == nil {
			return true
		}
		if a.PatternType == patternPrefix {
			return strings.HasPrefix(*f.name, a.ResourceName)
		}
		return a.ResourceName == *f.name || a.ResourceName == wildcard
	default:
		return f.patternType == a.PatternType && (f.name == nil || *f.name == a.ResourceName)
	}
}

// valid reports why a filter cannot match anything Kafka would accept
// (UNKNOWN enums), "" if it is fine.
func (f *aclFilter) invalid() string {
	switch {
	case f.resourceType <= 0 || f.resourceType > resUser:
		return fmt.Sprintf("Invalid resourceType %d", f.resourceType)
	case f.patternType <= 0 || f.patternType > patternPrefix:
		return fmt.Sprintf("Invalid patternType %d", f.patternType)
	case f.operation <= 0 || f.operation > 15:
		return fmt.Sprintf("Invalid operation %d", f.operation)
	case f.permission <= 0 || f.permission > permAllow:
		return fmt.Sprintf("Invalid permissionType %d", f.permission)
	}
	return ""
}

// validateNewACL checks an ACL to create as Kafka does (AclApis and
// AclControlManager), returning the INVALID_REQUEST message, "" if valid.
func validateNewACL(a *metadata.ACL) string {
	switch {
	case a.ResourceType < resTopic || a.ResourceType > resUser:
		return fmt.Sprintf("Invalid resourceType %d", a.ResourceType)
	case a.PatternType != patternLiteral && a.PatternType != patternPrefix:
		return fmt.Sprintf("Invalid patternType %d", a.PatternType)
	case a.Operation < opAll || a.Operation > 15:
		return fmt.Sprintf("Invalid operation %d", a.Operation)
	case a.Permission != permDeny && a.Permission != permAllow:
		return fmt.Sprintf("Invalid permissionType %d", a.Permission)
	case a.ResourceType == resCluster && a.ResourceName != clusterName:
		return "The only valid name for the CLUSTER resource is " + clusterName
	case a.ResourceName == "":
		return "Invalid empty resource name"
	case !strings.Contains(a.Principal, ":") || strings.HasPrefix(a.Principal, ":") || strings.HasSuffix(a.Principal, ":"):
		return fmt.Sprintf("Could not parse principal from `%s` (no colon is present separating the principal type from the principal name)", a.Principal)
	case a.Host == "":
		return "Invalid empty host"
	}
	return ""
}

// sameEntry reports whether two ACLs are the same binding (ids aside).
func sameEntry(a, b *metadata.ACL) bool {
	x, y := *a, *b
	x.ID, y.ID = [16]byte{}, [16]byte{}
	return x == y
}

// alterACLs proposes ACL changes with a bounded wait.
func (h *Handler) alterACLs(groups [][]metadata.Record) []string {
	ctx, cancel := context.WithTimeout(context.Background(), alterTimeout)
	defer cancel()
	results := h.cluster.AlterACLs(ctx, groups)
	out := make([]string, len(results))
	for i, r := range results {
		if r.Err != nil {
			out[i] = r.Err.Error() + ": " + r.Message
		}
	}
	return out
}
