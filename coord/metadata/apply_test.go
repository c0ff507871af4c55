package metadata

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func topicGroup(name string, id [16]byte, parts int) []Record {
	g := []Record{&TopicRecord{Name: name, ID: id}}
	for p := range parts {
		g = append(g, &PartitionRecord{TopicID: id, Partition: int32(p), Replicas: []int32{1}, ISR: []int32{1}, Leader: 1})
	}
	return g
}

func applyOne(t *testing.T, base *Image, offset int64, groups ...[]Record) (*Image, []error) {
	t.Helper()
	b := NewBuilder(base)
	res := b.ApplyProposal(&Proposal{Groups: groups}, offset)
	return b.Finish(offset), res
}

func codes(res []error) []*kerr.Error {
	out := make([]*kerr.Error, len(res))
	for i, r := range res {
		if r != nil && !errors.As(r, &out[i]) {
			out[i] = kerr.UnknownServerError
		}
	}
	return out
}

func TestCheckRacesInOneEntry(t *testing.T) {
	a, b := NewUUID(), NewUUID()
	img, res := applyOne(t, EmptyImage(), 2,
		topicGroup("t", a, 2),
		topicGroup("t", b, 1),   // same name: the first won
		topicGroup("t_x", b, 1), // fine
		topicGroup("t.x", NewUUID(), 1),
		[]Record{&PartitionRecord{TopicID: a, Partition: 2, Replicas: []int32{1}, Leader: 1}},
		[]Record{&PartitionRecord{TopicID: a, Partition: 2, Replicas: []int32{1}, Leader: 1}}, // not the next any more
		[]Record{&ProducerIDBlock{Broker: 1, First: 0, Size: 1000}},
		[]Record{&ProducerIDBlock{Broker: 1, First: 0, Size: 1000}}, // taken
	)
	want := []*kerr.Error{nil, kerr.TopicAlreadyExists, nil, kerr.InvalidTopicException, nil, kerr.InvalidPartitions, nil, kerr.InvalidUpdateVersion}
	if got := codes(res); !slices.Equal(got, want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
	if tp := img.Topic("t"); tp == nil || tp.ID != a || len(tp.Partitions) != 3 {
		t.Fatalf("topic t: %+v", tp)
	}
	if img.NextProducerID() != 1000 || img.Offset() != 2 {
		t.Fatalf("next pid %d offset %d", img.NextProducerID(), img.Offset())
	}
}

// TestGroupAllOrNothing: a group whose last record fails leaves no trace.
func TestGroupAllOrNothing(t *testing.T) {
	id := NewUUID()
	g := append(topicGroup("t", id, 2),
		&ConfigRecord{ResourceType: ResourceTopic, Name: "t", Key: "retention.ms", Value: "1"},
		&ConfigRecord{ResourceType: ResourceTopic, Name: "other", Key: "retention.ms", Value: "1"})
	img, res := applyOne(t, EmptyImage(), 2, g)
	if res[0] == nil || !errors.Is(res[0], kerr.UnknownTopicOrPartition) {
		t.Fatalf("result %v", res[0])
	}
	if img.TopicCount() != 0 || img.TopicByID(id) != nil {
		t.Fatal("part of a rejected group applied")
	}
}

func TestPartitionEpochs(t *testing.T) {
	id := NewUUID()
	img, _ := applyOne(t, EmptyImage(), 2, topicGroup("t", id, 1))
	change := func(epoch int32, leader int32) []Record {
		return []Record{&PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{1, 2}, ISR: []int32{leader}, Leader: leader, LeaderEpoch: epoch, PartitionEpoch: epoch}}
	}
	img2, res := applyOne(t, img, 3, change(1, 2), change(1, 1), change(2, 1))
	if got := codes(res); !slices.Equal(got, []*kerr.Error{nil, kerr.InvalidUpdateVersion, nil}) {
		t.Fatalf("codes %v", got)
	}
	p := img2.Topic("t").Partitions[0]
	if p.PartitionEpoch != 2 || p.Leader != 1 || !slices.Equal(p.Replicas, []int32{1, 2}) {
		t.Fatalf("partition %+v", p)
	}
	// The base image did not change under the builder.
	if old := img.Topic("t").Partitions[0]; old.PartitionEpoch != 0 || !slices.Equal(old.Replicas, []int32{1}) {
		t.Fatalf("base image changed: %+v", old)
	}
	_, res = applyOne(t, img2, 4, []Record{&PartitionRecord{TopicID: id, Partition: 5, Replicas: []int32{1}, PartitionEpoch: 1}})
	if !errors.Is(res[0], kerr.UnknownTopicOrPartition) {
		t.Fatalf("change of a missing partition: %v", res[0])
	}
}

