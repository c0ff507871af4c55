package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A ShareFetch parked behind another member's acquisition lock returns
// the records once the lock ends, not at its max wait (Kafka completes its
// DelayedShareFetch when an acquisition lock times out). The parked fetch
// waits up to 60 s and the test gives up long before: it cannot pass
// unless the lock's end wakes the fetch.
func TestShareLockExpiryWakesParkedFetch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir(), "group.share.record.lock.duration.ms", "2000")
	defer stopBroker(t, b)
	prod := shareTopic(t, ctx, b, "wake", "sq", 1)
	produceBatches(t, ctx, prod, 0, 3, 3)
	id := topicID(t, ctx, prod, "sq")

	// Each member on its own connection: a connection's requests are
	// served one at a time.
	fetch := func(cl *kgo.Client, member string, epoch, maxWait int32, ack *kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) kmsg.ShareFetchResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrShareFetchRequest()
		req.Version = 2
		req.GroupID, req.MemberID = kmsg.StringPtr("wake"), kmsg.StringPtr(member)
		req.ShareSessionEpoch, req.MaxWaitMillis, req.MinBytes, req.MaxRecords, req.BatchSize = epoch, maxWait, 1, 10, 10
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = id
		rp := kmsg.NewShareFetchRequestTopicPartition()
		if ack != nil {
			rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, *ack)
		}
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("share fetch of %s: %v %+v", member, err, resp)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return kmsg.ShareFetchResponseTopicPartition{}
		}
		return resp.Topics[0].Partitions[0]
	}
	a, bc := newClient(t, b), newClient(t, b)
	defer a.Close()
	defer bc.Close()

	got := fetch(a, "member-a", 0, 0, nil)
	if len(got.AcquiredRecords) != 1 || got.AcquiredRecords[0].FirstOffset != 0 || got.AcquiredRecords[0].LastOffset != 2 {
		t.Fatalf("member-a acquired %+v", got.AcquiredRecords)
	}
	// member-a holds every record: member-b's fetch parks, and returns
	// when member-a's lock ends.
	got = fetch(bc, "member-b", 0, 60_000, nil)
	if len(got.AcquiredRecords) != 1 || got.AcquiredRecords[0].FirstOffset != 0 || got.AcquiredRecords[0].LastOffset != 2 || got.AcquiredRecords[0].DeliveryCount != 2 {
		t.Fatalf("member-b acquired %+v, want 0-2 on their second delivery", got.AcquiredRecords)
	}
	// member-a's lock is over: its acknowledgement comes too late.
	ack := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
	ack.FirstOffset, ack.LastOffset, ack.AcknowledgeTypes = 0, 2, []int8{1}
	if p := fetch(a, "member-a", 1, 0, &ack); p.AcknowledgeErrorCode != kerr.InvalidRecordState.Code {
		t.Fatalf("member-a's acknowledgement after its lock ended: %v, want INVALID_RECORD_STATE", kerr.ErrorForCode(p.AcknowledgeErrorCode))
	}
}
