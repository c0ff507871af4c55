package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest/await"
	"kzero/log"
	"kzero/net/quota"
	"kzero/node"
	"kzero/node/nodetest"
)

// quotaWindow sets the broker's quota window (quota.window.num samples of
// 1 s).
func quotaWindow(samples int) func(*node.Config) {
	return func(c *node.Config) {
		c.Quota = quota.Config{Samples: samples, Window: time.Second}
	}
}

// quotaFetcher is a topic of one partition holding one record, and raw
// fetches of it (at the version kgo picks, by topic name and id).
type quotaFetcher struct {
	t     *testing.T
	ctx   context.Context
	b     *node.Node
	adm   *kadm.Client
	topic string
}

// startQuotaFetcher starts a broker of samples quota samples (stopped
// when the test ends) and makes the topic.
func startQuotaFetcher(t *testing.T, samples int, topic string) *quotaFetcher {
	t.Helper()
	b := startBroker(t, t.TempDir(), quotaWindow(samples))
	t.Cleanup(func() { nodetest.Stop(t, b) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cl := nodetest.Client(t, b, kgo.DefaultProduceTopic(topic))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 1000)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return &quotaFetcher{t: t, ctx: ctx, b: b, adm: adm, topic: topic}
}

// setQuota sets key=v for a client id.
func (q *quotaFetcher) setQuota(clientID, key string, v float64) {
	q.t.Helper()
	res, err := q.adm.AlterClientQuotas(q.ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &clientID}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: key, Value: v}},
	}})
	if err != nil || res[0].Err != nil {
		q.t.Fatalf("set %s: %v %+v", key, err, res)
	}
}

// fetch sends a fetch from offset 0 (partition 0 listed when withPart)
// on cl's connection.
func (q *quotaFetcher) fetch(cl *kgo.Client, id, epoch int32, withPart bool, minBytes, maxWaitMs int32) *kmsg.FetchResponse {
	q.t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.SessionID, req.SessionEpoch = id, epoch
	req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 1<<20, minBytes, maxWaitMs
	if withPart {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = q.topic, q.b.Controller().Image().Topic(q.topic).ID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(q.ctx, cl)
	if err != nil {
		q.t.Fatal(err)
	}
	return resp
}

// records counts the partitions with records in r.
func records(r *kmsg.FetchResponse) (n int) {
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if len(p.RecordBatches) > 0 {
				n++
			}
		}
	}
	return n
}

// TestFetchThrottledByRequestQuota: a consumer over its
// request_percentage (and under no byte rate) gets Kafka's throttled
// fetch answer, answered at once or after a wait in the purgatory: no
// records, throttle_time_ms set, and its connection muted.
func TestFetchThrottledByRequestQuota(t *testing.T) {
	q := startQuotaFetcher(t, 2, "rq")
	b := q.b
	q.setQuota("busy", "request_percentage", 0.0001)
	busy := nodetest.Client(t, b, kgo.ClientID("busy"))
	for _, c := range []struct {
		what     string
		minBytes int32
		maxWait  int32
	}{
		{"answered at once", 1, 0},
		{"answered from the purgatory", 1 << 20, 50},
	} {
		mutes := b.ServerStats().Mutes
		var r *kmsg.FetchResponse
		// The quota reaches the broker with its metadata; from then on
		// every fetch is over it (the throttle is bounded by one window,
		// the rate stays far over).
		for i := 0; ; i++ {
			if i == 20 {
				t.Fatalf("%s: 20 fetches over a 0.0001%% request quota and no throttle in the answer", c.what)
			}
			if r = q.fetch(busy, 0, -1, true, c.minBytes, c.maxWait); r.ThrottleMillis > 0 {
				break
			}
			if records(r) != 1 {
				t.Fatalf("%s: unthrottled fetch: %d partitions with records, want 1", c.what, records(r))
			}
		}
		if r.ErrorCode != 0 || r.SessionID != 0 || records(r) != 0 || len(r.Topics) != 0 {
			t.Fatalf("%s: throttled answer: error %d session %d, %d batches in %d topics, want an empty answer",
				c.what, r.ErrorCode, r.SessionID, records(r), len(r.Topics))
		}
		if b.ServerStats().Mutes == mutes {
			t.Fatalf("%s: throttled and not muted", c.what)
		}
	}
}

