package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node/nodetest"
)

// Fetch sessions (KIP-227) driven by hand: open, incremental fetches that
// return only partitions with news, forgotten partitions, bad epochs and
// unknown sessions.
func TestFetchSessions(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b, kgo.DefaultProduceTopic("s"))
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, "s"); err != nil {
		t.Fatal(err)
	}
	produce := func(p int32) {
		t.Helper()
		r := &kgo.Record{Topic: "s", Partition: p, Value: []byte("v")}
		cl2 := nodetest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err := cl2.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	fetch := func(id, epoch int32, parts map[int32]int64, forget []int32) *kmsg.FetchResponse {
		t.Helper()
		req := kmsg.NewPtrFetchRequest()
		req.Version = 12
		req.ReplicaID = -1
		req.SessionID, req.SessionEpoch = id, epoch
		req.MaxBytes = 1 << 20
		if len(parts) > 0 {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = "s", b.Controller().Image().Topic("s").ID
			for p, off := range parts {
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, off, 1<<20
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		if len(forget) > 0 {
			ft := kmsg.NewFetchRequestForgottenTopic()
			ft.Topic, ft.TopicID, ft.Partitions = "s", b.Controller().Image().Topic("s").ID, forget
			req.ForgottenTopics = append(req.ForgottenTopics, ft)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	count := func(r *kmsg.FetchResponse) (n int) {
		for _, t := range r.Topics {
			n += len(t.Partitions)
		}
		return n
	}
	produce(0)
	full := fetch(0, 0, map[int32]int64{0: 0, 1: 0, 2: 0}, nil)
	if full.ErrorCode != 0 || full.SessionID == 0 || count(full) != 3 || full.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("open session: error %d id %d partitions %d", full.ErrorCode, full.SessionID, count(full))
	}
	id := full.SessionID
	// Nothing changed: an incremental fetch returns no partitions.
	if inc := fetch(id, 1, map[int32]int64{0: 1}, nil); inc.ErrorCode != 0 || count(inc) != 0 {
		t.Fatalf("quiet incremental: error %d, %d partitions: %+v", inc.ErrorCode, count(inc), inc.Topics)
	}
	// A record on partition 1 brings back partition 1 only.
	produce(1)
	inc := fetch(id, 2, nil, nil)
	if count(inc) != 1 || inc.Topics[0].Partitions[0].Partition != 1 || len(inc.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatalf("incremental after a produce: %+v", inc.Topics)
	}
	// Forgotten partitions are no longer fetched.
	produce(2)
	if inc := fetch(id, 3, map[int32]int64{1: 1}, []int32{2}); count(inc) != 0 {
		t.Fatalf("forgotten partition returned: %+v", inc.Topics)
	}
	if r := fetch(id, 7, nil, nil); r.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("bad epoch: error %d", r.ErrorCode)
	}
	if r := fetch(id+1, 1, nil, nil); r.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: error %d", r.ErrorCode)
	}
	// Epoch -1 closes the session and fetches sessionless.
	if r := fetch(id, -1, map[int32]int64{0: 0}, nil); r.ErrorCode != 0 || r.SessionID != 0 || count(r) != 1 {
		t.Fatalf("final epoch: %d %d %d", r.ErrorCode, r.SessionID, count(r))
	}
	if r := fetch(id, 4, nil, nil); r.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("closed session still there: %d", r.ErrorCode)
	}
}

// TestFetchSessionEmptiedAndTopicIDs: as Kafka's FetchManager.newContext,
// an incremental fetch that leaves its session with no partition closes
// it and is answered as a sessionless fetch (session id 0), and a
// session opened by name (Fetch v12) serves no v13 request and one opened
// by topic id no v12 request: FETCH_SESSION_TOPIC_ID_ERROR.
func TestFetchSessionEmptiedAndTopicIDs(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "e"); err != nil {
		t.Fatal(err)
	}
	id := b.Controller().Image().Topic("e").ID
	conn := kzerotest.Dial(t, b.Addr().String())
	fetch := func(version int16, session, epoch int32, part, forget bool) *kmsg.FetchResponse {
		t.Helper()
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxBytes = -1, 1<<20
		req.SessionID, req.SessionEpoch = session, epoch
		if part {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = "e", id
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.PartitionMaxBytes = 1 << 20
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		if forget {
			ft := kmsg.NewFetchRequestForgottenTopic()
			ft.Topic, ft.TopicID, ft.Partitions = "e", id, []int32{0}
			req.ForgottenTopics = append(req.ForgottenTopics, ft)
		}
		return kzerotest.Do[*kmsg.FetchResponse](t, conn, version, req)
	}
	for _, v := range []int16{12, 13} {
		open := fetch(v, 0, 0, true, false)
		if open.ErrorCode != 0 || open.SessionID == 0 {
			t.Fatalf("v%d open: error %d session %d", v, open.ErrorCode, open.SessionID)
		}
		other := int16(25 - v) // 13 for 12, 12 for 13
		if r := fetch(other, open.SessionID, 1, false, false); r.ErrorCode != kerr.FetchSessionTopicIDError.Code {
			t.Errorf("v%d session used at v%d: error %d, want FETCH_SESSION_TOPIC_ID_ERROR", v, other, r.ErrorCode)
		}
		// The epoch did not move: forgetting the only partition empties
		// the session, which closes.
		r := fetch(v, open.SessionID, 1, false, true)
		if r.ErrorCode != 0 || r.SessionID != 0 || len(r.Topics) != 0 {
			t.Errorf("v%d session emptied: error %d session %d, %d topics; want a sessionless answer", v, r.ErrorCode, r.SessionID, len(r.Topics))
		}
		if r := fetch(v, open.SessionID, 2, false, false); r.ErrorCode != kerr.FetchSessionIDNotFound.Code {
			t.Errorf("v%d session after it emptied: error %d, want FETCH_SESSION_ID_NOT_FOUND", v, r.ErrorCode)
		}
	}
}
