package metadata

import (
	"errors"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// FuzzDecodeRecord: any bytes decode to a record or an error, never a
// panic; a decoded record re-encodes to bytes that decode to the same.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range sampleRecords() {
		f.Add(AppendRecord(nil, r))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRecord(b)
		if err != nil {
			return
		}
		again, err := DecodeRecord(AppendRecord(nil, r))
		if err != nil {
			t.Fatalf("re-encoded %T does not decode: %v", r, err)
		}
		if !reflect.DeepEqual(again, r) {
			t.Fatalf("round trip: %+v != %+v", again, r)
		}
	})
}

// FuzzDecodeEntry feeds raft entry data to the entry decoder and, when it
// decodes, checks and applies it to an image: no input panics.
func FuzzDecodeEntry(f *testing.F) {
	recs := sampleRecords()
	f.Add(AppendProposal(nil, &Proposal{Proposer: 1, Session: 2, Seq: 3, Groups: [][]Record{recs[2:4], recs[6:7]}}))
	f.Add(AppendProposal(nil, &Proposal{Groups: [][]Record{recs}}))
	// A broker's life and a partition's changes, groups that apply.
	id, inc := NewUUID(), NewUUID()
	f.Add(AppendProposal(nil, &Proposal{Groups: [][]Record{
		{&RegisterBroker{ID: 1, Incarnation: inc, Epoch: -1, Registered: -1, Fenced: true}},
		{&TopicRecord{Name: "t", ID: id}, &PartitionRecord{TopicID: id, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1}},
		{&PartitionChange{TopicID: id, PartitionEpoch: 1, Leader: NoLeaderChange, ISR: []int32{1}, LeaderRecovery: RecoveryNoChange}},
		{&PartitionChange{TopicID: id, PartitionEpoch: 2, Leader: 1, Replicas: []int32{3, 1, 2}, AddingReplicas: []int32{3},
			RemovingReplicas: []int32{2}, LeaderRecovery: RecoveryNoChange}},
		{&BrokerChange{ID: 1, Epoch: 5, Fence: Unfence}},
		{&UnregisterBroker{ID: 1, Epoch: 5}},
	}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeProposal(b)
		if err != nil {
			return
		}
		bld := NewBuilder(EmptyImage())
		for _, rej := range bld.ApplyProposal(p, 10) {
			if rej != nil && errors.Is(rej, kerr.UnknownServerError) {
				t.Fatalf("a group passed its check but failed to apply: %s", rej.Error())
			}
		}
		img := bld.Finish(10)
		if _, err := DecodeImage(EncodeImage(img), 10); err != nil {
			t.Fatalf("image from a valid entry does not round-trip a snapshot: %v", err)
		}
	})
}

// FuzzDecodeImage feeds snapshot data to the image decoder.
func FuzzDecodeImage(f *testing.F) {
	bld := NewBuilder(EmptyImage())
	for _, r := range sampleRecords() {
		if _, ok := r.(*RemoveTopic); !ok {
			_ = bld.Apply(r, 5)
		}
	}
	f.Add(EncodeImage(bld.Finish(5)))
	f.Add(EncodeImage(EmptyImage()))
	f.Fuzz(func(t *testing.T, b []byte) {
		img, err := DecodeImage(b, 1)
		if err != nil {
			return
		}
		again, err := DecodeImage(EncodeImage(img), 1)
		if err != nil || again.TopicCount() != img.TopicCount() || len(again.Brokers()) != len(img.Brokers()) ||
			len(again.LiveBrokers()) != len(img.LiveBrokers()) || again.NextProducerID() != img.NextProducerID() {
			t.Fatalf("image does not round-trip: %v", err)
		}
		if string(EncodeImage(again)) != string(EncodeImage(img)) {
			t.Fatal("image does not round-trip to the same snapshot")
		}
	})
}