func TestRemoveAndConfigs(t *testing.T) {
	id := NewUUID()
	img, _ := applyOne(t, EmptyImage(), 2, append(topicGroup("a.b", id, 1),
		&ConfigRecord{ResourceType: ResourceTopic, Name: "a.b", Key: "k", Value: "v"},
		&ConfigRecord{ResourceType: ResourceBroker, Name: "", Key: "log.retention.hours", Value: "1"},
		&ConfigRecord{ResourceType: ResourceBroker, Name: "3", Key: "x", Value: "y"}))
	if img.Topic("a.b").Configs["k"] != "v" || img.BrokerConfigs("")["log.retention.hours"] != "1" || img.BrokerConfigs("3")["x"] != "y" {
		t.Fatal("configs not applied")
	}
	if other, ok := img.CollidingTopic("a_b"); !ok || other != "a.b" {
		t.Fatal("collision not seen")
	}
	img2, res := applyOne(t, img, 3,
		[]Record{&RemoveTopic{ID: id}},
		[]Record{&RemoveTopic{ID: id}},
		[]Record{&ConfigRecord{ResourceType: ResourceBroker, Name: "3", Key: "x", Delete: true}},
		[]Record{&ConfigRecord{ResourceType: ResourceBroker, Name: "b3", Key: "x", Value: "1"}},
		topicGroup("a_b", NewUUID(), 1), // the name it collided with is free now
	)
	if got := codes(res); !slices.Equal(got, []*kerr.Error{nil, kerr.UnknownTopicID, nil, kerr.InvalidRequest, nil}) {
		t.Fatalf("codes %v", got)
	}
	if img2.Topic("a.b") != nil || img2.BrokerConfigs("3") != nil || img2.Topic("a_b") == nil {
		t.Fatal("remove or delete not applied")
	}
	if img.Topic("a.b") == nil || img.BrokerConfigs("3")["x"] != "y" {
		t.Fatal("base image changed")
	}
}

