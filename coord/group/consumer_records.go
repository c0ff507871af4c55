package group

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
//	6 ConsumerGroupTargetAssignmentMetadata  AssignmentEpoch int32
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
	meta      memberMeta
	target    tpSet             // 7
	current   currentAssignment // 8
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
	if e, ok := c.epochs[tp{id, p}]; ok {
		return e
	}
	return max(c.epoch, 0)
}

var errConsumerRecord = errors.New("malformed consumer group record")

// appendConsumerKey appends the key of a consumer group record.
func appendConsumerKey(dst []byte, typ int16, group, member string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(typ))
	dst = appendString16(dst, group)
	if typ == consumerMemberType || typ == consumerTargetMemberType || typ == consumerCurrentType {
		dst = appendString16(dst, member)
	}
	return dst
}

// appendConsumerValue appends r's value; nothing for a tombstone.
func appendConsumerValue(dst []byte, r *consumerRecord) []byte {
	if r.tombstone {
		return dst
	}
	dst = binary.BigEndian.AppendUint16(dst, 0)
	switch r.typ {
	case consumerEpochType:
		dst = binary.BigEndian.AppendUint32(dst, uint32(r.epoch))
		if r.metaHash == 0 {
			return append(dst, 0)
		}
		dst = append(dst, 1, 0, 8) // one tagged field: tag 0, 8 bytes
		return binary.BigEndian.AppendUint64(dst, uint64(r.metaHash))
	case consumerMemberType:
		m := &r.meta
		dst = appendNullableCompact(dst, m.instanceID)
		dst = appendNullableCompact(dst, m.rackID)
		dst = appendCompact(dst, m.clientID)
		dst = appendCompact(dst, m.clientHost)
		dst = binary.AppendUvarint(dst, uint64(len(m.topics))+1)
		for _, t := range m.topics {
			dst = appendCompact(dst, t)
		}
		dst = appendNullableCompact(dst, m.regex)
		dst = binary.BigEndian.AppendUint32(dst, uint32(m.rebalanceTimeout))
		dst = appendNullableCompact(dst, m.assignor)
		if m.classic == nil {
			return append(dst, 0)
		}
		body := appendClassicMeta(nil, m.classic)
		dst = append(dst, 1, 0) // one tagged field: tag 0
		dst = binary.AppendUvarint(dst, uint64(len(body)))
		return append(dst, body...)
	case consumerTargetEpochType:
		dst = binary.BigEndian.AppendUint32(dst, uint32(r.epoch))
		return append(dst, 0)
	case consumerTargetMemberType:
		dst = appendTopicPartitions(dst, r.target)
		return append(dst, 0)
	case consumerCurrentType:
		c := &r.current
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.epoch))
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.previousEpoch))
		dst = append(dst, byte(c.state))
		dst = appendAssignedPartitions(dst, c, c.assigned)
		dst = appendAssignedPartitions(dst, c, c.revoking)
		return append(dst, 0)
	}
	return dst
}

func appendString16(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

func appendCompact(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s))+1)
	return append(dst, s...)
}

// appendNullableCompact writes "" as null.
func appendNullableCompact(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, 0)
	}
	return appendCompact(dst, s)
}

// appendTopicPartitions writes s as []{TopicId, Partitions}, topics in id
// order.
func appendTopicPartitions(dst []byte, s tpSet) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s))+1)
	for _, id := range s.ids() {
		dst = append(dst, id[:]...)
		ps := s[id]
		dst = binary.AppendUvarint(dst, uint64(len(ps))+1)
		for _, p := range ps {
			dst = binary.BigEndian.AppendUint32(dst, uint32(p))
		}
		dst = append(dst, 0)
	}
	return dst
}

