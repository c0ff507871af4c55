package group

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The records of __consumer_offsets, in Kafka's format, so that Kafka's
// tools (kafka-console-consumer's offsets formatter, kafka-dump-log
// --offsets-decoder) read them:
//
//	key   int16 version, then by version:
//	      0, 1  OffsetCommitKey      group string, topic string, partition int32
//	      2     GroupMetadataKey     group string
//	      3-8   KIP-848 consumer group records (consumer_records.go)
//	      10-14 KIP-932 share group records (share_records.go)
//	      17, 19-23 KIP-1071 streams group records (streams_records.go)
//	      other share and streams group records (15, 16, 18, 24...): skipped
//	value null: a tombstone (the offset or the group is deleted), else
//	      OffsetCommitValue v3 (v1 when the offset has an expiry time) or
//	      GroupMetadataValue v3.
//
// Strings are int16-length prefixed (non-flexible versions).

// Record key and value versions kzero writes, as Kafka 4 does.
const (
	offsetKeyVersion   = 1
	groupKeyVersion    = 2
	offsetValueVersion = 3
	groupValueVersion  = 3
)

// recordKind is what a __consumer_offsets record holds.
type recordKind int8

const (
	recordOther    recordKind = iota // a key version this coordinator does not keep
	recordOffset                     // a committed offset, or its tombstone
	recordGroup                      // a group's metadata, or its tombstone
	recordConsumer                   // a record of a KIP-848 consumer group
	recordStreams                    // a record of a KIP-1071 streams group
	recordShare                      // a record of a KIP-932 share group
)

// record is one decoded record. Its strings and bytes are copies.
type record struct {
	kind   recordKind
	group  string
	tp     TopicPartition
	offset Offset                   // recordOffset, unless a tombstone
	meta   *kmsg.GroupMetadataValue // recordGroup, nil for a tombstone
	cr     consumerRecord           // recordConsumer
	sr     streamsRecord            // recordStreams
	shr    shareRecord              // recordShare
}

var errShortKey = errors.New("__consumer_offsets record key shorter than its version")

// decodeRecord reads a record of __consumer_offsets; value nil is a
// tombstone. Any bytes give a record or an error, never a panic.
func decodeRecord(key, value []byte) (record, error) {
	if len(key) < 2 {
		return record{}, errShortKey
	}
	switch v := int16(binary.BigEndian.Uint16(key)); v {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return record{}, fmt.Errorf("offset commit key v%d: %w", v, err)
		}
		r := record{kind: recordOffset, group: k.Group, tp: TopicPartition{Topic: k.Topic, Partition: k.Partition}}
		if value == nil {
			return r, nil
		}
		o, err := decodeOffsetValue(value)
		if err != nil {
			return record{}, fmt.Errorf("offset commit of group %q %s-%d: %w", k.Group, k.Topic, k.Partition, err)
		}
		r.offset = o
		return r, nil
	case 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return record{}, fmt.Errorf("group metadata key: %w", err)
		}
		r := record{kind: recordGroup, group: k.Group}
		if value == nil {
			return r, nil
		}
		meta, err := decodeGroupValue(value)
		if err != nil {
			return record{}, fmt.Errorf("group metadata of %q: %w", k.Group, err)
		}
		r.meta = meta
		return r, nil
	case consumerEpochType, consumerMemberType, consumerTargetEpochType, consumerTargetMemberType, consumerCurrentType:
		group, cr, err := decodeConsumerRecord(v, key, value)
		if err != nil {
			return record{}, err
		}
		return record{kind: recordConsumer, group: group, cr: cr}, nil
	case streamsEpochType, streamsMemberType, streamsTargetEpochType, streamsTargetMemberType, streamsCurrentType, streamsTopologyType:
		group, sr, err := decodeStreamsRecord(v, key, value)
		if err != nil {
			return record{}, err
		}
		return record{kind: recordStreams, group: group, sr: sr}, nil
	case shareMemberType, shareEpochType, shareTargetEpochType, shareTargetMemberType, shareCurrentType, shareStatePartitionType:
		group, sr, err := decodeShareRecord(v, key, value)
		if err != nil {
			return record{}, err
		}
		return record{kind: recordShare, group: group, shr: sr}, nil
	default:
		return record{kind: recordOther}, nil
	}
}

func decodeOffsetValue(b []byte) (Offset, error) {
	if len(b) < 2 {
		return Offset{}, errors.New("value shorter than its version")
	}
	if v := int16(binary.BigEndian.Uint16(b)); v < 0 || v > 4 {
		return Offset{}, fmt.Errorf("unknown offset commit value version %d", v)
	}
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(b); err != nil {
		return Offset{}, err
	}
	o := Offset{Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitTime: v.CommitTimestamp, ExpireTime: -1}
	if v.Version >= 3 {
		o.LeaderEpoch = v.LeaderEpoch
	}
	if v.Version == 1 {
		o.ExpireTime = v.ExpireTimestamp
	}
	return o, nil
}

