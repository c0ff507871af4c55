package group

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"kzero/coord/coordrecord"
)

// The records of KIP-848 consumer groups in __consumer_offsets, in Kafka's
// format (the coordinator-key and coordinator-value schemas of Kafka's
// group coordinator), so Kafka's tools decode them:
//
//	key   int16 record type, then GroupId string (int16 length), then for
//	      types 5, 7 and 8 MemberId string
//	value null: a tombstone; else int16 version 0, then the fields below,
//	      all schemas flexible (compact strings and arrays, a tagged
//	      fields section at the end of every struct)
//
//	3 ConsumerGroupMetadata             Epoch int32; tag 0: MetadataHash int64
//	5 ConsumerGroupMemberMetadata       InstanceId string?, RackId string?,
//	                                    ClientId, ClientHost string,
//	                                    SubscribedTopicNames []string,
//	                                    SubscribedTopicRegex string?,
//	                                    RebalanceTimeoutMs int32,
//	                                    ServerAssignor string?;
//	                                    tag 0: ClassicMemberMetadata, a
//	                                    nullable struct (int8 1, then
//	                                    SessionTimeoutMs int32,
//	                                    SupportedProtocols []{Name string,
//	                                    Metadata bytes}) for a classic
//	                                    member
//	6 ConsumerGroupTargetAssignmentMetadata  AssignmentEpoch int32; tag 0:
//	                                    AssignmentTimestamp int64
//	                                    (KIP-1263: when the target was
//	                                    computed, ms; written unless 0)
//	7 ConsumerGroupTargetAssignmentMember    TopicPartitions []{TopicId uuid,
//	                                         Partitions []int32}
//	8 ConsumerGroupCurrentMemberAssignment   MemberEpoch, PreviousMemberEpoch
//	                                    int32, State int8, AssignedPartitions,
//	                                    PartitionsPendingRevocation
//	                                    []{TopicId uuid, Partitions []int32;
//	                                    tag 0: AssignmentEpochs []int32}
//
// Type 4 (ConsumerGroupPartitionMetadata, written by Kafka 4.0) and 16
// (resolved regular expressions) are read and ignored: kzero resolves
// subscriptions from the metadata image and keeps a hash of them in the
// group's epoch record instead. Unknown tagged fields are skipped.

// Record types of consumer groups.
const (
	consumerEpochType        = 3
	consumerMemberType       = 5
	consumerTargetEpochType  = 6
	consumerTargetMemberType = 7
	consumerCurrentType      = 8
)

// consumerRecord is one decoded consumer group record; its strings and
// slices are copies.
type consumerRecord struct {
	typ       int16
	member    string // types 5, 7, 8
	tombstone bool
	epoch     int32 // 3: the group epoch; 6: the assignment epoch
	metaHash  int64 // 3
	// assignedAt (6): AssignmentTimestamp (tag 0, KIP-1263), ms; 0 none.
	assignedAt int64
	meta       memberMeta
	target     tpSet             // 7
	current    currentAssignment // 8
}

// memberMeta is a member's metadata (record type 5). An empty string is a
// null one.
type memberMeta struct {
	instanceID, rackID   string
	clientID, clientHost string
	topics               []string
	regex                string
	rebalanceTimeout     int32
	assignor             string
	// classic: the member uses the classic protocol (JoinGroup, SyncGroup,
	// Heartbeat) inside the consumer group; nil for a consumer protocol
	// member.
	classic *classicMeta
}

// classicMeta is what a classic member of a consumer group joined with:
// its session timeout (ms) and the protocols it supports, with their
// metadata (a ConsumerProtocolSubscription each).
type classicMeta struct {
	sessionTimeout int32
	protocols      []Protocol
}

// equal reports whether two classic metadata are the same (nil for none).
func (a *classicMeta) equal(b *classicMeta) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.sessionTimeout != b.sessionTimeout || len(a.protocols) != len(b.protocols) {
		return false
	}
	for i, p := range a.protocols {
		if p.Name != b.protocols[i].Name || !bytes.Equal(p.Metadata, b.protocols[i].Metadata) {
			return false
		}
	}
	return true
}

// memberState is a member's reconciliation state (Kafka's MemberState).
type memberState int8