// appendAssignedPartitions writes s as []{TopicId, Partitions} with each
// partition's assignment epoch in tagged field 0 (KIP-1251).
func appendAssignedPartitions(dst []byte, c *currentAssignment, s tpSet) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s))+1)
	for _, id := range s.ids() {
		dst = append(dst, id[:]...)
		ps := s[id]
		dst = binary.AppendUvarint(dst, uint64(len(ps))+1)
		for _, p := range ps {
			dst = binary.BigEndian.AppendUint32(dst, uint32(p))
		}
		n := uint64(len(ps)) + 1
		dst = append(dst, 1, 0) // one tagged field, tag 0
		dst = binary.AppendUvarint(dst, uint64(uvarintLen(n))+4*uint64(len(ps)))
		dst = binary.AppendUvarint(dst, n)
		for _, p := range ps {
			dst = binary.BigEndian.AppendUint32(dst, uint32(c.epochOf(id, p)))
		}
	}
	return dst
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// decodeConsumerRecord reads a consumer group record of type typ. Any bytes
// give a record or an error, never a panic.
func decodeConsumerRecord(typ int16, key, value []byte) (group string, r consumerRecord, err error) {
	kr := reader{b: key[2:]}
	group = kr.string16()
	r.typ = typ
	if typ == consumerMemberType || typ == consumerTargetMemberType || typ == consumerCurrentType {
		r.member = kr.string16()
	}
	if kr.err != nil {
		return "", r, fmt.Errorf("consumer group record key of type %d: %w", typ, kr.err)
	}
	if value == nil {
		r.tombstone = true
		return group, r, nil
	}
	vr := reader{b: value}
	if v := vr.int16(); vr.err == nil && v != 0 {
		return "", r, fmt.Errorf("consumer group record type %d value version %d: %w", typ, v, errConsumerRecord)
	}
	switch typ {
	case consumerEpochType:
		r.epoch = vr.int32()
		vr.tags(func(tag uint64, b []byte) {
			if tag == 0 && len(b) == 8 {
				r.metaHash = int64(binary.BigEndian.Uint64(b))
			}
		})
	case consumerMemberType:
		m := &r.meta
		m.instanceID = vr.nullableCompact()
		m.rackID = vr.nullableCompact()
		m.clientID = vr.compact()
		m.clientHost = vr.compact()
		n := vr.arrayLen()
		for range n {
			m.topics = append(m.topics, vr.compact())
		}
		m.regex = vr.nullableCompact()
		m.rebalanceTimeout = vr.int32()
		m.assignor = vr.nullableCompact()
		vr.tags(func(tag uint64, b []byte) {
			if tag != 0 {
				return
			}
			c, err := decodeClassicMeta(b)
			if err != nil && vr.err == nil {
				vr.err = err
			}
			m.classic = c
		})
	case consumerTargetEpochType:
		r.epoch = vr.int32()
		vr.tags(nil)
	case consumerTargetMemberType:
		r.target = vr.topicPartitions()
		vr.tags(nil)
	case consumerCurrentType:
		c := &r.current
		c.epoch = vr.int32()
		c.previousEpoch = vr.int32()
		c.state = memberState(vr.int8())
		c.epochs = map[tp]int32{}
		c.assigned = vr.assignedPartitions(c.epochs)
		c.revoking = vr.assignedPartitions(c.epochs)
		vr.tags(nil)
	}
	if vr.err != nil {
		return "", r, fmt.Errorf("consumer group record of type %d for %q: %w", typ, group, vr.err)
	}
	return group, r, nil
}

