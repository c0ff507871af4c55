package api_test

// The codes a transactional write gets when the transaction coordinator
// does not hold its partition in the producer's transaction (KIP-890):
// Produce before v12 only verifies, v12 adds the partition, and both
// answer as a partition leader does; TxnOffsetCommit maps the
// coordinator's answer for the group's partition the same way.

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/kzerotest/await"
	"kzero/node/nodetest"
	"kzero/record"
)

func TestTxnVerifyCodes(t *testing.T) {
	b := startBroker(t, t.TempDir(), fastGroups)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const topic, txnID, group = "tv", "tv-txn", "tv-group"
	kzerotest.CreateTopic(t, ctx, nodetest.Client(t, b), topic, 1, nil)
	conn := kzerotest.Dial(t, b.Addr().String())
	kzerotest.FindCoordinator(t, conn, 3, &kmsg.FindCoordinatorRequest{CoordinatorKey: txnID, CoordinatorType: 1})
	kzerotest.FindCoordinator(t, conn, 3, &kmsg.FindCoordinatorRequest{CoordinatorKey: group})

	// initProducer runs InitProducerID for txnID, retrying while the
	// coordinator is not ready: each call bumps the epoch.
	initProducer := func() (int64, int16) {
		t.Helper()
		var resp *kmsg.InitProducerIDResponse
		if !await.Poll(30*time.Second, func() bool {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID = kmsg.StringPtr(txnID)
			req.TransactionTimeoutMillis = 60000
			req.ProducerID, req.ProducerEpoch = -1, -1
			resp = kzerotest.Do[*kmsg.InitProducerIDResponse](t, conn, 4, req)
			switch resp.ErrorCode {
			case 0:
				return true
			case kerr.CoordinatorLoadInProgress.Code, kerr.CoordinatorNotAvailable.Code, kerr.ConcurrentTransactions.Code:
				return false // retriable, as a client retries
			}
			t.Fatalf("InitProducerID: %v", kerr.ErrorForCode(resp.ErrorCode))
			return false
		}) {
			t.Fatalf("InitProducerID: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		return resp.ProducerID, resp.ProducerEpoch
	}
	produce := func(version int16, pid int64, epoch int16) int16 {
		t.Helper()
		var bb record.Builder
		bb.Reset(record.BatchHeader{Transactional: true, LastOffsetDelta: -1, BaseTimestamp: time.Now().UnixMilli(),
			ProducerID: pid, ProducerEpoch: epoch})
		bb.Add(&record.Record{Value: []byte("v")})
		batch, err := bb.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		req := kzerotest.ProduceRequest(topic, 0, batch)
		req.TransactionID, req.Acks = kmsg.StringPtr(txnID), -1
		return kzerotest.Do[*kmsg.ProduceResponse](t, conn, version, req).Topics[0].Partitions[0].ErrorCode
	}
	commitOffset := func(version int16, pid int64, epoch int16) int16 {
		t.Helper()
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group = txnID, group
		req.ProducerID, req.ProducerEpoch, req.Generation = pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Offset, rp.LeaderEpoch = 1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return kzerotest.Do[*kmsg.TxnOffsetCommitResponse](t, conn, version, req).Topics[0].Partitions[0].ErrorCode
	}

	old, oldEpoch := initProducer()
	pid, epoch := initProducer()
	if pid != old || epoch != oldEpoch+1 {
		t.Fatalf("InitProducerID again: producer %d epoch %d after %d epoch %d", pid, epoch, old, oldEpoch)
	}
	const unknown = 1 << 40 // a producer id the coordinator never gave txnID

	// Before AddPartitionsToTxn and AddOffsetsToTxn: verified, not in the
	// transaction.
	kzerotest.WantCode(t, "produce v11, partition not in the transaction", produce(11, pid, epoch), kerr.InvalidTxnState)
	kzerotest.WantCode(t, "TxnOffsetCommit v3, group not in the transaction", commitOffset(3, pid, epoch), kerr.InvalidTxnState)
	// An older epoch: the coordinator says so when verifying, and says
	// PRODUCER_FENCED when adding, which a partition answers as
	// INVALID_PRODUCER_EPOCH.
	kzerotest.WantCode(t, "produce v11, older epoch", produce(11, pid, oldEpoch), kerr.InvalidProducerEpoch)
	kzerotest.WantCode(t, "produce v12, older epoch", produce(12, pid, oldEpoch), kerr.InvalidProducerEpoch)
	kzerotest.WantCode(t, "TxnOffsetCommit v3, older epoch", commitOffset(3, pid, oldEpoch), kerr.InvalidProducerEpoch)
	kzerotest.WantCode(t, "TxnOffsetCommit v5, older epoch", commitOffset(5, pid, oldEpoch), kerr.InvalidProducerEpoch)
	// A producer id the transactional id does not have: when adding,
	// INVALID_PRODUCER_ID_MAPPING is answered INVALID_TXN_STATE.
	kzerotest.WantCode(t, "produce v12, unknown producer id", produce(12, unknown, epoch), kerr.InvalidTxnState)
	kzerotest.WantCode(t, "TxnOffsetCommit v5, unknown producer id", commitOffset(5, unknown, epoch), kerr.InvalidTxnState)

	// v12 and v5 add the partitions themselves: the writes are taken.
	kzerotest.WantCode(t, "produce v12", produce(12, pid, epoch), nil)
	kzerotest.WantCode(t, "TxnOffsetCommit v5", commitOffset(5, pid, epoch), nil)
}
