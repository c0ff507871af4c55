package group

import "kzero/log"

// The requests the coordinator takes and the results it gives, free of
// any wire version: net/api maps them to and from kmsg. Strings and bytes
// in a request may alias the request's network buffer; the coordinator
// copies what it keeps. Results may share the coordinator's byte slices,
// which it never modifies in place.

// JoinRequest is a JoinGroup request.
type JoinRequest struct {
	Group        string
	MemberID     string // "" for a member that has none yet
	InstanceID   string // group.instance.id (KIP-345); "" for a dynamic member
	ClientID     string
	ClientHost   string
	ProtocolType string
	Protocols    []Protocol
	// Timeouts in ms. Before JoinGroup v1 the rebalance timeout is the
	// session timeout.
	SessionTimeout, RebalanceTimeout int32
	// RequireKnownMemberID (v4+): a new dynamic member first gets
	// MEMBER_ID_REQUIRED with its id, and joins again with it (KIP-394).
	RequireKnownMemberID bool
	// SupportsSkipAssignment (v9+, KIP-814): a static leader that rejoins
	// a stable group is told it leads and to skip the assignment.
	SupportsSkipAssignment bool
}

// JoinMember is one member as the leader's JoinGroup response lists it.
type JoinMember struct {
	MemberID   string
	InstanceID string
	Metadata   []byte
}

// JoinResult is a JoinGroup response.
type JoinResult struct {
	Err            error
	MemberID       string
	Generation     int32
	ProtocolType   string // "" for null
	Protocol       string // "" for null
	Leader         string
	SkipAssignment bool
	Members        []JoinMember // the leader's only
}

// Assignment is one member's assignment in the leader's SyncGroup.
type Assignment struct {
	MemberID   string
	Assignment []byte
}

// SyncRequest is a SyncGroup request.
type SyncRequest struct {
	Group        string
	MemberID     string
	InstanceID   string
	Generation   int32
	ProtocolType *string // v5+, checked when set
	Protocol     *string // v5+, checked when set
	Assignments  []Assignment
}

// SyncResult is a SyncGroup response.
type SyncResult struct {
	Err          error
	ProtocolType string
	Protocol     string
	Assignment   []byte
}

// HeartbeatRequest is a Heartbeat request.
type HeartbeatRequest struct {
	Group      string
	MemberID   string
	InstanceID string
	Generation int32
}

// LeaveMember is one member a LeaveGroup removes: by member id, by
// instance id, or both.
type LeaveMember struct {
	MemberID   string
	InstanceID string
}

// TopicPartition names one partition of a committed offset: log's, the
// one partition name of the broker.
type TopicPartition = log.TopicPartition

// Offset is a committed offset.
type Offset struct {
	Offset      int64
	LeaderEpoch int32 // -1 when unknown
	Metadata    string
	CommitTime  int64 // ms
	ExpireTime  int64 // ms; -1 unless committed with a retention time (OffsetCommit v2-v4)
	// at is the log offset of the offset's record in __consumer_offsets:
	// a transaction's offset replaces a committed one only if written
	// after it (so a plain commit made while the transaction was open
	// wins, as compaction would leave it).
	at int64
}

// CommitOffset is one partition of an OffsetCommit.
type CommitOffset struct {
	TopicPartition
	Offset      int64
	LeaderEpoch int32
	Metadata    string
	// CommitTime, when positive, is the commit time the client gave
	// (OffsetCommit v1); otherwise the coordinator's clock is. Expiry
	// counts from it.
	CommitTime int64
}

// CommitRequest is an OffsetCommit request.
type CommitRequest struct {
	Group      string
	Generation int32 // -1 for a commit outside group management
	MemberID   string
	InstanceID string
	// RetentionMs (v2-v4) sets an expiry time on the offsets; -1 leaves
	// them to offsets.retention.minutes.
	RetentionMs int64
	Offsets     []CommitOffset
	// UnknownGroupIsNotFound (v9+): a commit with a generation to a group
	// that does not exist gets GROUP_ID_NOT_FOUND rather than
	// ILLEGAL_GENERATION. It also marks a v9+ request, the versions a
	// member of a KIP-848 consumer group must commit with (its member
	// epoch in Generation).
	UnknownGroupIsNotFound bool
}

// FetchTopic is one topic of an OffsetFetch.
type FetchTopic struct {
	Topic      string
	Partitions []int32
}

// FetchRequest is one group of an OffsetFetch.
type FetchRequest struct {
	Group  string
	Topics []FetchTopic // nil: every partition with a committed offset
	// RequireStable (v7+, KIP-447): a partition with offsets of a
	// transaction still open gets UNSTABLE_OFFSET_COMMIT instead of its
	// committed offset.
	RequireStable bool
	// MemberID and MemberEpoch (v9+) are checked against a consumer
	// group's members (KIP-848); "" and -1 are not checked.
	MemberID    string
	MemberEpoch int32
}

// FetchedPartition is one partition's committed offset; Offset -1 when
// there is none.
type FetchedPartition struct {
	Partition   int32
	Offset      int64
	LeaderEpoch int32
	Metadata    string
	Err         error // UNSTABLE_OFFSET_COMMIT with require_stable
}

// FetchedTopic is one topic of an OffsetFetch response.
type FetchedTopic struct {
	Topic      string
	Partitions []FetchedPartition
}

// Group types, as ListGroups (v5+) names them (KIP-848).
const (
	ClassicType  = "classic"
	ConsumerType = "consumer"
)

// Listing is one group in ListGroups.
type Listing struct {
	Group        string
	ProtocolType string
	State        State
	Type         string // ClassicType or ConsumerType
}

// MemberDescription is one member in DescribeGroups.
type MemberDescription struct {
	MemberID   string
	InstanceID string
	ClientID   string
	ClientHost string
	Metadata   []byte // Stable groups only
	Assignment []byte // Stable groups only
}

// Description is a group in DescribeGroups.
type Description struct {
	State        State
	ProtocolType string
	Protocol     string // Stable groups only
	Members      []MemberDescription
}
