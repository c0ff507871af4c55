package api

import (
	"slices"
	"strings"
	"sync/atomic"

	"kzero/coord/metadata"
	"kzero/net/server"
)

// Kafka's ids of ACL resource types, pattern types, operations and
// permissions (metadata.ACL).
const (
	resAny            int8 = 1
	resTopic          int8 = 2
	resGroup          int8 = 3
	resCluster        int8 = 4
	resTxnID          int8 = 5
	resDelegation     int8 = 6
	resUser           int8 = 7
	patternAny        int8 = 1
	patternMatch      int8 = 2
	patternLiteral    int8 = 3
	patternPrefix     int8 = 4
	opAny             int8 = 1
	opAll             int8 = 2
	opRead            int8 = 3
	opWrite           int8 = 4
	opCreate          int8 = 5
	opDelete          int8 = 6
	opAlter           int8 = 7
	opDescribe        int8 = 8
	opClusterAct      int8 = 9
	opDescribeCfg     int8 = 10
	opAlterCfg        int8 = 11
	opIdempotentWrite int8 = 12
	opCreateTokens    int8 = 13
	opDescribeTokens  int8 = 14
	permAny           int8 = 1
	permDeny          int8 = 2
	permAllow         int8 = 3
)

// clusterName is the name of the one CLUSTER resource.
const clusterName = "kafka-cluster"

// wildcard is the literal resource name, principal and host that match
// all.
const wildcard = "*"

// AuthorizerConfig turns authorization on, with Kafka's
// StandardAuthorizer semantics
// (authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer).
type AuthorizerConfig struct {
	// SuperUsers are super.users: principals (User:admin) allowed
	// everything.
	SuperUsers []string
	// AllowIfNoACL is allow.everyone.if.no.acl.found: a resource no ACL
	// matches is open to all (default false: closed).
	AllowIfNoACL bool
}

// authorizer decides requests against the image's ACLs (StandardAuthorizer):
// super users may do anything; a DENY that matches wins over any ALLOW; an
// ALLOW of the operation, of ALL, or of an operation that implies it (READ,
// WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies
// DESCRIBE_CONFIGS) allows; a resource no ACL matches at all follows
// AllowIfNoACL. ACLs match a resource by literal name, the literal
// wildcard "*", or a prefix; a principal exactly or as User:*; a host
// exactly or as "*".
type authorizer struct {
	cfg   AuthorizerConfig
	index atomic.Pointer[aclIndex] // of the latest image asked about
}

// aclIndex is an image's ACLs by resource, built once per image.
type aclIndex struct {
	img      *metadata.Image
	literal  map[aclResource][]*metadata.ACL // by type and name ("*" included)
	prefixed map[int8][]*metadata.ACL        // by type
}

type aclResource struct {
	typ  int8
	name string
}

func (a *authorizer) indexOf(img *metadata.Image) *aclIndex {
	if idx := a.index.Load(); idx != nil && idx.img == img {
		return idx
	}
	idx := &aclIndex{img: img, literal: map[aclResource][]*metadata.ACL{}, prefixed: map[int8][]*metadata.ACL{}}
	for _, acl := range img.ACLs() {
		if acl.PatternType == patternPrefix {
			idx.prefixed[acl.ResourceType] = append(idx.prefixed[acl.ResourceType], acl)
		} else {
			k := aclResource{acl.ResourceType, acl.ResourceName}
			idx.literal[k] = append(idx.literal[k], acl)
		}
	}
	a.index.Store(idx)
	return idx
}

// implies reports whether an ALLOW of aclOp allows op.
func implies(aclOp, op int8) bool {
	switch {
	case aclOp == op || aclOp == opAll:
		return true
	case op == opDescribe:
		return aclOp == opRead || aclOp == opWrite || aclOp == opDelete || aclOp == opAlter
	case op == opDescribeCfg:
		return aclOp == opAlterCfg
	}
	return false
}

// allowed decides whether principal, connected from host, may do op on
// the resource typ/name.
func (a *authorizer) allowed(img *metadata.Image, principal, host string, op, typ int8, name string) bool {
	if slices.Contains(a.cfg.SuperUsers, principal) {
		return true
	}
	idx := a.indexOf(img)
	found, allow := false, false
	check := func(acls []*metadata.ACL, prefix bool) bool {
		for _, acl := range acls {
			if prefix && !strings.HasPrefix(name, acl.ResourceName) {
				continue
			}
			found = true
			if acl.Principal != principal && acl.Principal != "User:*" || acl.Host != host && acl.Host != wildcard {
				continue
			}
			if acl.Permission == permDeny && (acl.Operation == op || acl.Operation == opAll) {
				return true // denied
			}
			if acl.Permission == permAllow && implies(acl.Operation, op) {
				allow = true
			}
		}
		return false
	}
	if check(idx.literal[aclResource{typ, name}], false) ||
		check(idx.literal[aclResource{typ, wildcard}], false) ||
		check(idx.prefixed[typ], true) {
		return false
	}
	if allow {
		return true
	}
	return !found && a.cfg.AllowIfNoACL
}

// authorized reports whether the request's principal may do op on the
// resource; true when no authorizer is configured.
func (h *Handler) authorized(req *server.Request, op, typ int8, name string) bool {
	if h.authz == nil {
		return true
	}
	s := h.session(req.Conn())
	return h.authz.allowed(h.cluster.Image(), s.principal, s.host, op, typ, name)
}

// authorizedOps is the bit field (1<<operation) of the operations of all
// that the request's principal may do on the resource (KIP-430), each
// decided as the API itself would; all of them when no authorizer is
// configured, as Kafka answers.
func (h *Handler) authorizedOps(req *server.Request, typ int8, name string, all int32) int32 {
	if h.authz == nil {
		return all
	}
	var ops int32
	for op := int8(0); op < 31; op++ {
		if all&(1<<op) != 0 && h.authorized(req, op, typ, name) {
			ops |= 1 << op
		}
	}
	return ops
}

// writesAnyTopic reports whether the principal may WRITE some topic: since
// Kafka 3.0 (KIP-679) that implies IDEMPOTENT_WRITE for an idempotent
// producer's InitProducerId.
func (h *Handler) writesAnyTopic(req *server.Request) bool {
	s := h.session(req.Conn())
	img := h.cluster.Image()
	if h.authz.allowed(img, s.principal, s.host, opWrite, resTopic, "") {
		return true // a wildcard or empty prefix
	}
	for _, t := range img.Topics() {
		if h.authz.allowed(img, s.principal, s.host, opWrite, resTopic, t.Name) {
			return true
		}
	}
	return false
}
