package metadata

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// Image is the cluster metadata as of one metadata offset: an immutable
// value. coord.Controller publishes a new Image after each applied batch of
// entries; readers load the current one with Controller.Image and read it
// without locks for as long as they like. Nothing reachable from an Image
// (topics, partitions, slices, maps) may be modified.
type Image struct {
	offset         int64
	clusterID      string
	controllerID   int32
	features       map[string]int16
	brokers        map[int32]*Broker
	topics         map[string]*Topic
	topicIDs       map[[16]byte]*Topic
	collisions     map[string]string            // collisionKey(name) -> name
	brokerConfigs  map[string]map[string]string // "" cluster default, "<id>" one broker
	groupConfigs   map[string]map[string]string // by group id
	nextProducerID int64
	lastPIDBlock   ProducerIDBlock
	scram          map[ScramKey]ScramCredential
	acls           map[[16]byte]*ACL
	tokens         map[string]DelegationToken
	quotas         map[QuotaEntity]map[string]float64 // client quotas; a map is copied whole on change

	sorted struct {
		once    sync.Once
		topics  []*Topic
		brokers []*Broker
		live    []*Broker
	}
}

// Topic is one topic. Partitions[i] is partition i.
type Topic struct {
	Name       string
	ID         [16]byte
	Partitions []Partition
	Configs    map[string]string // dynamic topic configs (overrides only)
}

// Partition is one partition's replica assignment and leadership.
type Partition struct {
	Partition      int32
	Replicas       []int32
	ISR            []int32
	Leader         int32 // NoLeader (-1) when there is none
	LeaderEpoch    int32
	PartitionEpoch int32
	// A reassignment in progress: Replicas holds the old and the new
	// replicas; AddingReplicas are new, RemovingReplicas go once the new
	// ones are all in the ISR. Both empty when none is in progress.
	AddingReplicas   []int32
	RemovingReplicas []int32
	LeaderRecovery   LeaderRecovery
	// Eligible leader replicas (KIP-966): replicas that left an ISR
	// already below min.insync.replicas. The HW only moves with at least
	// min.insync.replicas in the ISR, so each of them holds every
	// committed record and may lead cleanly once the ISR is empty.
	// LastKnownELR keeps the last leader of a partition whose ISR and ELR
	// emptied, the one replica that may still lead it.
	ELR          []int32
	LastKnownELR []int32
}