// reader reads big-endian and flexible-version fields with a sticky error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) need(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = fmt.Errorf("%w: %d bytes needed, %d left", errConsumerRecord, n, len(r.b))
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) int8() int8 {
	if b := r.need(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (r *reader) int16() int16 {
	if b := r.need(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32() int32 {
	if b := r.need(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad varint", errConsumerRecord)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// length reads a compact length (n+1; 0 is null); -1 for null.
func (r *reader) length() int {
	v := r.uvarint()
	if r.err != nil {
		return -1
	}
	if v > uint64(len(r.b))+1 || v > math.MaxInt32 {
		r.err = fmt.Errorf("%w: length %d beyond the %d bytes left", errConsumerRecord, v-1, len(r.b))
		return -1
	}
	return int(v) - 1
}

func (r *reader) string16() string {
	n := int(r.int16())
	if r.err == nil && n < 0 {
		r.err = fmt.Errorf("%w: null string", errConsumerRecord)
	}
	return string(r.need(n))
}

func (r *reader) compact() string {
	n := r.length()
	if r.err == nil && n < 0 {
		r.err = fmt.Errorf("%w: null string", errConsumerRecord)
	}
	return string(r.need(n))
}

func (r *reader) nullableCompact() string {
	n := r.length()
	if n < 0 {
		return ""
	}
	return string(r.need(n))
}

// arrayLen reads a compact array's length; a null array is empty. Every
// element takes at least one byte, which bounds what a length may claim.
func (r *reader) arrayLen() int { return max(r.length(), 0) }

// tags reads a tagged fields section, giving each field to f (if any).
func (r *reader) tags(f func(tag uint64, b []byte)) {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: %d tagged fields", errConsumerRecord, n)
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		tag := r.uvarint()
		size := r.uvarint()
		if size > uint64(len(r.b)) {
			r.err = fmt.Errorf("%w: tagged field of %d bytes", errConsumerRecord, size)
			return
		}
		b := r.need(int(size))
		if f != nil && r.err == nil {
			f(tag, b)
		}
	}
}

// topicPartitions reads []{TopicId uuid, Partitions []int32, tags}.
func (r *reader) topicPartitions() tpSet { return r.assignedPartitions(nil) }

// assignedPartitions reads []{TopicId uuid, Partitions []int32, tags}, with
// the assignment epochs of tag 0 into epochs (when not nil).
func (r *reader) assignedPartitions(epochs map[tp]int32) tpSet {
	n := r.arrayLen()
	b := tpBuilder{}
	for i := 0; i < n && r.err == nil; i++ {
		var id topicID
		copy(id[:], r.need(16))
		ps := r.int32s()
		for _, p := range ps {
			b.add(id, p)
		}
		r.tags(func(tag uint64, v []byte) {
			if tag != 0 || epochs == nil {
				return
			}
			er := reader{b: v}
			if es := er.int32s(); er.err == nil && len(es) == len(ps) {
				for j, p := range ps {
					epochs[tp{id, p}] = es[j]
				}
			}
		})
	}
	return b.set()
}

// int32s reads a compact []int32; a null one is empty.
func (r *reader) int32s() []int32 {
	m := r.arrayLen()
	if m > len(r.b)/4 {
		r.err = fmt.Errorf("%w: %d int32s", errConsumerRecord, m)
		return nil
	}
	out := make([]int32, m)
	for i := range out {
		out[i] = r.int32()
	}
	return out
}

// appendClassicMeta appends the ClassicMemberMetadata struct of a member
// record, with the presence byte of a nullable struct.
func appendClassicMeta(dst []byte, c *classicMeta) []byte {
	dst = append(dst, 1)
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.sessionTimeout))
	dst = binary.AppendUvarint(dst, uint64(len(c.protocols))+1)
	for _, p := range c.protocols {
		dst = appendCompact(dst, p.Name)
		dst = binary.AppendUvarint(dst, uint64(len(p.Metadata))+1)
		dst = append(dst, p.Metadata...)
		dst = append(dst, 0)
	}
	return append(dst, 0)
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
	r := reader{b: b}
	c := &classicMeta{sessionTimeout: r.int32()}
	n := r.arrayLen()
	for i := 0; i < n && r.err == nil; i++ {
		name := r.compact()
		m := r.length()
		meta := r.need(max(m, 0))
		r.tags(nil)
		c.protocols = append(c.protocols, Protocol{Name: name, Metadata: bytes.Clone(meta)})
	}
	r.tags(nil)
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes after the classic member metadata", errConsumerRecord, len(r.b))
	}
	if r.err != nil {
		return nil, fmt.Errorf("classic member metadata: %w", r.err)
	}
	return c, nil
}
