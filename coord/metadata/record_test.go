package metadata

import (
	"reflect"
	"testing"
)

func sampleRecords() []Record {
	id := NewUUID()
	return []Record{
		&RegisterBroker{ID: 3, Incarnation: NewUUID(), Epoch: -1, Rack: "r1",
			Listeners: []Listener{{Name: "PLAINTEXT", Host: "h", Port: 9092}, {Name: "SSL", Host: "h2", Port: 9093, SecurityProtocol: 1}}},
		&RegisterBroker{ID: 0, Epoch: 77},
		&TopicRecord{Name: "orders", ID: id},
		&PartitionRecord{TopicID: id, Partition: 7, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 3}, Leader: 1, LeaderEpoch: 4, PartitionEpoch: 9},
		&PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{1}, Leader: -1},
		&RemoveTopic{ID: id},
		&ConfigRecord{ResourceType: ResourceTopic, Name: "orders", Key: "retention.ms", Value: "1000"},
		&ConfigRecord{ResourceType: ResourceBroker, Name: "", Key: "log.retention.hours", Delete: true},
		&ProducerIDBlock{Broker: 1, First: 5000, Size: 1000},
		&FeatureLevel{Name: "metadata.version", Level: MetadataVersion},
		&ClusterRecord{ID: "q1Sh-9_ISia_zwGINzRvyQ"},
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range sampleRecords() {
		b := AppendRecord(nil, r)
		got, err := DecodeRecord(b)
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("%T: got %+v, want %+v", r, got, r)
		}
		for cut := range len(b) {
			if _, err := DecodeRecord(b[:cut]); err == nil {
				t.Fatalf("%T cut at %d of %d decoded", r, cut, len(b))
			}
		}
		if _, err := DecodeRecord(append(b, 0)); err == nil {
			t.Fatalf("%T with a trailing byte decoded", r)
		}
	}
	if _, err := DecodeRecord([]byte{byte(TypeTopic), 1}); err == nil {
		t.Fatal("future version decoded")
	}
	if _, err := DecodeRecord([]byte{200, 0}); err == nil {
		t.Fatal("unknown type decoded")
	}
}

func TestProposalRoundTrip(t *testing.T) {
	recs := sampleRecords()
	p := &Proposal{Proposer: 4, Session: 1<<63 + 5, Seq: 99, Groups: [][]Record{recs[:3], nil, recs[3:]}}
	got, err := DecodeProposal(AppendProposal(nil, p))
	if err != nil {
		t.Fatal(err)
	}
	if got.Proposer != 4 || got.Session != p.Session || got.Seq != 99 || len(got.Groups) != 3 ||
		!reflect.DeepEqual(got.Groups[0], p.Groups[0]) || len(got.Groups[1]) != 0 || !reflect.DeepEqual(got.Groups[2], p.Groups[2]) {
		t.Fatalf("%+v", got)
	}
}