// TestThrottledFetchSessions: a throttled full fetch that would open a
// session answers session id 0 (opening none, as Kafka's
// FullFetchContext); a throttled incremental fetch answers its session's
// id with no partitions, and the session goes on at its next epoch.
func TestThrottledFetchSessions(t *testing.T) {
	q := startQuotaFetcher(t, 2, "bq")
	b := q.b
	free := nodetest.Client(t, b, kgo.ClientID("free"))
	open := q.fetch(free, 0, 0, true, 1, 0)
	if open.ErrorCode != 0 || open.SessionID == 0 || records(open) != 1 {
		t.Fatalf("open: error %d session %d, %d batches", open.ErrorCode, open.SessionID, records(open))
	}
	id := open.SessionID
	// A response of about 1 KB is 1,000 times over 1 B/s: every fetch
	// of "slow" is throttled, for long; each goes on a client of its own,
	// as the mute holds its connection.
	q.setQuota("slow", "consumer_byte_rate", 1)
	slow := func() *kgo.Client { return nodetest.Client(t, b, kgo.ClientID("slow")) }
	var full *kmsg.FetchResponse
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("20 full fetches over a consumer_byte_rate of 1 and no throttle")
		}
		if full = q.fetch(slow(), 0, 0, true, 1, 0); full.ThrottleMillis > 0 {
			break
		}
	}
	if full.ErrorCode != 0 || full.SessionID != 0 || len(full.Topics) != 0 {
		t.Fatalf("throttled full fetch: error %d session %d, %d topics; want session 0 and nothing",
			full.ErrorCode, full.SessionID, len(full.Topics))
	}
	// The incremental fetch at epoch 1 re-reads the record (its fetch
	// offset is still 0): throttled.
	inc := q.fetch(slow(), id, 1, false, 1, 0)
	if inc.ThrottleMillis <= 0 || inc.ErrorCode != 0 || inc.SessionID != id || len(inc.Topics) != 0 {
		t.Fatalf("throttled incremental fetch: throttle %d error %d session %d (want %d), %d topics",
			inc.ThrottleMillis, inc.ErrorCode, inc.SessionID, id, len(inc.Topics))
	}
	// Its partitions were told nothing: at epoch 2 the record comes.
	next := q.fetch(free, id, 2, false, 1, 0)
	if next.ErrorCode != 0 || next.SessionID != id || records(next) != 1 {
		t.Fatalf("after the throttle: error %d session %d, %d batches", next.ErrorCode, next.SessionID, records(next))
	}
}

// TestFetchQuotaOfOneSample: with quota.window.num=1 a consumer_byte_rate
// allows nothing in a window (Kafka's getMaxValueInQuotaWindow is
// rate*(samples-1)*window), so a consumer's fetch may read up to 0 bytes
// and waits for at most 0 (Kafka's fetchMinBytes is capped by its
// fetchMaxBytes): a fetch asking to wait an hour for 1 MiB is answered at
// once.
func TestFetchQuotaOfOneSample(t *testing.T) {
	q := startQuotaFetcher(t, 1, "one")
	b := q.b
	q.setQuota("one", "consumer_byte_rate", 100)
	// Each fetch on a client of its own (a throttle mutes the
	// connection), until one is throttled: the quota has arrived. Before,
	// the first batch comes whole (KIP-74).
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("20 fetches over a consumer_byte_rate of 100 B/s and no throttle")
		}
		r := q.fetch(nodetest.Client(t, b, kgo.ClientID("one")), 0, -1, true, 1, 0)
		if r.ThrottleMillis > 0 {
			break
		}
		if records(r) != 1 {
			t.Fatalf("unthrottled fetch: %d batches, want the first batch whole", records(r))
		}
	}
	// Under the quota now: an hour's wait for 1 MiB would park, unless the
	// quota caps the min bytes. The answer is throttled and empty (the
	// 1,000-byte batch is over 100 B/s however it is measured).
	r := q.fetch(nodetest.Client(t, b, kgo.ClientID("one")), 0, -1, true, 1<<20, 3600_000)
	if r.ThrottleMillis <= 0 || records(r) != 0 {
		t.Fatalf("fetch for 1 MiB: throttle %d ms, %d batches; want throttled and empty", r.ThrottleMillis, records(r))
	}
}

