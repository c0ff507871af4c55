package api

import (
	"testing"

	"kzero/coord/metadata"
)

func imageWith(t *testing.T, acls ...*metadata.ACL) *metadata.Image {
	t.Helper()
	b := metadata.NewBuilder(metadata.EmptyImage())
	for _, a := range acls {
		a.ID = metadata.NewUUID()
		if a.Host == "" {
			a.Host = wildcard
		}
		if err := b.Apply(a, 1); err != nil {
			t.Fatal(err)
		}
	}
	return b.Finish(1)
}

// TestAuthorizer checks StandardAuthorizer's rules: super users, literal,
// wildcard and prefixed patterns, User:* and hosts, implied operations,
// DENY over ALLOW, and allow.everyone.if.no.acl.found.
func TestAuthorizer(t *testing.T) {
	img := imageWith(t,
		&metadata.ACL{ResourceType: resTopic, ResourceName: "orders", PatternType: patternLiteral, Principal: "User:alice", Operation: opRead, Permission: permAllow},
		&metadata.ACL{ResourceType: resTopic, ResourceName: "logs-", PatternType: patternPrefix, Principal: "User:*", Operation: opWrite, Permission: permAllow},
		&metadata.ACL{ResourceType: resTopic, ResourceName: "logs-secret", PatternType: patternLiteral, Principal: "User:bob", Operation: opAll, Permission: permDeny},
		&metadata.ACL{ResourceType: resTopic, ResourceName: "*", PatternType: patternLiteral, Principal: "User:carol", Operation: opDescribe, Permission: permAllow},
		&metadata.ACL{ResourceType: resGroup, ResourceName: "g", PatternType: patternLiteral, Principal: "User:alice", Host: "10.0.0.1", Operation: opRead, Permission: permAllow},
		&metadata.ACL{ResourceType: resCluster, ResourceName: clusterName, PatternType: patternLiteral, Principal: "User:ops", Operation: opAlterCfg, Permission: permAllow},
	)
	for _, open := range []bool{false, true} {
		a := &authorizer{cfg: AuthorizerConfig{SuperUsers: []string{"User:admin"}, AllowIfNoACL: open}}
		for _, c := range []struct {
			principal, host string
			op, typ         int8
			name            string
			want            bool
		}{
			{"User:admin", "1.2.3.4", opDelete, resTopic, "orders", true},
			{"User:alice", "1.2.3.4", opRead, resTopic, "orders", true},
			{"User:alice", "1.2.3.4", opDescribe, resTopic, "orders", true}, // READ implies DESCRIBE
			{"User:alice", "1.2.3.4", opWrite, resTopic, "orders", false},
			{"User:bob", "1.2.3.4", opRead, resTopic, "orders", false},
			{"User:bob", "1.2.3.4", opWrite, resTopic, "logs-app", true},     // prefixed, User:*
			{"User:bob", "1.2.3.4", opWrite, resTopic, "logs-secret", false}, // DENY wins
			{"User:eve", "1.2.3.4", opWrite, resTopic, "logs-secret", true},
			{"User:carol", "1.2.3.4", opDescribe, resTopic, "anything", true}, // wildcard
			{"User:carol", "1.2.3.4", opRead, resTopic, "anything", false},
			{"User:alice", "10.0.0.1", opRead, resGroup, "g", true},
			{"User:alice", "10.0.0.2", opRead, resGroup, "g", false},        // host
			{"User:ops", "h", opDescribeCfg, resCluster, clusterName, true}, // ALTER_CONFIGS implies DESCRIBE_CONFIGS
			{"User:eve", "h", opRead, resGroup, "other", open},              // no ACL for the resource
		} {
			if got := a.allowed(img, c.principal, c.host, c.op, c.typ, c.name); got != c.want {
				t.Errorf("open=%v %s@%s op %d on %d/%s: %v, want %v", open, c.principal, c.host, c.op, c.typ, c.name, got, c.want)
			}
		}
	}
}

func TestACLFilter(t *testing.T) {
	lit := &metadata.ACL{ResourceType: resTopic, ResourceName: "orders", PatternType: patternLiteral, Principal: "User:a", Host: "*", Operation: opRead, Permission: permAllow}
	pre := &metadata.ACL{ResourceType: resTopic, ResourceName: "ord", PatternType: patternPrefix, Principal: "User:a", Host: "*", Operation: opRead, Permission: permAllow}
	name := "orders"
	for _, c := range []struct {
		f        aclFilter
		lit, pre bool
	}{
		{aclFilter{resourceType: resAny, patternType: patternAny, operation: opAny, permission: permAny}, true, true},
		{aclFilter{resourceType: resTopic, name: &name, patternType: patternMatch, operation: opAny, permission: permAny}, true, true},
		{aclFilter{resourceType: resTopic, name: &name, patternType: patternLiteral, operation: opAny, permission: permAny}, true, false},
		{aclFilter{resourceType: resGroup, patternType: patternAny, operation: opAny, permission: permAny}, false, false},
		{aclFilter{resourceType: resAny, patternType: patternPrefix, operation: opRead, permission: permAllow}, false, true},
	} {
		if c.f.matches(lit) != c.lit || c.f.matches(pre) != c.pre {
			t.Errorf("filter %+v: literal %v prefixed %v", c.f, c.f.matches(lit), c.f.matches(pre))
		}
	}
}
