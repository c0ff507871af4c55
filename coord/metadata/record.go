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
// the one it knows and refuses newer ones. All records are version 0.

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
)

// Record is one metadata change. The concrete types are the structs below.
type Record interface {
	Type() RecordType
	appendFields(b []byte) []byte
}

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
// when it applies, as in Kafka; snapshots carry the assigned epoch.
type RegisterBroker struct {
	ID          int32
	Incarnation [16]byte
	Epoch       int64
	Rack        string // "" when broker.rack is unset
	Listeners   []Listener
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
type PartitionRecord struct {
	TopicID        [16]byte
	Partition      int32
	Replicas       []int32
	ISR            []int32
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
}

// RemoveTopic deletes a topic, its partitions and its configs.
type RemoveTopic struct {
	ID [16]byte
}

// Config resource types, Kafka's ids.
const (
	ResourceTopic  int8 = 2
	ResourceBroker int8 = 4
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

func (*RegisterBroker) Type() RecordType  { return TypeRegisterBroker }
func (*TopicRecord) Type() RecordType     { return TypeTopic }
func (*PartitionRecord) Type() RecordType { return TypePartition }
func (*RemoveTopic) Type() RecordType     { return TypeRemoveTopic }
func (*ConfigRecord) Type() RecordType    { return TypeConfig }
func (*ProducerIDBlock) Type() RecordType { return TypeProducerIDBlock }
func (*FeatureLevel) Type() RecordType    { return TypeFeatureLevel }
func (*ClusterRecord) Type() RecordType   { return TypeCluster }

// AppendRecord appends r's encoding to b.
func AppendRecord(b []byte, r Record) []byte {
	b = append(b, byte(r.Type()), 0)
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
	return b
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
	return appendVarint(b, int64(r.PartitionEpoch))
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
	if version != 0 {
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
		rec = x
	case TypeTopic:
		rec = &TopicRecord{Name: r.string(), ID: r.uuid()}
	case TypePartition:
		rec = &PartitionRecord{TopicID: r.uuid(), Partition: r.int32(), Replicas: r.int32s(), ISR: r.int32s(),
			Leader: r.int32(), LeaderEpoch: r.int32(), PartitionEpoch: r.int32()}
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