const (
	// memberStable: the member has its target assignment at its epoch.
	memberStable memberState = 0
	// memberUnrevoked: the member must revoke partitions first.
	memberUnrevoked memberState = 1
	// memberUnreleased: the member waits for partitions other members
	// have not released yet.
	memberUnreleased memberState = 2
)

// currentAssignment is a member's epoch and partitions (record type 8).
type currentAssignment struct {
	epoch, previousEpoch int32
	state                memberState
	assigned, revoking   tpSet
	// epochs is the epoch at which the member got each partition it
	// holds (KIP-1251); a partition without one got it at
	// max(epoch, 0).
	epochs map[tp]int32
}

// epochOf is the epoch at which the member got partition p of topic id.
func (c *currentAssignment) epochOf(id topicID, p int32) int32 {
	return heldSince(c.epochs, tp{id, p}, c.epoch)
}

// appendConsumerKey appends the key of a consumer group record.
func appendConsumerKey(dst []byte, typ int16, group, member string) []byte {
	return appendRecordKey(dst, typ, group, member, consumerTypes.keyHasMember(typ))
}

// appendConsumerValue appends r's value; nothing for a tombstone.
func appendConsumerValue(dst []byte, r *consumerRecord) []byte {
	if r.tombstone {
		return dst
	}
	dst = appendValueVersion(dst)
	switch r.typ {
	case consumerEpochType:
		dst = coordrecord.AppendInt32(dst, r.epoch)
		if r.metaHash == 0 { // MetadataHash: tag 0, default 0
			return coordrecord.AppendNoTags(dst)
		}
		dst = coordrecord.AppendTagCount(dst, 1)
		return coordrecord.AppendTaggedInt64(dst, 0, r.metaHash)
	case consumerMemberType:
		m := &r.meta
		dst = coordrecord.AppendCompactNullableString(dst, m.instanceID)
		dst = coordrecord.AppendCompactNullableString(dst, m.rackID)
		dst = coordrecord.AppendCompactString(dst, m.clientID)
		dst = coordrecord.AppendCompactString(dst, m.clientHost)
		dst = coordrecord.AppendCompactStrings(dst, m.topics)
		dst = coordrecord.AppendCompactNullableString(dst, m.regex)
		dst = coordrecord.AppendInt32(dst, m.rebalanceTimeout)
		dst = coordrecord.AppendCompactNullableString(dst, m.assignor)
		if m.classic == nil { // ClassicMemberMetadata: tag 0, default null
			return coordrecord.AppendNoTags(dst)
		}
		dst = coordrecord.AppendTagCount(dst, 1)
		return coordrecord.AppendTag(dst, 0, appendClassicMeta(nil, m.classic))
	case consumerTargetEpochType:
		return appendTargetMetadata(dst, r.epoch, r.assignedAt)
	case consumerTargetMemberType:
		dst = appendTopicPartitions(dst, r.target, nil)
		return coordrecord.AppendNoTags(dst)
	case consumerCurrentType:
		c := &r.current
		dst = coordrecord.AppendInt32(dst, c.epoch)
		dst = coordrecord.AppendInt32(dst, c.previousEpoch)
		dst = coordrecord.AppendInt8(dst, int8(c.state))
		dst = appendTopicPartitions(dst, c.assigned, c.epochOf)
		dst = appendTopicPartitions(dst, c.revoking, c.epochOf)
		return coordrecord.AppendNoTags(dst)
	}
	return dst
}

// appendTopicPartitions writes s as []{TopicId, Partitions}, topics in id
// order. With epochOf, each topic's partitions' assignment epochs follow
// in tagged field 0 (AssignmentEpochs, KIP-1251).
func appendTopicPartitions(dst []byte, s tpSet, epochOf func(topicID, int32) int32) []byte {
	return appendPartitionsBy(dst, s.ids(), s, coordrecord.AppendUUID, epochOf)
}

