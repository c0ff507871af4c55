package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/node"
)

// etl is one consume-transform-produce worker: a kgo GroupTransactSession
// reading "in" in group "etl" and writing each record to "out", offsets
// committed in the same transaction (TxnOffsetCommit, KIP-447).
type etl struct {
	sess *kgo.GroupTransactSession
	kill *killSwitch
}

func startETL(t *testing.T, b *node.Node, txnID string, opts ...kgo.Opt) *etl {
	t.Helper()
	k := &killSwitch{}
	sess, err := kgo.NewGroupTransactSession(append([]kgo.Opt{
		kgo.SeedBrokers(b.Addr().String()),
		kgo.Dialer(k.dial),
		kgo.TransactionalID(txnID),
		kgo.ConsumerGroup("etl"),
		kgo.ConsumeTopics("in"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.RequireStableFetchOffsets(),
		kgo.SessionTimeout(6 * time.Second),
		kgo.TransactionTimeout(10 * time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &etl{sess: sess, kill: k}
}

// step runs one transaction: whatever one poll returns, copied to "out"
// (same partition), committed with the offsets. It returns how many
// records the transaction carried if it committed.
func (e *etl) step(ctx context.Context) (int, error) {
	fs := e.sess.PollFetches(ctx)
	if err := fs.Err0(); err != nil && ctx.Err() == nil {
		return 0, err
	}
	if fs.NumRecords() == 0 {
		return 0, nil
	}
	if err := e.sess.Begin(); err != nil {
		return 0, err
	}
	n := 0
	fs.EachRecord(func(r *kgo.Record) {
		e.sess.Produce(ctx, &kgo.Record{Topic: "out", Partition: r.Partition, Key: r.Key, Value: r.Value}, nil)
		n++
	})
	committed, err := e.sess.End(ctx, kgo.TryCommit)
	if !committed {
		return 0, err
	}
	return n, err
}

// A consume-transform-produce loop killed mid-stream and restarted ends
// with every input record in the output exactly once (read_committed).
func TestExactlyOnceConsumeTransformProduce(t *testing.T) {
	for _, v := range txnVersions {
		t.Run(v.name, func(t *testing.T) {
			b := startTestBroker(t, t.TempDir(), "group.initial.rebalance.delay.ms", "0")
			defer stopBroker(t, b)
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			adm := kadm.NewClient(newClient(t, b))
			adminCreate(t, ctx, adm, "in", 3, nil)
			adminCreate(t, ctx, adm, "out", 3, nil)
			const n = 3000
			prod := newClient(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			for i := range n {
				prod.Produce(ctx, &kgo.Record{Topic: "in", Partition: int32(i % 3), Value: fmt.Appendf(nil, "%d", i)}, nil)
			}
			if err := prod.Flush(ctx); err != nil {
				t.Fatal(err)
			}

			// The first worker commits some transactions, then dies in the
			// middle of one: produced, not ended, connections cut.
			first := startETL(t, b, "etl-worker", append(v.opts, kgo.FetchMaxBytes(4096), kgo.FetchMaxPartitionBytes(2048))...)
			done := 0
			for done < n/3 {
				got, err := first.step(ctx)
				if err != nil {
					t.Fatalf("first worker: %v", err)
				}
				done += got
			}
			fs := first.sess.PollFetches(ctx)
			if err := first.sess.Begin(); err != nil {
				t.Fatal(err)
			}
			fs.EachRecord(func(r *kgo.Record) {
				if err := first.sess.Client().ProduceSync(ctx, &kgo.Record{Topic: "out", Partition: r.Partition, Value: r.Value}).FirstErr(); err != nil {
					t.Errorf("dying produce: %v", err)
				}
			})
			first.kill.kill()
			first.sess.Close()

			// The restarted worker (same transactional id) fences the dead
			// one, resumes at the committed offsets and finishes.
			second := startETL(t, b, "etl-worker", v.opts...)
			defer second.sess.Close()
			for done < n {
				got, err := second.step(ctx)
				if err != nil {
					t.Fatalf("second worker: %v", err)
				}
				done += got
			}
			if done != n {
				t.Fatalf("workers committed %d records, want %d", done, n)
			}
			seen := readAll(t, ctx, b, "out", kgo.ReadCommitted(), n)
			for i := range n {
				if c := seen[fmt.Sprint(i)]; c != 1 {
					t.Fatalf("record %d is in the output %d times", i, c)
				}
			}
			offs, err := adm.FetchOffsets(ctx, "etl")
			if err != nil {
				t.Fatal(err)
			}
			offs.Each(func(o kadm.OffsetResponse) {
				if o.Err != nil || o.At != n/3 {
					t.Errorf("committed %s/%d at %d (%v), want %d", o.Topic, o.Partition, o.At, o.Err, n/3)
				}
			})
		})
	}
}