func decodeGroupValue(b []byte) (*kmsg.GroupMetadataValue, error) {
	if len(b) < 2 {
		return nil, errors.New("value shorter than its version")
	}
	if v := int16(binary.BigEndian.Uint16(b)); v < 0 || v > 4 {
		return nil, fmt.Errorf("unknown group metadata value version %d", v)
	}
	v := new(kmsg.GroupMetadataValue)
	if err := v.ReadFrom(b); err != nil {
		return nil, err
	}
	// Bytes alias the record; the record buffer is reused.
	for i := range v.Members {
		m := &v.Members[i]
		m.Subscription, m.Assignment = bytes.Clone(m.Subscription), bytes.Clone(m.Assignment)
	}
	return v, nil
}

func appendOffsetKey(dst []byte, group string, tp TopicPartition) []byte {
	k := kmsg.OffsetCommitKey{Version: offsetKeyVersion, Group: group, Topic: tp.Topic, Partition: tp.Partition}
	return k.AppendTo(dst)
}

func appendOffsetValue(dst []byte, o Offset) []byte {
	v := kmsg.OffsetCommitValue{Version: offsetValueVersion, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch,
		Metadata: o.Metadata, CommitTimestamp: o.CommitTime}
	if o.ExpireTime >= 0 {
		v.Version, v.ExpireTimestamp = 1, o.ExpireTime
	}
	return v.AppendTo(dst)
}

func appendGroupKey(dst []byte, group string) []byte {
	k := kmsg.GroupMetadataKey{Version: groupKeyVersion, Group: group}
	return k.AppendTo(dst)
}

func appendGroupValue(dst []byte, v *kmsg.GroupMetadataValue) []byte {
	v.Version = groupValueVersion
	return v.AppendTo(dst)
}

// metadataValue is the group as its metadata record stores it; a store of
// the leader's assignment stores that assignment.
func (g *Group) metadataValue(st *store) *kmsg.GroupMetadataValue {
	v := &kmsg.GroupMetadataValue{
		Version:               groupValueVersion,
		ProtocolType:          g.protocolType,
		Generation:            g.generation,
		CurrentStateTimestamp: g.stateTime,
	}
	if g.protocol != "" {
		p := g.protocol
		v.Protocol = &p
	}
	if g.leader != "" && len(g.members) > 0 {
		l := g.leader
		v.Leader = &l
	}
	v.Members = make([]kmsg.GroupMetadataValueMember, 0, len(g.order))
	for _, m := range g.order {
		vm := kmsg.GroupMetadataValueMember{
			MemberID:               m.id,
			ClientID:               m.clientID,
			ClientHost:             m.clientHost,
			RebalanceTimeoutMillis: m.rebalanceTimeout,
			SessionTimeoutMillis:   m.sessionTimeout,
			Subscription:           m.metadataFor(g.protocol),
			Assignment:             m.assignment,
		}
		if m.instanceID != "" {
			id := m.instanceID
			vm.InstanceID = &id
		}
		if st != nil && st.kind == storeSync {
			vm.Assignment = st.assignment[m.id]
		}
		if vm.Subscription == nil {
			vm.Subscription = []byte{}
		}
		if vm.Assignment == nil {
			vm.Assignment = []byte{}
		}
		v.Members = append(v.Members, vm)
	}
	return v
}

// loadGroup rebuilds a group from its metadata record: Stable with its
// members if it had any (their sessions restart at now), else Empty.
func loadGroup(id string, policy *Policy, v *kmsg.GroupMetadataValue, now int64) *Group {
	g := newGroup(id, policy, now)
	g.protocolType = v.ProtocolType
	g.generation = v.Generation
	if v.Protocol != nil {
		g.protocol = *v.Protocol
	}
	g.stateTime = -1
	if v.Version >= 2 && v.CurrentStateTimestamp > 0 {
		g.stateTime = v.CurrentStateTimestamp
	}
	for _, vm := range v.Members {
		if vm.MemberID == "" || g.members[vm.MemberID] != nil {
			continue
		}
		m := &member{
			id:               vm.MemberID,
			clientID:         vm.ClientID,
			clientHost:       vm.ClientHost,
			rebalanceTimeout: vm.RebalanceTimeoutMillis,
			sessionTimeout:   vm.SessionTimeoutMillis,
			protocolType:     v.ProtocolType,
			protocols:        []Protocol{{Name: g.protocol, Metadata: vm.Subscription}},
			assignment:       vm.Assignment,
			deadline:         now + int64(vm.SessionTimeoutMillis),
		}
		if m.rebalanceTimeout < 0 {
			m.rebalanceTimeout = m.sessionTimeout
		}
		if vm.InstanceID != nil && *vm.InstanceID != "" {
			if _, dup := g.static[*vm.InstanceID]; !dup {
				m.instanceID = *vm.InstanceID
			}
		}
		g.add(m)
	}
	if v.Leader != nil && g.members[*v.Leader] != nil {
		g.leader = *v.Leader
	}
	if len(g.members) > 0 {
		g.state = Stable
		if g.stateTime < 0 {
			g.stateTime = now
		}
	}
	return g
}