// decodeConsumerRecord reads a consumer group record of type typ. Any bytes
// give a record or an error, never a panic.
func decodeConsumerRecord(typ int16, key, value []byte) (group string, r consumerRecord, err error) {
	r.typ, r.tombstone = typ, value == nil
	group, r.member, err = decodeGroupRecord("consumer", typ, key, value, consumerTypes.keyHasMember(typ), func(vr *coordrecord.Reader) {
		switch typ {
		case consumerEpochType:
			r.epoch = vr.Int32()
			vr.Tags(func(tag uint64, b []byte) {
				if tag == 0 && len(b) == 8 {
					r.metaHash = int64(binary.BigEndian.Uint64(b))
				}
			})
		case consumerMemberType:
			m := &r.meta
			m.instanceID = vr.CompactNullableString()
			m.rackID = vr.CompactNullableString()
			m.clientID = vr.CompactString()
			m.clientHost = vr.CompactString()
			n := vr.ArrayLen()
			for range n {
				m.topics = append(m.topics, vr.CompactString())
			}
			m.regex = vr.CompactNullableString()
			m.rebalanceTimeout = vr.Int32()
			m.assignor = vr.CompactNullableString()
			vr.Tags(func(tag uint64, b []byte) {
				if tag != 0 {
					return
				}
				c, err := decodeClassicMeta(b)
				if err != nil {
					vr.Fail(err)
				}
				m.classic = c
			})
		case consumerTargetEpochType:
			r.epoch, r.assignedAt = readTargetMetadata(vr)
		case consumerTargetMemberType:
			r.target = readTopicPartitions(vr, nil)
			vr.Tags(nil)
		case consumerCurrentType:
			c := &r.current
			c.epoch = vr.Int32()
			c.previousEpoch = vr.Int32()
			c.state = memberState(vr.Int8())
			c.epochs = map[tp]int32{}
			c.assigned = readTopicPartitions(vr, c.epochs)
			c.revoking = readTopicPartitions(vr, c.epochs)
			vr.Tags(nil)
		}
	})
	return group, r, err
}

// readTopicPartitions reads []{TopicId uuid, Partitions []int32, tags},
// with the assignment epochs of tag 0 into epochs (when not nil).
func readTopicPartitions(r *coordrecord.Reader, epochs map[tp]int32) tpSet {
	var epoch func(topicID, int32, int32)
	if epochs != nil {
		epoch = func(id topicID, p, e int32) { epochs[tp{id, p}] = e }
	}
	return tpBuilder(readPartitionsBy(r, (*coordrecord.Reader).UUID, epoch)).set()
}

// appendClassicMeta appends the ClassicMemberMetadata struct of a member
// record, with the presence byte of a nullable struct.
func appendClassicMeta(dst []byte, c *classicMeta) []byte {
	dst = coordrecord.AppendInt8(dst, 1)
	dst = coordrecord.AppendInt32(dst, c.sessionTimeout)
	dst = coordrecord.AppendArrayLen(dst, len(c.protocols))
	for _, p := range c.protocols {
		dst = coordrecord.AppendCompactString(dst, p.Name)
		dst = coordrecord.AppendCompactBytes(dst, p.Metadata)
		dst = coordrecord.AppendNoTags(dst)
	}
	return coordrecord.AppendNoTags(dst)
}

// decodeClassicMeta reads a ClassicMemberMetadata tagged field: with the
// presence byte of a nullable struct (-1: null) or, as a writer may omit
// it, without; the form that reads the field's bytes exactly wins.
func decodeClassicMeta(b []byte) (*classicMeta, error) {
	if len(b) == 1 && b[0] == 0xff {
		return nil, nil
	}
	if len(b) > 0 && b[0] == 1 {
		if c, err := readClassicMeta(b[1:]); err == nil {
			return c, nil
		}
	}
	return readClassicMeta(b)
}

func readClassicMeta(b []byte) (*classicMeta, error) {
	r := coordrecord.NewReader(b)
	c := &classicMeta{sessionTimeout: r.Int32()}
	n := r.ArrayLen()
	for i := 0; i < n && r.Err() == nil; i++ {
		name := r.CompactString()
		meta := r.CompactBytes()
		r.Tags(nil)
		c.protocols = append(c.protocols, Protocol{Name: name, Metadata: bytes.Clone(meta)})
	}
	r.Tags(nil)
	if r.Err() == nil && r.Len() != 0 {
		r.Fail(fmt.Errorf("%d bytes after the classic member metadata", r.Len()))
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("classic member metadata: %w", err)
	}
	return c, nil
}
