package metadata

import (
	"errors"
	"fmt"
)

// A record is one change to the metadata. Encoded:
//
//	+------+---------+----------------------+
//	| type | version |   fields (codec.go)  |
//	| byte |  byte   |                      |
//	+------+---------+----------------------+
//
// The version lets a record gain fields: a decoder reads every version up to
// the one it knows and refuses newer ones. RegisterBroker is written at
// version 1, PartitionRecord at version 2 and PartitionChange at version 1
// (fields appended at the end, below); every other record is version 0.

// RecordType identifies a record's kind on disk. Values never change.
type RecordType byte

// Record types.
const (
	TypeRegisterBroker  RecordType = 1
	TypeTopic           RecordType = 2
	TypePartition       RecordType = 3
	TypeRemoveTopic     RecordType = 4
	TypeConfig          RecordType = 5
	TypeProducerIDBlock RecordType = 6
	TypeFeatureLevel    RecordType = 7
	TypeCluster         RecordType = 8
	TypeBrokerChange    RecordType = 9
	TypeUnregister      RecordType = 10
	TypePartitionChange RecordType = 11
	// SCRAM credentials (scram.go).
	TypeScramCredential       RecordType = 12
	TypeRemoveScramCredential RecordType = 13
	// ACLs (acl.go).
	TypeACL       RecordType = 14
	TypeRemoveACL RecordType = 15
	// Delegation tokens (token.go).
	TypeDelegationToken       RecordType = 20
	TypeRemoveDelegationToken RecordType = 21
	// Client quotas (quota.go).
	TypeClientQuota RecordType = 16
)

// maxVersion is the newest version of each record type this build reads
// (and the one it writes).
func maxVersion(t RecordType) byte {
	switch t {
	case TypeRegisterBroker, TypePartitionChange:
		return 1
	case TypePartition:
		return 2
	}
	return 0
}

// Record is one metadata change. The concrete types are the structs below.
type Record interface {
	Type() RecordType
	appendFields(b []byte) []byte
}

// NoLeader is a partition's leader when it has none.
const NoLeader int32 = -1

// Listener is one endpoint a broker serves, as Kafka's broker registration
// lists them.
type Listener struct {
	Name             string // PLAINTEXT, ...
	Host             string
	Port             int32
	SecurityProtocol int16 // Kafka's ids: 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL
}

// RegisterBroker registers (or re-registers, after a restart) a broker.
// Incarnation is random per broker process. Epoch is the broker epoch: a
// Proposal leaves it -1 and the record's metadata offset becomes the epoch
// when it applies, as in Kafka; snapshots carry the assigned epoch. A
// proposal with Epoch >= 0 amends the registration of that epoch (the same
// incarnation registering again) and applies only while it is current.
//
// Version 1 adds the broker's state (Kafka's RegisterBrokerRecord fields):
// a new incarnation registers fenced, and is unfenced by a BrokerChange once
// it has caught up with the metadata log. Version 0 records (written before
// kzero had fencing) decode unfenced, so a single node keeps serving.
// Registered is the metadata offset of this record, the offset a broker
// must have applied to count as caught up: -1 (or 0) in a proposal, set
// when it applies (version 0 decodes it as the epoch).
type RegisterBroker struct {
	ID                   int32
	Incarnation          [16]byte
	Epoch                int64
	Rack                 string // "" when broker.rack is unset
	Listeners            []Listener
	Fenced               bool  // v1
	InControlledShutdown bool  // v1
	Registered           int64 // v1
}

// FenceChange is how a BrokerChange moves a broker's fencing, Kafka's
// values of BrokerRegistrationChangeRecord.Fenced.
type FenceChange int8

// Fence changes.
const (
	FenceNoChange FenceChange = 0
	Fence         FenceChange = 1  // the broker may no longer lead or be in an ISR
	Unfence       FenceChange = -1 // the broker caught up and heartbeats
)

// BrokerChange changes a registered broker's state, Kafka's
// BrokerRegistrationChangeRecord (which replaced FenceBrokerRecord and
// UnfenceBrokerRecord): fence or unfence it, and, with ControlledShutdown,
// mark it as in controlled shutdown. It applies only to the broker's
// current Epoch. Fencing leaves the controlled shutdown mark as it is, as in
// Kafka: only a new registration clears it.
type BrokerChange struct {
	ID                 int32
	Epoch              int64
	Fence              FenceChange
	ControlledShutdown bool // true: the broker enters controlled shutdown
}

// UnregisterBroker removes a broker's registration of epoch Epoch (Kafka's
// UnregisterBrokerRecord). The controller first takes it out of every ISR.
type UnregisterBroker struct {
	ID    int32
	Epoch int64
}

