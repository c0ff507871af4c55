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
		&RegisterBroker{ID: 0, Epoch: 77, Registered: 80, Fenced: true, InControlledShutdown: true},
		&BrokerChange{ID: 3, Epoch: 77, Fence: Unfence},
		&BrokerChange{ID: 3, Epoch: 77, Fence: Fence, ControlledShutdown: true},
		&UnregisterBroker{ID: 3, Epoch: 77},
		&PartitionChange{TopicID: id, Partition: 7, PartitionEpoch: 10, Leader: NoLeaderChange, ISR: []int32{1, 2, 3}, LeaderRecovery: RecoveryNoChange},
		&PartitionChange{TopicID: id, Partition: 7, PartitionEpoch: 11, Leader: 4, Replicas: []int32{4, 5, 1, 2, 3},
			AddingReplicas: []int32{4, 5}, RemovingReplicas: []int32{2, 3}, LeaderRecovery: Recovering},
		&PartitionChange{TopicID: id, Partition: 7, PartitionEpoch: 12, Leader: NoLeader, LeaderRecovery: RecoveryNoChange,
			EmptyISR: true, SetELR: true, ELR: []int32{2, 3}, SetLastKnownELR: true, LastKnownELR: []int32{1}},
		&TopicRecord{Name: "orders", ID: id},
		&PartitionRecord{TopicID: id, Partition: 7, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 3}, Leader: 1, LeaderEpoch: 4, PartitionEpoch: 9},
		&PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{1}, Leader: -1},
		&PartitionRecord{TopicID: id, Partition: 1, Replicas: []int32{1, 2}, ISR: []int32{1}, Leader: 1, LeaderEpoch: 2, PartitionEpoch: 3,
			AddingReplicas: []int32{2}, LeaderRecovery: Recovering},
		&PartitionRecord{TopicID: id, Partition: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{1}, Leader: 1, LeaderEpoch: 2, PartitionEpoch: 3,
			ELR: []int32{2}, LastKnownELR: []int32{3}},
		&RemoveTopic{ID: id},
		&ConfigRecord{ResourceType: ResourceTopic, Name: "orders", Key: "retention.ms", Value: "1000"},
		&ConfigRecord{ResourceType: ResourceBroker, Name: "", Key: "log.retention.hours", Delete: true},
		&ProducerIDBlock{Broker: 1, First: 5000, Size: 1000},
		&FeatureLevel{Name: "metadata.version", Level: MetadataVersion},
		&ClusterRecord{ID: "q1Sh-9_ISia_zwGINzRvyQ"},
		&DelegationToken{TokenID: "tok", Owner: "User:alice", Requester: "User:admin", Renewers: []string{"User:bob", "User:carol"},
			Issued: 1000, Expiry: 2000, MaxExpiry: 3000},
		&RemoveDelegationToken{TokenID: "tok"},
		&ScramCredential{User: "alice", Mechanism: 2, Salt: []byte("salt"), StoredKey: []byte("stored"), ServerKey: []byte("server"), Iterations: 8192},
		&RemoveScramCredential{User: "alice", Mechanism: 1},
		&ACL{ID: NewUUID(), ResourceType: 2, ResourceName: "orders", PatternType: 4, Principal: "User:alice", Host: "*", Operation: 3, Permission: 3},
		&RemoveACL{ID: id},
		&ClientQuota{Entity: QuotaEntity{User: Named("alice"), ClientID: DefaultName()}, Key: "producer_byte_rate", Value: 1 << 20},
		&ClientQuota{Entity: QuotaEntity{IP: Named("10.0.0.1")}, Key: "connection_creation_rate", Remove: true},
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
	if _, err := DecodeRecord([]byte{byte(TypeRegisterBroker), 2}); err == nil {
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

// v0 encodes records as kzero wrote them before version 1: the layouts of
// existing WALs and snapshots, which must still decode.
func v0RegisterBroker(id int32, inc [16]byte, epoch int64, rack string) []byte {
	b := []byte{byte(TypeRegisterBroker), 0}
	b = appendVarint(b, int64(id))
	b = append(b, inc[:]...)
	b = appendVarint(b, epoch)
	b = appendString(b, rack)
	b = appendUvarint(b, 1)
	b = appendString(b, "PLAINTEXT")
	b = appendString(b, "h")
	b = appendVarint(b, 9092)
	return appendVarint(b, 0)
}

func v0Partition(id [16]byte, p int32, replicas []int32, leader, leaderEpoch, partitionEpoch int32) []byte {
	b := []byte{byte(TypePartition), 0}
	b = append(b, id[:]...)
	b = appendVarint(b, int64(p))
	b = appendInt32s(b, replicas)
	b = appendInt32s(b, replicas)
	b = appendVarint(b, int64(leader))
	b = appendVarint(b, int64(leaderEpoch))
	return appendVarint(b, int64(partitionEpoch))
}

// TestVersion0Records: records written before fencing and reassignments
// existed decode to unfenced brokers and partitions without a reassignment.
func TestVersion0Records(t *testing.T) {
	inc, id := NewUUID(), NewUUID()
	r, err := DecodeRecord(v0RegisterBroker(2, inc, 41, "r1"))
	if err != nil {
		t.Fatal(err)
	}
	want := &RegisterBroker{ID: 2, Incarnation: inc, Epoch: 41, Rack: "r1", Registered: 41,
		Listeners: []Listener{{Name: "PLAINTEXT", Host: "h", Port: 9092}}}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %+v, want %+v", r, want)
	}
	r, err = DecodeRecord(v0Partition(id, 0, []int32{2}, 2, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, &PartitionRecord{TopicID: id, Replicas: []int32{2}, ISR: []int32{2}, Leader: 2, LeaderEpoch: 3, PartitionEpoch: 4}) {
		t.Fatalf("got %+v", r)
	}

	// A version 1 snapshot holding version 0 records, as kzero wrote them.
	topic := AppendRecord(nil, &TopicRecord{Name: "t", ID: id})
	snap := []byte{snapshotVersion, 3}
	for _, rec := range [][]byte{v0RegisterBroker(2, inc, 41, ""), topic, v0Partition(id, 0, []int32{2}, 2, 0, 0)} {
		snap = appendUvarint(snap, uint64(len(rec)))
		snap = append(snap, rec...)
	}
	img, err := DecodeImage(snap, 50)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := img.Broker(2)
	if !ok || b.Fenced || b.Epoch != 41 || b.Registered != 41 || !b.Active() || len(img.LiveBrokers()) != 1 {
		t.Fatalf("broker %+v", b)
	}
	if p := img.Topic("t").Partitions[0]; p.Leader != 2 || p.Reassigning() || p.LeaderRecovery != Recovered {
		t.Fatalf("partition %+v", p)
	}
	// A version 0 registration proposed in an old WAL takes its offset.
	bld := NewBuilder(EmptyImage())
	rec, _ := DecodeRecord(v0RegisterBroker(3, inc, -1, ""))
	if rej := bld.ApplyProposal(&Proposal{Groups: [][]Record{{rec}}}, 60); rej[0] != nil {
		t.Fatal(rej[0].Error())
	}
	if b, _ := bld.Finish(60).Broker(3); b.Epoch != 60 || b.Registered != 60 || b.Fenced {
		t.Fatalf("broker %+v", b)
	}
}
