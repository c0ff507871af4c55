package api

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// sampleProduce is a produce request of version with two topics, one of
// them with a null and an empty record set, and a transactional id from
// v3.
func sampleProduce(version int16) *kmsg.ProduceRequest {
	r := kmsg.NewPtrProduceRequest()
	r.SetVersion(version)
	r.TransactionID = kmsg.StringPtr("txn")
	r.Acks, r.TimeoutMillis = -1, 3000
	for i, name := range []string{"alpha", "beta"} {
		t := kmsg.NewProduceRequestTopic()
		t.Topic, t.TopicID = name, [16]byte{byte(i + 1)}
		for p := range int32(3) {
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition = p
			switch p {
			case 0:
				rp.Records = bytes.Repeat([]byte{byte(i)}, 300) // a two-byte varint length
			case 1:
				rp.Records = []byte{}
			}
			t.Partitions = append(t.Partitions, rp)
		}
		r.Topics = append(r.Topics, t)
	}
	return r
}

func sampleFetch(version int16) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.SetVersion(version)
	r.MaxWaitMillis, r.MinBytes, r.MaxBytes, r.IsolationLevel = 500, 1, 50<<20, 1
	r.SessionID, r.SessionEpoch = 7, 3
	r.Rack = "rack-a"
	for i, name := range []string{"alpha", "beta"} {
		t := kmsg.NewFetchRequestTopic()
		t.Topic, t.TopicID = name, [16]byte{byte(i + 1)}
		for p := range int32(2) {
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition, fp.CurrentLeaderEpoch, fp.FetchOffset, fp.LastFetchedEpoch = p, 4, 1000+int64(p), 3
			fp.LogStartOffset, fp.PartitionMaxBytes = 10, 1<<20
			t.Partitions = append(t.Partitions, fp)
		}
		r.Topics = append(r.Topics, t)
	}
	ft := kmsg.NewFetchRequestForgottenTopic()
	ft.Topic, ft.TopicID, ft.Partitions = "gone", [16]byte{9}, []int32{1, 2}
	r.ForgottenTopics = append(r.ForgottenTopics, ft)
	return r
}

// checkDecode decodes body with fast into a reused request and, when it
// takes it, checks that kmsg decodes it too (into a fresh one from
// fresh) and to the same request: the same bytes encoded again. It
// reports whether fast took it.
func checkDecode[R kmsg.Request](t *testing.T, body []byte, version int16, fast func() bool, reused R, fresh func() R) bool {
	if !fast() {
		return false
	}
	want := fresh()
	want.SetVersion(version)
	if err := any(want).(interface{ UnsafeReadFrom([]byte) error }).UnsafeReadFrom(body); err != nil {
		t.Fatalf("v%d: the fast decoder took a request kmsg refuses: %v", version, err)
	}
	if got, exp := reused.AppendTo(nil), want.AppendTo(nil); !bytes.Equal(got, exp) {
		t.Fatalf("v%d: decoded differently from kmsg:\n fast %x\n kmsg %x", version, got, exp)
	}
	return true
}

func checkProduceDecode(t *testing.T, body []byte, version int16, reused *kmsg.ProduceRequest, txnID *string) bool {
	return checkDecode(t, body, version, func() bool { return readProduceRequest(body, version, reused, txnID) }, reused, kmsg.NewPtrProduceRequest)
}

func checkFetchDecode(t *testing.T, body []byte, version int16, reused *kmsg.FetchRequest) bool {
	return checkDecode(t, body, version, func() bool { return readFetchRequest(body, version, reused) }, reused, kmsg.NewPtrFetchRequest)
}

// The fast decoders take what clients send at every version they cover,
// decode it as kmsg does, into a reused request whose previous contents
// (a larger request) do not show through, and allocate nothing.
func TestFastDecodeEveryVersion(t *testing.T) {
	var pr kmsg.ProduceRequest
	var txnID string
	for v := int16(3); v <= 13; v++ {
		big := sampleProduce(v).AppendTo(nil)
		small := sampleProduce(v)
		small.Topics = small.Topics[:1]
		small.Topics[0].Partitions = small.Topics[0].Partitions[1:2]
		small.TransactionID = nil
		for _, body := range [][]byte{big, small.AppendTo(nil), big} {
			if !checkProduceDecode(t, body, v, &pr, &txnID) {
				t.Fatalf("produce v%d: the fast decoder refused a client's request", v)
			}
		}
		if a := testing.AllocsPerRun(100, func() { readProduceRequest(big, v, &pr, &txnID) }); a != 0 {
			t.Errorf("produce v%d: %.0f allocations per decode, want 0", v, a)
		}
	}
	var fr kmsg.FetchRequest
	for v := int16(4); v <= 18; v++ {
		big := sampleFetch(v).AppendTo(nil)
		small := sampleFetch(v)
		small.Topics, small.ForgottenTopics = small.Topics[1:], nil
		for _, body := range [][]byte{big, small.AppendTo(nil), big} {
			if !checkFetchDecode(t, body, v, &fr) {
				t.Fatalf("fetch v%d: the fast decoder refused a consumer's request", v)
			}
		}
		if a := testing.AllocsPerRun(100, func() { readFetchRequest(big, v, &fr) }); a != 0 {
			t.Errorf("fetch v%d: %.0f allocations per decode, want 0", v, a)
		}
	}
}

// A follower's fetch carries ReplicaState, a tagged field: kmsg decodes it.
func TestFastDecodeLeavesTagsToKmsg(t *testing.T) {
	r := sampleFetch(15)
	r.ReplicaState.ID, r.ReplicaState.Epoch = 2, 5
	var fr kmsg.FetchRequest
	if readFetchRequest(r.AppendTo(nil), 15, &fr) {
		t.Fatal("the fast decoder took a request with a tagged field")
	}
	r = sampleFetch(18)
	r.Topics[0].Partitions[0].HighWatermark = 77
	if readFetchRequest(r.AppendTo(nil), 18, &fr) {
		t.Fatal("the fast decoder took a partition with a tagged field")
	}
}

func FuzzProduceDecode(f *testing.F) {
	for v := int16(3); v <= 13; v++ {
		f.Add(uint8(v), sampleProduce(v).AppendTo(nil))
	}
	var reused kmsg.ProduceRequest
	var txnID string
	f.Fuzz(func(t *testing.T, version uint8, body []byte) {
		checkProduceDecode(t, body, int16(version%16), &reused, &txnID)
	})
}

func FuzzFetchDecode(f *testing.F) {
	for v := int16(4); v <= 18; v++ {
		f.Add(uint8(v), sampleFetch(v).AppendTo(nil))
	}
	var reused kmsg.FetchRequest
	f.Fuzz(func(t *testing.T, version uint8, body []byte) {
		checkFetchDecode(t, body, int16(version%20), &reused)
	})
}