// TopicRecord creates a topic. Its partitions follow as PartitionRecords.
type TopicRecord struct {
	Name string
	ID   [16]byte
}

// PartitionRecord is a partition's whole state. PartitionEpoch 0 creates
// the partition (which must be the topic's next one); a larger epoch
// replaces the partition's state and must be the current epoch plus one, so
// concurrent changes cannot overwrite each other.
//
// Version 1 adds the reassignment in progress (the replicas being added and
// removed, both also in Replicas) and the leader recovery state; version 2
// the eligible leader replicas (KIP-966).
type PartitionRecord struct {
	TopicID          [16]byte
	Partition        int32
	Replicas         []int32
	ISR              []int32
	Leader           int32
	LeaderEpoch      int32
	PartitionEpoch   int32
	AddingReplicas   []int32        // v1
	RemovingReplicas []int32        // v1
	LeaderRecovery   LeaderRecovery // v1
	ELR              []int32        // v2
	LastKnownELR     []int32        // v2
}

// LeaderRecovery is a partition's leader recovery state (KIP-704, Kafka's
// values): a leader elected uncleanly is Recovering, its ISR only itself,
// until it tells the controller with an AlterPartition that it recovered.
type LeaderRecovery int8

// Leader recovery states.
const (
	Recovered        LeaderRecovery = 0
	Recovering       LeaderRecovery = 1
	RecoveryNoChange LeaderRecovery = -1 // in a PartitionChange only
)

// NoLeaderChange is PartitionChange.Leader when the leader stays.
const NoLeaderChange int32 = -2

// PartitionChange changes part of a partition's state, Kafka's
// PartitionChangeRecord, applied with Kafka's epoch rules:
//
//   - every change bumps the partition epoch: PartitionEpoch is the epoch
//     after the change and must be the current one plus one (so changes
//     decided from the same state cannot both apply);
//   - Leader other than NoLeaderChange sets the leader (NoLeader: none) and
//     bumps the leader epoch, even when it names the current leader (how the
//     controller fences the old epoch when replicas are removed); ISR-only
//     changes keep the leader epoch;
//   - ISR, when not empty, replaces the ISR;
//   - Replicas, when not empty, replaces the assignment: the replicas and,
//     with them, AddingReplicas and RemovingReplicas (empty: no reassignment
//     in progress); when Replicas is empty the three stay;
//   - LeaderRecovery other than RecoveryNoChange sets the recovery state;
//   - (v1) EmptyISR empties the ISR (a leaderless partition whose last ISR
//     member was fenced, with eligible leader replicas: KIP-966);
//     SetELR replaces the eligible leader replicas with ELR, and
//     SetLastKnownELR the last known ones with LastKnownELR (Kafka tells
//     "unchanged" from "empty" by a null list).
//
// The state after the change must hold together (Builder.Check): replicas
// distinct, the ISR a subset of them, empty only without a leader, the
// leader in the ISR or none, adding and removing disjoint subsets of the
// replicas, the ELR replicas outside the ISR.
type PartitionChange struct {
	TopicID          [16]byte
	Partition        int32
	PartitionEpoch   int32
	Leader           int32
	ISR              []int32
	Replicas         []int32
	AddingReplicas   []int32
	RemovingReplicas []int32
	LeaderRecovery   LeaderRecovery
	EmptyISR         bool    // v1
	SetELR           bool    // v1
	ELR              []int32 // v1
	SetLastKnownELR  bool    // v1
	LastKnownELR     []int32 // v1
}

// RemoveTopic deletes a topic, its partitions and its configs.
type RemoveTopic struct {
	ID [16]byte
}

// Config resource types, Kafka's ids.
const (
	ResourceTopic  int8 = 2
	ResourceBroker int8 = 4
	ResourceGroup  int8 = 32 // a group's configs (KIP-848, KIP-932)
)

// ConfigRecord sets (or, with Delete, removes) one dynamic config of a topic
// (Name is the topic name) or a broker (Name is the broker id, or "" for the
// cluster-wide default).
type ConfigRecord struct {
	ResourceType int8
	Name         string
	Key          string
	Value        string
	Delete       bool
}

// ProducerIDBlock hands the producer ids [First, First+Size) to a broker.
// First must be the image's next producer id when it applies.
type ProducerIDBlock struct {
	Broker int32
	First  int64
	Size   int32
}

// FeatureLevel finalizes a feature's level (metadata.version, ...); level 0
// removes it.
type FeatureLevel struct {
	Name  string
	Level int16
}

// MetadataVersion is the metadata.version feature level a new cluster
// finalizes: Kafka 4.1's latest production level, 4.1-IV1.
const MetadataVersion int16 = 27

