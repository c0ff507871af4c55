package group

import (
	"encoding/binary"
	"fmt"
)

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
//	11 ShareGroupMetadata               Epoch int32; tag 0: MetadataHash int64
//	10 ShareGroupMemberMetadata         RackId string?, ClientId,
//	                                    ClientHost string,
//	                                    SubscribedTopicNames []string
//	12 ShareGroupTargetAssignmentMetadata  AssignmentEpoch int32
//	13 ShareGroupTargetAssignmentMember    TopicPartitions []{TopicId uuid,
//	                                       Partitions []int32}
//	14 ShareGroupCurrentMemberAssignment   MemberEpoch, PreviousMemberEpoch
//	                                    int32, State int8,
//	                                    AssignedPartitions []{TopicId uuid,
//	                                    Partitions []int32}
//
// Type 9 (ShareGroupPartitionMetadata, Kafka 4.0) is read and ignored, as
// for consumer groups: the subscribed topics' metadata hash in the group's
// record replaces it. Type 15 (ShareGroupStatePartitionMetadata, which
// partitions have state at the share coordinator) is not written: share
// partition state is initialized by the partition leader on first use (see
// doc.go), and read records of it are ignored.

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
	meta      shareMemberMeta
	target    tpSet        // 13
	current   shareCurrent // 14
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

// shareKeyHasMember reports whether a share record type's key names a
// member.
func shareKeyHasMember(typ int16) bool {
	return typ == shareMemberType || typ == shareTargetMemberType || typ == shareCurrentType
}

// appendShareKey appends the key of a share group record.
func appendShareKey(dst []byte, typ int16, group, member string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(typ))
	dst = appendString16(dst, group)
	if shareKeyHasMember(typ) {
		dst = appendString16(dst, member)
	}
	return dst
}

// appendShareValue appends r's value; nothing for a tombstone.
func appendShareValue(dst []byte, r *shareRecord) []byte {
	if r.tombstone {
		return dst
	}
	dst = binary.BigEndian.AppendUint16(dst, 0)
	switch r.typ {
	case shareEpochType:
		dst = binary.BigEndian.AppendUint32(dst, uint32(r.epoch))
		if r.metaHash == 0 {
			return append(dst, 0)
		}
		dst = append(dst, 1, 0, 8) // one tagged field: tag 0, 8 bytes
		return binary.BigEndian.AppendUint64(dst, uint64(r.metaHash))
	case shareMemberType:
		m := &r.meta
		dst = appendNullableCompact(dst, m.rackID)
		dst = appendCompact(dst, m.clientID)
		dst = appendCompact(dst, m.clientHost)
		dst = binary.AppendUvarint(dst, uint64(len(m.topics))+1)
		for _, t := range m.topics {
			dst = appendCompact(dst, t)
		}
		return append(dst, 0)
	case shareTargetEpochType:
		dst = binary.BigEndian.AppendUint32(dst, uint32(r.epoch))
		return append(dst, 0)
	case shareTargetMemberType:
		dst = appendTopicPartitions(dst, r.target)
		return append(dst, 0)
	case shareCurrentType:
		c := &r.current
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.epoch))
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.previousEpoch))
		dst = append(dst, byte(c.state))
		dst = appendTopicPartitions(dst, c.assigned)
		return append(dst, 0)
	}
	return dst
}

// decodeShareRecord reads a share group record of type typ (10 to 14).
// Any bytes give a record or an error, never a panic.
func decodeShareRecord(typ int16, key, value []byte) (group string, r shareRecord, err error) {
	kr := reader{b: key[2:]}
	group = kr.string16()
	r.typ = typ
	if shareKeyHasMember(typ) {
		r.member = kr.string16()
	}
	if kr.err != nil {
		return "", r, fmt.Errorf("share group record key of type %d: %w", typ, kr.err)
	}
	if value == nil {
		r.tombstone = true
		return group, r, nil
	}
	vr := reader{b: value}
	if v := vr.int16(); vr.err == nil && v != 0 {
		return "", r, fmt.Errorf("share group record type %d value version %d: %w", typ, v, errConsumerRecord)
	}
	switch typ {
	case shareEpochType:
		r.epoch = vr.int32()
		vr.tags(func(tag uint64, b []byte) {
			if tag == 0 && len(b) == 8 {
				r.metaHash = int64(binary.BigEndian.Uint64(b))
			}
		})
	case shareMemberType:
		m := &r.meta
		m.rackID = vr.nullableCompact()
		m.clientID = vr.compact()
		m.clientHost = vr.compact()
		n := vr.arrayLen()
		for i := 0; i < n && vr.err == nil; i++ {
			m.topics = append(m.topics, vr.compact())
		}
		vr.tags(nil)
	case shareTargetEpochType:
		r.epoch = vr.int32()
		vr.tags(nil)
	case shareTargetMemberType:
		r.target = vr.topicPartitions()
		vr.tags(nil)
	case shareCurrentType:
		c := &r.current
		c.epoch = vr.int32()
		c.previousEpoch = vr.int32()
		c.state = vr.int8()
		c.assigned = vr.topicPartitions()
		vr.tags(nil)
	}
	if vr.err != nil {
		return "", r, fmt.Errorf("share group record of type %d for %q: %w", typ, group, vr.err)
	}
	return group, r, nil
}
