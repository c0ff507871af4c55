package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// sarama's transactional producer (transactions v1: AddPartitionsToTxn,
// EndTxn v3) commits and aborts against kzero.
func TestSaramaTransactionalProducer(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adminCreate(t, ctx, kadm.NewClient(newClient(t, b)), "sarama-tx", 3, nil)
	saramaTransactions(t, ctx, []string{b.Addr().String()}, "sarama-tx")
}

// The same against three kzero processes, the topic and the transaction
// state replicated three times: the coordinator's writes wait for their
// followers, each transaction's first write to a partition (Produce v9) is
// checked with the coordinator (KIP-890 part 1) on another broker or in
// process, and the markers are replicated before EndTxn answers.
func TestSaramaTransactionsThreeNodes(t *testing.T) {
	c := startProcCluster(t, 3, "--override", "min.insync.replicas=2")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if res, err := c.admin().CreateTopic(ctx, 3, 3, nil, "sarama-tx"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	saramaTransactions(t, ctx, slices.Clone(c.addrs), "sarama-tx")
}

// saramaTransactions commits, aborts and commits a transaction of nine
// records over topic's three partitions with sarama, then reads the
// committed records back with read_committed: each once, none aborted.
func saramaTransactions(t *testing.T, ctx context.Context, seeds []string, topic string) {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Transaction.ID = "sarama-producer"
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(seeds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for round, commit := range []bool{true, false, true} {
		if err := p.BeginTxn(); err != nil {
			t.Fatal(err)
		}
		for i := range 9 {
			msg := &sarama.ProducerMessage{Topic: topic, Partition: int32(i % 3), Value: sarama.StringEncoder(fmt.Sprintf("r%d-%d", round, i))}
			if _, _, err := p.SendMessage(msg); err != nil {
				t.Fatalf("round %d send %d: %v", round, i, err)
			}
		}
		if commit {
			err = p.CommitTxn()
		} else {
			err = p.AbortTxn()
		}
		if err != nil {
			t.Fatalf("round %d end (commit %v): %v", round, commit, err)
		}
	}
	seen := readAllFrom(t, ctx, seeds, topic, kgo.ReadCommitted(), 18)
	for k, n := range seen {
		if n != 1 || k[:2] == "r1" {
			t.Fatalf("read_committed saw %s %d times (%v)", k, n, seen)
		}
	}
	if len(seen) != 18 {
		t.Fatalf("read_committed saw %d records, want 18", len(seen))
	}
}

// flakyDialer is a kgo dialer whose connections are cut at random
// moments, while requests are in flight.
type flakyDialer struct {
	mu    sync.Mutex
	conns []net.Conn
	cuts  atomic.Int64
}

func (f *flakyDialer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err == nil {
		f.mu.Lock()
		f.conns = append(f.conns, c)
		f.mu.Unlock()
	}
	return c, err
}

// cutOne closes a random open connection.
func (f *flakyDialer) cutOne() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.conns) == 0 {
		return
	}
	i := rand.IntN(len(f.conns))
	f.conns[i].Close()
	f.conns = append(f.conns[:i], f.conns[i+1:]...)
	f.cuts.Add(1)
}

// An idempotent producer whose connections drop mid-request retries; the
// log keeps every record exactly once and in order per partition.
func TestIdempotentProducerSurvivesConnectionDrops(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adminCreate(t, ctx, kadm.NewClient(newClient(t, b)), "drops", 3, nil)

	f := &flakyDialer{}
	cl := newClient(t, b, kgo.Dialer(f.dial), kgo.DefaultProduceTopic("drops"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Millisecond),
		kgo.RequestRetries(1000), kgo.RetryBackoffFn(func(int) time.Duration { return 5 * time.Millisecond }))
	const n = 6000
	var failed atomic.Int64
	for i := range n {
		if i%200 == 100 {
			// Cut a connection while the last records are in flight.
			f.cutOne()
			time.Sleep(time.Millisecond) // pacing: the cut lands while the records before it are in flight
		}
		cl.Produce(ctx, &kgo.Record{Partition: int32(i % 3), Value: fmt.Appendf(nil, "%d", i)}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
				t.Errorf("record %d: %v", i, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if f.cuts.Load() == 0 {
		t.Fatal("no connection was cut")
	}
	t.Logf("%d connections cut", f.cuts.Load())

	// Every record once, in produce order within its partition.
	consumer := newClient(t, b, kgo.ConsumeTopics("drops"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	last := map[int32]int{0: -3 + 0, 1: -3 + 1, 2: -3 + 2}
	for got := 0; got < n; {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d", got, n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var v int
			fmt.Sscan(string(r.Value), &v)
			if v != last[r.Partition]+3 {
				t.Fatalf("partition %d: record %d after %d (a gap or a duplicate)", r.Partition, v, last[r.Partition])
			}
			last[r.Partition] = v
			got++
		})
	}
	ends, err := kadm.NewClient(consumer).ListEndOffsets(ctx, "drops")
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset != n/3 {
			t.Errorf("partition %d ends at %d, want %d: duplicates were written", o.Partition, o.Offset, n/3)
		}
	})
}