// ClusterRecord names the cluster. It applies only to an image without a
// cluster id: the first leader of a new cluster proposes it.
type ClusterRecord struct {
	ID string
}

func (*RegisterBroker) Type() RecordType   { return TypeRegisterBroker }
func (*TopicRecord) Type() RecordType      { return TypeTopic }
func (*PartitionRecord) Type() RecordType  { return TypePartition }
func (*RemoveTopic) Type() RecordType      { return TypeRemoveTopic }
func (*ConfigRecord) Type() RecordType     { return TypeConfig }
func (*ProducerIDBlock) Type() RecordType  { return TypeProducerIDBlock }
func (*FeatureLevel) Type() RecordType     { return TypeFeatureLevel }
func (*ClusterRecord) Type() RecordType    { return TypeCluster }
func (*BrokerChange) Type() RecordType     { return TypeBrokerChange }
func (*UnregisterBroker) Type() RecordType { return TypeUnregister }
func (*PartitionChange) Type() RecordType  { return TypePartitionChange }

// AppendRecord appends r's encoding to b.
func AppendRecord(b []byte, r Record) []byte {
	b = append(b, byte(r.Type()), maxVersion(r.Type()))
	return r.appendFields(b)
}

func (r *RegisterBroker) appendFields(b []byte) []byte {
	b = appendVarint(b, int64(r.ID))
	b = append(b, r.Incarnation[:]...)
	b = appendVarint(b, r.Epoch)
	b = appendString(b, r.Rack)
	b = appendUvarint(b, uint64(len(r.Listeners)))
	for _, l := range r.Listeners {
		b = appendString(b, l.Name)
		b = appendString(b, l.Host)
		b = appendVarint(b, int64(l.Port))
		b = appendVarint(b, int64(l.SecurityProtocol))
	}
	b = appendBool(b, r.Fenced)
	b = appendBool(b, r.InControlledShutdown)
	return appendVarint(b, r.Registered)
}

func (r *TopicRecord) appendFields(b []byte) []byte {
	b = appendString(b, r.Name)
	return append(b, r.ID[:]...)
}

func (r *PartitionRecord) appendFields(b []byte) []byte {
	b = append(b, r.TopicID[:]...)
	b = appendVarint(b, int64(r.Partition))
	b = appendInt32s(b, r.Replicas)
	b = appendInt32s(b, r.ISR)
	b = appendVarint(b, int64(r.Leader))
	b = appendVarint(b, int64(r.LeaderEpoch))
	b = appendVarint(b, int64(r.PartitionEpoch))
	b = appendInt32s(b, r.AddingReplicas)
	b = appendInt32s(b, r.RemovingReplicas)
	b = appendVarint(b, int64(r.LeaderRecovery))
	b = appendInt32s(b, r.ELR)
	return appendInt32s(b, r.LastKnownELR)
}

func (r *BrokerChange) appendFields(b []byte) []byte {
	b = appendVarint(b, int64(r.ID))
	b = appendVarint(b, r.Epoch)
	b = appendVarint(b, int64(r.Fence))
	return appendBool(b, r.ControlledShutdown)
}

func (r *UnregisterBroker) appendFields(b []byte) []byte {
	b = appendVarint(b, int64(r.ID))
	return appendVarint(b, r.Epoch)
}

func (r *PartitionChange) appendFields(b []byte) []byte {
	b = append(b, r.TopicID[:]...)
	b = appendVarint(b, int64(r.Partition))
	b = appendVarint(b, int64(r.PartitionEpoch))
	b = appendVarint(b, int64(r.Leader))
	b = appendInt32s(b, r.ISR)
	b = appendInt32s(b, r.Replicas)
	b = appendInt32s(b, r.AddingReplicas)
	b = appendInt32s(b, r.RemovingReplicas)
	b = appendVarint(b, int64(r.LeaderRecovery))
	b = appendBool(b, r.EmptyISR)
	b = appendBool(b, r.SetELR)
	b = appendInt32s(b, r.ELR)
	b = appendBool(b, r.SetLastKnownELR)
	return appendInt32s(b, r.LastKnownELR)
}

func (r *RemoveTopic) appendFields(b []byte) []byte { return append(b, r.ID[:]...) }

func (r *ConfigRecord) appendFields(b []byte) []byte {
	b = appendVarint(b, int64(r.ResourceType))
	b = appendString(b, r.Name)
	b = appendString(b, r.Key)
	b = appendString(b, r.Value)
	return appendBool(b, r.Delete)
}

func (r *ProducerIDBlock) appendFields(b []byte) []byte {
	b = appendVarint(b, int64(r.Broker))
	b = appendVarint(b, r.First)
	return appendVarint(b, int64(r.Size))
}