// Reassigning reports whether a reassignment is in progress.
func (p *Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// PreferredLeader is the first replica, the one placement meant to lead.
func (p *Partition) PreferredLeader() int32 {
	if len(p.Replicas) == 0 {
		return NoLeader
	}
	return p.Replicas[0]
}

// Broker is a registered broker.
type Broker struct {
	ID          int32
	Incarnation [16]byte
	Epoch       int64 // the metadata offset of its registration
	Rack        string
	Listeners   []Listener
	// Fenced: the broker may not lead nor be in an ISR. A new registration
	// starts fenced; the controller unfences it once it has caught up, and
	// fences it again when its session times out.
	Fenced bool
	// InControlledShutdown: the broker asked to shut down; its leaderships
	// move away and it takes no new ones.
	InControlledShutdown bool
	// Registered is the metadata offset of its latest RegisterBroker
	// record: the broker is caught up once it has applied it.
	Registered int64
}

// Active reports whether the broker may lead, join an ISR and get new
// replicas: unfenced and not shutting down (Kafka's isActive).
func (b *Broker) Active() bool { return !b.Fenced && !b.InControlledShutdown }

// Internal reports whether the topic is one of Kafka's internal topics.
func (t *Topic) Internal() bool {
	return t.Name == "__consumer_offsets" || t.Name == "__transaction_state" || t.Name == "__share_group_state"
}

// ReplicationFactor is the replica count of partition 0.
func (t *Topic) ReplicationFactor() int16 {
	if len(t.Partitions) == 0 {
		return 0
	}
	return int16(len(t.Partitions[0].Replicas))
}

func EmptyImage() *Image {
	return &Image{
		controllerID:  -1,
		features:      map[string]int16{},
		brokers:       map[int32]*Broker{},
		topics:        map[string]*Topic{},
		topicIDs:      map[[16]byte]*Topic{},
		collisions:    map[string]string{},
		brokerConfigs: map[string]map[string]string{},
		scram:         map[ScramKey]ScramCredential{},
		acls:          map[[16]byte]*ACL{},
		tokens:        map[string]DelegationToken{},
		quotas:        map[QuotaEntity]map[string]float64{},
	}
}

// Offset is the metadata offset (raft index) of the last entry applied.
func (img *Image) Offset() int64 { return img.offset }

// ClusterID is the cluster's id, a base64 UUID as Kafka's.
func (img *Image) ClusterID() string { return img.clusterID }

// ControllerID is the node id of the raft leader, -1 if none is known.
func (img *Image) ControllerID() int32 { return img.controllerID }

// Feature returns a finalized feature's level.
func (img *Image) Feature(name string) (int16, bool) {
	l, ok := img.features[name]
	return l, ok
}

// Features returns the finalized features. Read only.
func (img *Image) Features() map[string]int16 { return img.features }

// Broker returns a registered broker.
func (img *Image) Broker(id int32) (*Broker, bool) {
	b, ok := img.brokers[id]
	return b, ok
}

// Brokers returns the registered brokers by id. Read only.
func (img *Image) Brokers() []*Broker {
	img.sort()
	return img.sorted.brokers
}

// LiveBrokers returns the unfenced brokers by id, those that clients are
// told about (Metadata, DescribeCluster); a broker in controlled shutdown
// is still among them. Read only.
func (img *Image) LiveBrokers() []*Broker {
	img.sort()
	return img.sorted.live
}

// Topic returns the topic with this name, nil if none.
func (img *Image) Topic(name string) *Topic { return img.topics[name] }

// TopicByID returns the topic with this id, nil if none.
func (img *Image) TopicByID(id [16]byte) *Topic { return img.topicIDs[id] }

// Topics returns every topic, by name. Read only.
func (img *Image) Topics() []*Topic {
	img.sort()
	return img.sorted.topics
}

// TopicCount is the number of topics.
func (img *Image) TopicCount() int { return len(img.topics) }

// BrokerConfigs returns the dynamic configs of a broker ("<id>") or the
// cluster-wide broker defaults (""), nil if none. Read only.
func (img *Image) BrokerConfigs(name string) map[string]string { return img.brokerConfigs[name] }

// GroupConfigs returns a group's dynamic configs, nil if none. Read only.
func (img *Image) GroupConfigs(group string) map[string]string { return img.groupConfigs[group] }

// NextProducerID is the first producer id not yet handed out.
func (img *Image) NextProducerID() int64 { return img.nextProducerID }

// CollidingTopic returns the existing topic whose name differs from name but
// collides with it (Kafka forbids names that are equal once '.' is read as
// '_', since metric names cannot tell them apart).
func (img *Image) CollidingTopic(name string) (string, bool) {
	other, ok := img.collisions[collisionKey(name)]
	if !ok || other == name {
		return "", false
	}
	return other, true
}

func collisionKey(name string) string { return strings.ReplaceAll(name, ".", "_") }

// sort builds the sorted views once per image, on first use.
func (img *Image) sort() {
	img.sorted.once.Do(func() {
		ts := make([]*Topic, 0, len(img.topics))
		for _, t := range img.topics {
			ts = append(ts, t)
		}
		slices.SortFunc(ts, func(a, b *Topic) int { return strings.Compare(a.Name, b.Name) })
		bs := make([]*Broker, 0, len(img.brokers))
		for _, b := range img.brokers {
			bs = append(bs, b)
		}
		slices.SortFunc(bs, func(a, b *Broker) int { return cmp.Compare(a.ID, b.ID) })
		live := make([]*Broker, 0, len(bs))
		for _, b := range bs {
			if !b.Fenced {
				live = append(live, b)
			}
		}
		img.sorted.topics, img.sorted.brokers, img.sorted.live = ts, bs, live
	})
}

// WithController returns a copy of img with another controller id; the
// sorted views are rebuilt on demand.
func (img *Image) WithController(id int32) *Image {
	c := &Image{
		offset: img.offset, clusterID: img.clusterID, controllerID: id, features: img.features,
		brokers: img.brokers, topics: img.topics, topicIDs: img.topicIDs, collisions: img.collisions,
		brokerConfigs: img.brokerConfigs, groupConfigs: img.groupConfigs, nextProducerID: img.nextProducerID, lastPIDBlock: img.lastPIDBlock,
		scram: img.scram, acls: img.acls, tokens: img.tokens, quotas: img.quotas,
	}
	return c
}
