package group

import "kzero/coord/coordrecord"

// The records of KIP-932 share groups in __consumer_offsets, in Kafka's
// format (the share group coordinator-key and coordinator-value schemas of
// Kafka's group coordinator), so Kafka's tools decode them:
//
//	key   int16 record type, then GroupId string (int16 length), then for
//	      types 10, 13 and 14 MemberId string
//	value null: a tombstone; else int16 version 0, then the fields below,
//	      all schemas flexible (compact strings and arrays, a tagged
//	      fields section at the end of every struct)
//
//	11 ShareGroupMetadata               Epoch int32, MetadataHash int64
//	                                    (not tagged, unlike a consumer
//	                                    group's)
//	10 ShareGroupMemberMetadata         RackId string?, ClientId,
//	                                    ClientHost string,
//	                                    SubscribedTopicNames []string
//	12 ShareGroupTargetAssignmentMetadata  AssignmentEpoch int32; tag 0:
//	                                       AssignmentTimestamp int64
//	                                       (KIP-1263: when the target
//	                                       was computed, ms; written
//	                                       unless 0)
//	13 ShareGroupTargetAssignmentMember    TopicPartitions []{TopicId uuid,
//	                                       Partitions []int32}
//	14 ShareGroupCurrentMemberAssignment   MemberEpoch, PreviousMemberEpoch
//	                                    int32, State int8,
//	                                    AssignedPartitions []{TopicId uuid,
//	                                    Partitions []int32}
//
// The layouts are those of Kafka 4.3's schemas (ShareGroup*.json in
// group-coordinator/src/main/resources/common/message). Type 9
// (ShareGroupPartitionMetadata, Kafka 4.0 only) is read and ignored, as for
// consumer groups: the subscribed topics' metadata hash in the group's
// record replaces it. Type 15 holds which share partitions have state at
// the share coordinator (key: GroupId only):
//
//	15 ShareGroupStatePartitionMetadata  InitializingTopics,
//	                                     InitializedTopics []{TopicId uuid,
//	                                     TopicName string, Partitions
//	                                     []int32, CreateTimestamp int64},
//	                                     DeletingTopics []{TopicId uuid,
//	                                     TopicName string}

// Record types of share groups.
const (
	sharePartitionMetaType  = 9
	shareMemberType         = 10
	shareEpochType          = 11
	shareTargetEpochType    = 12
	shareTargetMemberType   = 13
	shareCurrentType        = 14
	shareStatePartitionType = 15
)

// shareRecord is one decoded share group record; its strings and slices
// are copies.
type shareRecord struct {
	typ       int16
	member    string // types 10, 13, 14
	tombstone bool
	epoch     int32 // 11: the group epoch; 12: the assignment epoch
	metaHash  int64 // 11
	// assignedAt (12): AssignmentTimestamp (tag 0, KIP-1263), ms; 0 none.
	assignedAt int64
	meta       shareMemberMeta
	target     tpSet          // 13
	current    shareCurrent   // 14
	state      shareStateMeta // 15
}

// shareStateMeta is which of a share group's partitions have state at the
// share coordinator (record type 15): being initialized, initialized, and
// topics whose state is being deleted. Each list is sorted by topic id;
// a record holds the whole of it.
type shareStateMeta struct {
	initializing, initialized []stateTopic
	deleting                  []stateTopic // no partitions
}

// stateTopic is one topic of a shareStateMeta list.
type stateTopic struct {
	id         topicID
	name       string
	partitions []int32 // sorted
	createdAt  int64   // ms, CreateTimestamp
}

// shareMemberMeta is a share member's metadata (record type 10). An empty
// rack is a null one.
type shareMemberMeta struct {
	rackID               string
	clientID, clientHost string
	topics               []string // sorted, no duplicates
}

// shareCurrent is a share member's epoch and partitions (record type 14).
// Share members never revoke: a member moves to its target at once, so the
// state is always stable (0).
type shareCurrent struct {
	epoch, previousEpoch int32
	state                int8
	assigned             tpSet
}

// appendShareKey appends the key of a share group record.
func appendShareKey(dst []byte, typ int16, group, member string) []byte {
	return appendRecordKey(dst, typ, group, member, shareTypes.keyHasMember(typ))
}