func (r *FeatureLevel) appendFields(b []byte) []byte {
	b = appendString(b, r.Name)
	return appendVarint(b, int64(r.Level))
}

func (r *ClusterRecord) appendFields(b []byte) []byte { return appendString(b, r.ID) }

// ErrUnknownRecord is returned for a record type or version this build does
// not know: metadata written by a newer kzero.
var ErrUnknownRecord = errors.New("metadata: unknown record type or version")

// DecodeRecord decodes one record that fills b exactly. Strings are copied;
// nothing aliases b.
func DecodeRecord(b []byte) (Record, error) {
	if len(b) < 2 {
		return nil, errTruncated
	}
	typ, version := RecordType(b[0]), b[1]
	if version > maxVersion(typ) {
		return nil, fmt.Errorf("%w: type %d version %d", ErrUnknownRecord, typ, version)
	}
	r := &reader{b: b[2:]}
	var rec Record
	switch typ {
	case TypeRegisterBroker:
		x := &RegisterBroker{ID: r.int32(), Incarnation: r.uuid(), Epoch: r.varint(), Rack: r.string()}
		n := r.count()
		if n > 0 {
			x.Listeners = make([]Listener, n)
			for i := range x.Listeners {
				x.Listeners[i] = Listener{Name: r.string(), Host: r.string(), Port: r.int32(), SecurityProtocol: r.int16()}
			}
		}
		x.Registered = x.Epoch
		if version >= 1 {
			x.Fenced, x.InControlledShutdown, x.Registered = r.bool(), r.bool(), r.varint()
		}
		rec = x
	case TypeTopic:
		rec = &TopicRecord{Name: r.string(), ID: r.uuid()}
	case TypePartition:
		x := &PartitionRecord{TopicID: r.uuid(), Partition: r.int32(), Replicas: r.int32s(), ISR: r.int32s(),
			Leader: r.int32(), LeaderEpoch: r.int32(), PartitionEpoch: r.int32()}
		if version >= 1 {
			x.AddingReplicas, x.RemovingReplicas, x.LeaderRecovery = r.int32s(), r.int32s(), LeaderRecovery(r.int8())
		}
		if version >= 2 {
			x.ELR, x.LastKnownELR = r.int32s(), r.int32s()
		}
		rec = x
	case TypeRemoveTopic:
		rec = &RemoveTopic{ID: r.uuid()}
	case TypeConfig:
		rec = &ConfigRecord{ResourceType: r.int8(), Name: r.string(), Key: r.string(), Value: r.string(), Delete: r.bool()}
	case TypeProducerIDBlock:
		rec = &ProducerIDBlock{Broker: r.int32(), First: r.varint(), Size: r.int32()}
	case TypeFeatureLevel:
		rec = &FeatureLevel{Name: r.string(), Level: r.int16()}
	case TypeCluster:
		rec = &ClusterRecord{ID: r.string()}
	case TypeBrokerChange:
		rec = &BrokerChange{ID: r.int32(), Epoch: r.varint(), Fence: FenceChange(r.int8()), ControlledShutdown: r.bool()}
	case TypeUnregister:
		rec = &UnregisterBroker{ID: r.int32(), Epoch: r.varint()}
	case TypePartitionChange:
		x := &PartitionChange{TopicID: r.uuid(), Partition: r.int32(), PartitionEpoch: r.int32(), Leader: r.int32(),
			ISR: r.int32s(), Replicas: r.int32s(), AddingReplicas: r.int32s(), RemovingReplicas: r.int32s(),
			LeaderRecovery: LeaderRecovery(r.int8())}
		if version >= 1 {
			x.EmptyISR, x.SetELR, x.ELR, x.SetLastKnownELR, x.LastKnownELR = r.bool(), r.bool(), r.int32s(), r.bool(), r.int32s()
		}
		rec = x
	case TypeScramCredential:
		rec = decodeScramCredential(r)
	case TypeRemoveScramCredential:
		rec = &RemoveScramCredential{User: r.string(), Mechanism: r.int8()}
	case TypeACL:
		rec = decodeACL(r)
	case TypeRemoveACL:
		rec = &RemoveACL{ID: r.uuid()}
	case TypeDelegationToken:
		rec = decodeDelegationToken(r)
	case TypeRemoveDelegationToken:
		rec = &RemoveDelegationToken{TokenID: r.string()}
	case TypeClientQuota:
		rec = decodeClientQuota(r)
	default:
		return nil, fmt.Errorf("%w: type %d", ErrUnknownRecord, typ)
	}
	if r.err != nil {
		return nil, fmt.Errorf("record type %d: %w", typ, r.err)
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("record type %d: %d trailing bytes", typ, len(r.b))
	}
	return rec, nil
}
