package metadata

// ACL is one access control entry (Kafka's AccessControlEntryRecord),
// with Kafka's ids for its enums:
//
//	resource type: 2 TOPIC, 3 GROUP, 4 CLUSTER, 5 TRANSACTIONAL_ID,
//	               6 DELEGATION_TOKEN, 7 USER
//	pattern type:  3 LITERAL, 4 PREFIXED
//	operation:     2 ALL, 3 READ, 4 WRITE, 5 CREATE, 6 DELETE, 7 ALTER,
//	               8 DESCRIBE, 9 CLUSTER_ACTION, 10 DESCRIBE_CONFIGS,
//	               11 ALTER_CONFIGS, 12 IDEMPOTENT_WRITE, 13 CREATE_TOKENS,
//	               14 DESCRIBE_TOKENS, 15 TWO_PHASE_COMMIT
//	permission:    2 DENY, 3 ALLOW
//
// ID names it for removal.
type ACL struct {
	ID           [16]byte
	ResourceType int8
	ResourceName string
	PatternType  int8
	Principal    string
	Host         string
	Operation    int8
	Permission   int8
}

// RemoveACL deletes the ACL with this id (Kafka's
// RemoveAccessControlEntryRecord).
type RemoveACL struct {
	ID [16]byte
}

func (*ACL) Type() RecordType       { return TypeACL }
func (*RemoveACL) Type() RecordType { return TypeRemoveACL }

func (r *ACL) appendFields(b []byte) []byte {
	b = append(b, r.ID[:]...)
	b = appendVarint(b, int64(r.ResourceType))
	b = appendString(b, r.ResourceName)
	b = appendVarint(b, int64(r.PatternType))
	b = appendString(b, r.Principal)
	b = appendString(b, r.Host)
	b = appendVarint(b, int64(r.Operation))
	return appendVarint(b, int64(r.Permission))
}

func (r *RemoveACL) appendFields(b []byte) []byte { return append(b, r.ID[:]...) }

func decodeACL(r *reader) *ACL {
	return &ACL{ID: r.uuid(), ResourceType: r.int8(), ResourceName: r.string(), PatternType: r.int8(),
		Principal: r.string(), Host: r.string(), Operation: r.int8(), Permission: r.int8()}
}

// Valid reports whether the ACL is one that can be stored: a concrete
// resource type, pattern type, operation and permission (no ANY, MATCH or
// UNKNOWN), and a principal.
func (a *ACL) Valid() bool {
	return a.ResourceType >= 2 && a.ResourceType <= 7 &&
		(a.PatternType == 3 || a.PatternType == 4) &&
		a.Operation >= 2 && a.Operation <= 15 &&
		(a.Permission == 2 || a.Permission == 3) &&
		a.Principal != "" && a.Host != ""
}

// ACLs returns every ACL by id. Read only.
func (img *Image) ACLs() map[[16]byte]*ACL { return img.acls }