// appendShareValue appends r's value; nothing for a tombstone.
func appendShareValue(dst []byte, r *shareRecord) []byte {
	if r.tombstone {
		return dst
	}
	dst = appendValueVersion(dst)
	switch r.typ {
	case shareEpochType:
		dst = coordrecord.AppendInt32(dst, r.epoch)
		dst = coordrecord.AppendInt64(dst, r.metaHash)
		return coordrecord.AppendNoTags(dst)
	case shareMemberType:
		m := &r.meta
		dst = coordrecord.AppendCompactNullableString(dst, m.rackID)
		dst = coordrecord.AppendCompactString(dst, m.clientID)
		dst = coordrecord.AppendCompactString(dst, m.clientHost)
		dst = coordrecord.AppendCompactStrings(dst, m.topics)
		return coordrecord.AppendNoTags(dst)
	case shareTargetEpochType:
		return appendTargetMetadata(dst, r.epoch, r.assignedAt)
	case shareTargetMemberType:
		dst = appendTopicPartitions(dst, r.target, nil)
		return coordrecord.AppendNoTags(dst)
	case shareCurrentType:
		c := &r.current
		dst = coordrecord.AppendInt32(dst, c.epoch)
		dst = coordrecord.AppendInt32(dst, c.previousEpoch)
		dst = coordrecord.AppendInt8(dst, c.state)
		dst = appendTopicPartitions(dst, c.assigned, nil)
		return coordrecord.AppendNoTags(dst)
	case shareStatePartitionType:
		m := &r.state
		for _, list := range [][]stateTopic{m.initializing, m.initialized} {
			dst = coordrecord.AppendArrayLen(dst, len(list))
			for i := range list {
				t := &list[i]
				dst = coordrecord.AppendUUID(dst, t.id)
				dst = coordrecord.AppendCompactString(dst, t.name)
				dst = coordrecord.AppendInt32s(dst, t.partitions)
				dst = coordrecord.AppendInt64(dst, t.createdAt)
				dst = coordrecord.AppendNoTags(dst)
			}
		}
		dst = coordrecord.AppendArrayLen(dst, len(m.deleting))
		for i := range m.deleting {
			dst = coordrecord.AppendUUID(dst, m.deleting[i].id)
			dst = coordrecord.AppendCompactString(dst, m.deleting[i].name)
			dst = coordrecord.AppendNoTags(dst)
		}
		return coordrecord.AppendNoTags(dst)
	}
	return dst
}

// readStateTopics reads a list of TopicPartitionsInfo (withPartitions) or
// TopicInfo structs.
func readStateTopics(vr *coordrecord.Reader, withPartitions bool) []stateTopic {
	n := vr.ArrayLen()
	var out []stateTopic
	for i := 0; i < n && vr.Err() == nil; i++ {
		t := stateTopic{id: vr.UUID(), name: vr.CompactString()}
		if withPartitions {
			t.partitions = vr.Int32s()
			t.createdAt = vr.Int64()
		}
		vr.Tags(nil)
		out = append(out, t)
	}
	return out
}

// decodeShareRecord reads a share group record of type typ (10 to 15).
// Any bytes give a record or an error, never a panic.
func decodeShareRecord(typ int16, key, value []byte) (group string, r shareRecord, err error) {
	r.typ, r.tombstone = typ, value == nil
	group, r.member, err = decodeGroupRecord("share", typ, key, value, shareTypes.keyHasMember(typ), func(vr *coordrecord.Reader) {
		switch typ {
		case shareEpochType:
			r.epoch = vr.Int32()
			r.metaHash = vr.Int64()
			vr.Tags(nil)
		case shareMemberType:
			m := &r.meta
			m.rackID = vr.CompactNullableString()
			m.clientID = vr.CompactString()
			m.clientHost = vr.CompactString()
			n := vr.ArrayLen()
			for i := 0; i < n && vr.Err() == nil; i++ {
				m.topics = append(m.topics, vr.CompactString())
			}
			vr.Tags(nil)
		case shareTargetEpochType:
			r.epoch, r.assignedAt = readTargetMetadata(vr)
		case shareTargetMemberType:
			r.target = readTopicPartitions(vr, nil)
			vr.Tags(nil)
		case shareCurrentType:
			c := &r.current
			c.epoch = vr.Int32()
			c.previousEpoch = vr.Int32()
			c.state = vr.Int8()
			c.assigned = readTopicPartitions(vr, nil)
			vr.Tags(nil)
		case shareStatePartitionType:
			m := &r.state
			m.initializing = readStateTopics(vr, true)
			m.initialized = readStateTopics(vr, true)
			m.deleting = readStateTopics(vr, false)
			vr.Tags(nil)
		}
	})
	return group, r, err
}