func TestBrokerEpochIsOffset(t *testing.T) {
	img, _ := applyOne(t, EmptyImage(), 42, []Record{&RegisterBroker{ID: 2, Epoch: -1, Rack: "r"}})
	b, ok := img.Broker(2)
	if !ok || b.Epoch != 42 || b.Rack != "r" || b.Registered != 42 || b.Fenced {
		t.Fatalf("broker %+v", b)
	}
	img, res := applyOne(t, img, 43, []Record{&ClusterRecord{ID: "one"}}, []Record{&ClusterRecord{ID: "two"}})
	if img.ClusterID() != "one" || res[1] == nil || !errors.Is(res[1], kerr.InconsistentClusterID) {
		t.Fatalf("cluster %q, %v", img.ClusterID(), res[1])
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	id := NewUUID()
	img, _ := applyOne(t, EmptyImage(), 9,
		[]Record{&ClusterRecord{ID: "c"}, &FeatureLevel{Name: "metadata.version", Level: MetadataVersion}},
		[]Record{&RegisterBroker{ID: 1, Epoch: -1, Listeners: []Listener{{Name: "PLAINTEXT", Host: "h", Port: 1}}}},
		append(topicGroup("t", id, 3), &ConfigRecord{ResourceType: ResourceTopic, Name: "t", Key: "k", Value: "v"}),
		[]Record{&ConfigRecord{ResourceType: ResourceBroker, Name: "", Key: "a", Value: "b"}},
		[]Record{&ProducerIDBlock{Broker: 1, First: 0, Size: 1000}},
		[]Record{&ProducerIDBlock{Broker: 1, First: 1000, Size: 1000}},
		[]Record{&DelegationToken{TokenID: "tok", Owner: "User:a", Renewers: []string{"User:b"}, Issued: 1, Expiry: 2, MaxExpiry: 3}},
	)
	got, err := DecodeImage(EncodeImage(img), 9)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClusterID() != "c" || got.Offset() != 9 || got.NextProducerID() != 2000 || got.Topic("t").ID != id ||
		len(got.Topic("t").Partitions) != 3 || got.Topic("t").Configs["k"] != "v" || got.BrokerConfigs("")["a"] != "b" {
		t.Fatal("snapshot lost state")
	}
	if b, _ := got.Broker(1); b.Epoch != 9 || b.Listeners[0].Host != "h" {
		t.Fatalf("broker %+v", b)
	}
	if l, _ := got.Feature("metadata.version"); l != MetadataVersion {
		t.Fatal("feature lost")
	}
	if tok, ok := got.DelegationToken("tok"); !ok || tok.Owner != "User:a" || len(tok.Renewers) != 1 || tok.MaxExpiry != 3 {
		t.Fatalf("delegation token %+v", tok)
	}
	if string(EncodeImage(got)) != string(EncodeImage(img)) {
		t.Fatal("snapshot encoding is not deterministic")
	}
}

func TestBrokerStates(t *testing.T) {
	inc := NewUUID()
	img, _ := applyOne(t, EmptyImage(), 5, []Record{&RegisterBroker{ID: 1, Incarnation: inc, Epoch: -1, Registered: -1, Fenced: true}})
	if b, _ := img.Broker(1); !b.Fenced || b.Epoch != 5 || b.Registered != 5 || b.Active() || len(img.LiveBrokers()) != 0 {
		t.Fatalf("broker %+v", b)
	}
	img, res := applyOne(t, img, 6,
		[]Record{&BrokerChange{ID: 1, Epoch: 4, Fence: Unfence}}, // stale epoch
		[]Record{&BrokerChange{ID: 2, Epoch: 5, Fence: Unfence}}, // unknown broker
		[]Record{&BrokerChange{ID: 1, Epoch: 5, Fence: Unfence}},
		[]Record{&RegisterBroker{ID: 1, Incarnation: NewUUID(), Epoch: 5, Registered: -1}}, // amend with another incarnation
		[]Record{&RegisterBroker{ID: 1, Incarnation: inc, Epoch: 5, Registered: -1}},       // amend: same epoch, new offset
	)
	if got := codes(res); !slices.Equal(got, []*kerr.Error{kerr.StaleBrokerEpoch, kerr.StaleBrokerEpoch, nil, kerr.StaleBrokerEpoch, nil}) {
		t.Fatalf("codes %v", got)
	}
	if b, _ := img.Broker(1); b.Fenced || b.Epoch != 5 || b.Registered != 6 || !b.Active() || len(img.LiveBrokers()) != 1 {
		t.Fatalf("broker %+v", b)
	}
	img, _ = applyOne(t, img, 7, []Record{&BrokerChange{ID: 1, Epoch: 5, ControlledShutdown: true}})
	if b, _ := img.Broker(1); b.Fenced || !b.InControlledShutdown || b.Active() || len(img.LiveBrokers()) != 1 {
		t.Fatalf("broker %+v", b)
	}
	img, _ = applyOne(t, img, 8, []Record{&BrokerChange{ID: 1, Epoch: 5, Fence: Fence}})
	if b, _ := img.Broker(1); !b.Fenced || !b.InControlledShutdown || len(img.LiveBrokers()) != 0 {
		t.Fatalf("broker %+v", b)
	}
	snap, err := DecodeImage(EncodeImage(img), 8)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := snap.Broker(1); !b.Fenced || !b.InControlledShutdown || b.Registered != 6 || b.Epoch != 5 {
		t.Fatalf("snapshot broker %+v", b)
	}
	img2, res := applyOne(t, img, 9,
		[]Record{&UnregisterBroker{ID: 1, Epoch: 6}},
		[]Record{&UnregisterBroker{ID: 1, Epoch: 5}},
		[]Record{&UnregisterBroker{ID: 1, Epoch: 5}},
	)
	if got := codes(res); !slices.Equal(got, []*kerr.Error{kerr.StaleBrokerEpoch, nil, kerr.BrokerIDNotRegistered}) {
		t.Fatalf("codes %v", got)
	}
	if _, ok := img2.Broker(1); ok {
		t.Fatal("unregistered broker is still there")
	}
	if _, ok := img.Broker(1); !ok {
		t.Fatal("base image changed")
	}
}

// TestPartitionChange checks Kafka's epoch rules: every change bumps the
// partition epoch, a leader change (even to the same leader) the leader
// epoch, an ISR-only change not.
func TestPartitionChange(t *testing.T) {
	id := NewUUID()
	img, _ := applyOne(t, EmptyImage(), 2, []Record{&TopicRecord{Name: "t", ID: id},
		&PartitionRecord{TopicID: id, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1}})
	chg := func(epoch int32, f func(c *PartitionChange)) []Record {
		c := &PartitionChange{TopicID: id, PartitionEpoch: epoch, Leader: NoLeaderChange, LeaderRecovery: RecoveryNoChange}
		f(c)
		return []Record{c}
	}
	img, res := applyOne(t, img, 3,
		chg(1, func(c *PartitionChange) { c.ISR = []int32{1, 2} }),         // ISR only
		chg(1, func(c *PartitionChange) { c.ISR = []int32{1} }),            // stale epoch
		chg(2, func(c *PartitionChange) { c.Leader = 2 }),                  // a new leader from the ISR
		chg(3, func(c *PartitionChange) { c.ISR = []int32{1, 3} }),         // drops the leader
		chg(3, func(c *PartitionChange) { c.ISR = []int32{2, 4} }),         // 4 is no replica
		chg(3, func(c *PartitionChange) { c.ISR = []int32{2, 2} }),         // repeats
		chg(3, func(c *PartitionChange) { c.AddingReplicas = []int32{4} }), // adding without replicas
		chg(3, func(c *PartitionChange) { c.Leader = 2 }),                  // same leader: bump
		chg(4, func(c *PartitionChange) { c.LeaderRecovery = Recovering }), // recovery state
		chg(5, func(c *PartitionChange) { c.LeaderRecovery = 7 }),          // bad state
		chg(5, func(c *PartitionChange) { c.Leader = NoLeader }),           // no leader, ISR stays
		chg(6, func(c *PartitionChange) { c.Leader = 5 }),                  // not in the ISR
		chg(6, func(c *PartitionChange) {
			c.Replicas = []int32{4, 1, 2, 3}
			c.AddingReplicas = []int32{4}
			c.RemovingReplicas = []int32{3}
		}),
		chg(7, func(c *PartitionChange) {
			c.Replicas = []int32{1, 2}
			c.RemovingReplicas = []int32{2}
			c.AddingReplicas = []int32{2}
		}),
	)
	want := []*kerr.Error{nil, kerr.InvalidUpdateVersion, nil, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest,
		nil, nil, kerr.InvalidRequest, nil, kerr.InvalidRequest, nil, kerr.InvalidRequest}
	if got := codes(res); !slices.Equal(got, want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
	p := img.Topic("t").Partitions[0]
	if p.PartitionEpoch != 6 || p.LeaderEpoch != 3 || p.Leader != NoLeader || !slices.Equal(p.ISR, []int32{1, 2}) ||
		!slices.Equal(p.Replicas, []int32{4, 1, 2, 3}) || !slices.Equal(p.AddingReplicas, []int32{4}) ||
		!slices.Equal(p.RemovingReplicas, []int32{3}) || p.LeaderRecovery != Recovering || !p.Reassigning() {
		t.Fatalf("partition %+v", p)
	}
	got, err := DecodeImage(EncodeImage(img), 3)
	if err != nil {
		t.Fatal(err)
	}
	if q := got.Topic("t").Partitions[0]; !reflect.DeepEqual(q, p) {
		t.Fatalf("snapshot partition %+v, want %+v", q, p)
	}
	// The change that ends the reassignment clears adding and removing.
	img, res = applyOne(t, img, 4, chg(7, func(c *PartitionChange) { c.Replicas = []int32{4, 1, 2}; c.ISR = []int32{4, 1}; c.Leader = 4 }))
	if res[0] != nil {
		t.Fatal(res[0].Error())
	}
	if p := img.Topic("t").Partitions[0]; p.Reassigning() || p.LeaderEpoch != 4 || p.PartitionEpoch != 7 {
		t.Fatalf("partition %+v", p)
	}
	// A change in the same group as the partition's creation.
	_, res = applyOne(t, img, 5, []Record{&PartitionRecord{TopicID: id, Partition: 1, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1},
		&PartitionChange{TopicID: id, Partition: 1, PartitionEpoch: 1, Leader: NoLeader, LeaderRecovery: RecoveryNoChange}})
	if res[0] != nil {
		t.Fatal(res[0].Error())
	}
}