// TestStaleIncrementalFetchAnswer: an incremental fetch that waits in the
// purgatory while another request of its session is served (the session
// moves two epochs on) is answered INVALID_FETCH_SESSION_EPOCH with the
// session's id and no partitions, as Kafka's IncrementalFetchContext
// answers a "possible duplicate request" when it builds the response:
// unthrottled (updateAndGenerateResponseData) and throttled
// (getThrottledResponse, with the throttle time).
func TestStaleIncrementalFetchAnswer(t *testing.T) {
	q := startQuotaFetcher(t, 2, "stale")
	b := q.b
	part, ok := b.Replicas().Partition(log.TopicPartition{Topic: q.topic})
	if !ok {
		t.Fatal("stale-0 is not local")
	}
	free := nodetest.Client(t, b, kgo.ClientID("free"))
	q.setQuota("busy", "request_percentage", 0.0001)
	busy := func() *kgo.Client { return nodetest.Client(t, b, kgo.ClientID("busy")) }
	// Each fetch of "busy" on a client of its own (a throttle mutes the
	// connection), until one is throttled: the quota has arrived.
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("20 fetches over a 0.0001% request quota and no throttle")
		}
		if q.fetch(busy(), 0, -1, true, 1, 0).ThrottleMillis > 0 {
			break
		}
	}
	for _, c := range []struct {
		what      string
		cl        *kgo.Client
		throttled bool
	}{
		{"unthrottled", nodetest.Client(t, b, kgo.ClientID("free")), false},
		{"throttled", busy(), true},
	} {
		open := q.fetch(free, 0, 0, true, 1, 0)
		if open.ErrorCode != 0 || open.SessionID == 0 || records(open) != 1 {
			t.Fatalf("%s: open: error %d session %d, %d batches", c.what, open.ErrorCode, open.SessionID, records(open))
		}
		id := open.SessionID
		// Epoch 1 reads from offset 1, past the record: it waits for 1 MiB
		// for up to 3 s.
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID = 12, -1
		req.SessionID, req.SessionEpoch = id, 1
		req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 1<<20, 1<<20, 3000
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = q.topic, b.Controller().Image().Topic(q.topic).ID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset, rp.PartitionMaxBytes = 1, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		type answer struct {
			r   *kmsg.FetchResponse
			err error
		}
		parked := make(chan answer, 1)
		go func() {
			r, err := req.RequestWith(q.ctx, c.cl)
			parked <- answer{r, err}
		}()
		await.True(t, 10*time.Second, func() bool {
			select {
			case a := <-parked:
				t.Fatalf("%s: the epoch 1 fetch answered at once: %v %+v", c.what, a.err, a.r)
			default:
			}
			return part.Waiting() == 1
		}, c.what+": the epoch 1 fetch parked")
		// Epoch 2, served while epoch 1 waits.
		if next := q.fetch(free, id, 2, false, 1, 0); next.ErrorCode != 0 || next.SessionID != id {
			t.Fatalf("%s: epoch 2: error %d session %d", c.what, next.ErrorCode, next.SessionID)
		}
		a := <-parked
		if a.err != nil {
			t.Fatal(a.err)
		}
		r := a.r
		if r.ErrorCode != kerr.InvalidFetchSessionEpoch.Code || r.SessionID != id || len(r.Topics) != 0 || (r.ThrottleMillis > 0) != c.throttled {
			t.Fatalf("%s: the epoch 1 fetch answered after epoch 2: error %d session %d (want %d), %d topics, throttle %d ms; want INVALID_FETCH_SESSION_EPOCH and nothing",
				c.what, r.ErrorCode, r.SessionID, id, len(r.Topics), r.ThrottleMillis)
		}
		// The session goes on at epoch 3.
		if r := q.fetch(free, id, 3, false, 1, 0); r.ErrorCode != 0 || r.SessionID != id {
			t.Fatalf("%s: epoch 3: error %d session %d", c.what, r.ErrorCode, r.SessionID)
		}
	}
}
