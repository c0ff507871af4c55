package metadata

import (
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

func applyOne(t *testing.T, base *Image, offset int64, groups ...[]Record) (*Image, []*Rejection) {
	t.Helper()
	b := NewBuilder(base)
	res := b.ApplyProposal(&Proposal{Groups: groups}, offset)
	return b.Finish(offset), res
}

func codes(res []*Rejection) []*kerr.Error {
	out := make([]*kerr.Error, len(res))
	for i, r := range res {
		if r != nil {
			out[i] = r.Err
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
	if res[0] == nil || res[0].Err != kerr.UnknownTopicOrPartition {
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
	if res[0].Err != kerr.UnknownTopicOrPartition {
		t.Fatalf("change of a missing partition: %v", res[0].Err)
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
	if !ok || b.Epoch != 42 || b.Rack != "r" {
		t.Fatalf("broker %+v", b)
	}
	img, res := applyOne(t, img, 43, []Record{&ClusterRecord{ID: "one"}}, []Record{&ClusterRecord{ID: "two"}})
	if img.ClusterID() != "one" || res[1] == nil || res[1].Err != kerr.InconsistentClusterID {
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
	if string(EncodeImage(got)) != string(EncodeImage(img)) {
		t.Fatal("snapshot encoding is not deterministic")
	}
}
