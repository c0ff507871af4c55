package main

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"kzero/kzerotest/await"
	"kzero/node"
)

// txnVersions are the two transaction protocols clients speak: v2
// (KIP-890 part 2, what kgo uses when the broker finalizes
// transaction.version 2) and v1 (kgo capped below EndTxn v5 / Produce v12).
var txnVersions = []struct {
	name string
	opts []kgo.Opt
}{
	{"v2", nil},
	{"v1", []kgo.Opt{kgo.MaxVersions(func() *kversion.Versions {
		v := kversion.Stable()
		v.SetMaxKeyVersion(0, 11) // Produce
		v.SetMaxKeyVersion(26, 4) // EndTxn
		v.SetMaxKeyVersion(28, 4) // TxnOffsetCommit
		return v
	}())}},
}

func txnClient(t *testing.T, b *node.Node, id string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, b, append([]kgo.Opt{kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
}

// produceTxn writes n records to topic's partitions in one transaction
// and commits or aborts it.
func produceTxn(t *testing.T, ctx context.Context, cl *kgo.Client, topic, prefix string, n int, commit bool) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := &kgo.Record{Topic: topic, Partition: int32(i % 3), Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %s-%d: %v", prefix, i, err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit %v): %v", commit, err)
	}
}

// readAll consumes topic from the start until want records came (or the
// context ends) and returns the values seen.
func readAll(t *testing.T, ctx context.Context, b *node.Node, topic string, isolation kgo.IsolationLevel, want int) map[string]int {
	t.Helper()
	return readAllFrom(t, ctx, []string{b.Addr().String()}, topic, isolation, want)
}

// readAllFrom is readAll from the brokers at seeds.
func readAllFrom(t *testing.T, ctx context.Context, seeds []string, topic string, isolation kgo.IsolationLevel, want int) map[string]int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(isolation))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[string]int{}
	got := 0
	for got < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records: %v (seen %v)", got, want, ctx.Err(), seen)
		}
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++; got++ })
	}
	return seen
}

func TestTransactionsCommitAndAbort(t *testing.T) {
	for _, v := range txnVersions {
		t.Run(v.name, func(t *testing.T) {
			b := startTestBroker(t, t.TempDir())
			defer stopBroker(t, b)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			adm := kadm.NewClient(newClient(t, b))
			adminCreate(t, ctx, adm, "tx", 3, nil)

			cl := txnClient(t, b, "producer-"+v.name, v.opts...)
			produceTxn(t, ctx, cl, "tx", "a", 30, true)
			produceTxn(t, ctx, cl, "tx", "b", 30, false)
			produceTxn(t, ctx, cl, "tx", "c", 30, true)

			committed := readAll(t, ctx, b, "tx", kgo.ReadCommitted(), 60)
			for k, n := range committed {
				if n != 1 || k[0] == 'b' {
					t.Fatalf("read_committed saw %s %d times", k, n)
				}
			}
			all := readAll(t, ctx, b, "tx", kgo.ReadUncommitted(), 90)
			if len(all) != 90 {
				t.Fatalf("read_uncommitted saw %d distinct records, want 90", len(all))
			}
			// Each partition holds 3 x 10 records and 3 markers, and
			// nothing is left open: the LSO is the end.
			ends, err := adm.ListCommittedOffsets(ctx, "tx")
			if err != nil {
				t.Fatal(err)
			}
			ends.Each(func(o kadm.ListedOffset) {
				if o.Err != nil || o.Offset != 33 {
					t.Errorf("end offset %+v", o)
				}
			})
			described, err := adm.DescribeTransactions(ctx, "producer-"+v.name)
			if err != nil {
				t.Fatal(err)
			}
			d, ok := described["producer-"+v.name]
			if !ok || d.State != "CompleteCommit" || d.Err != nil {
				t.Fatalf("described %+v", described)
			}
			listed, err := adm.ListTransactions(ctx, nil, []string{"CompleteCommit"})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := listed["producer-"+v.name]; !ok || len(listed) != 1 {
				t.Fatalf("listed %+v", listed)
			}
		})
	}
}

// A second producer with the same transactional id fences the first: its
// open transaction is aborted and its next request fails as fenced.
func TestTransactionZombieFencing(t *testing.T) {
	for _, v := range txnVersions {
		t.Run(v.name, func(t *testing.T) {
			b := startTestBroker(t, t.TempDir())
			defer stopBroker(t, b)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			adm := kadm.NewClient(newClient(t, b))
			adminCreate(t, ctx, adm, "fence", 3, nil)

			zombie := txnClient(t, b, "same", v.opts...)
			if err := zombie.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := zombie.ProduceSync(ctx, &kgo.Record{Topic: "fence", Partition: 0, Value: []byte("zombie")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			fresh := txnClient(t, b, "same", v.opts...)
			produceTxn(t, ctx, fresh, "fence", "fresh", 6, true)

			err := zombie.ProduceSync(ctx, &kgo.Record{Topic: "fence", Partition: 0, Value: []byte("zombie-2")}).FirstErr()
			if err == nil {
				err = zombie.EndTransaction(ctx, kgo.TryCommit)
			}
			if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) && !errors.Is(err, kerr.InvalidTxnState) {
				t.Fatalf("zombie's write after fencing: %v, want fenced", err)
			}
			seen := readAll(t, ctx, b, "fence", kgo.ReadCommitted(), 6)
			if seen["zombie"] != 0 || seen["zombie-2"] != 0 || len(seen) != 6 {
				t.Fatalf("read_committed saw %v", seen)
			}
		})
	}
}

// A transaction left open longer than its timeout is aborted by the
// coordinator: the last stable offset moves past it.
func TestTransactionTimeoutAborts(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), "transaction.abort.timed.out.transaction.cleanup.interval.ms", "100")
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b))
	adminCreate(t, ctx, adm, "slow", 3, nil)

	stuck := txnClient(t, b, "stuck", kgo.TransactionTimeout(time.Second))
	if err := stuck.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := stuck.ProduceSync(ctx, &kgo.Record{Topic: "slow", Partition: 0, Value: []byte("left-open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	other := txnClient(t, b, "other")
	produceTxn(t, ctx, other, "slow", "after", 3, true)

	// read_committed can read "after" on partition 0 only once the stuck
	// transaction before it is aborted.
	seen := readAll(t, ctx, b, "slow", kgo.ReadCommitted(), 3)
	if seen["left-open"] != 0 {
		t.Fatalf("read_committed saw the aborted record: %v", seen)
	}
	d, err := adm.DescribeTransactions(ctx, "stuck")
	if err != nil {
		t.Fatal(err)
	}
	if got := d["stuck"]; got.State != "CompleteAbort" {
		t.Fatalf("stuck transaction is %+v, want CompleteAbort", got)
	}
	if err := stuck.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the timed out producer committed")
	}
}

// The coordinator's state survives a restart: a transaction open when the
// broker stopped is aborted when its id's next producer initializes.
func TestTransactionCoordinatorRestart(t *testing.T) {
	dir := t.TempDir()
	b := startTestBroker(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b))
	adminCreate(t, ctx, adm, "restart", 3, nil)
	cl := txnClient(t, b, "durable")
	produceTxn(t, ctx, cl, "restart", "before", 6, true)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "restart", Partition: int32(i), Value: []byte("open")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	stopBroker(t, b)

	b = startTestBroker(t, dir)
	defer stopBroker(t, b)
	adm = kadm.NewClient(newClient(t, b))
	var d kadm.DescribedTransaction
	var err error
	if !await.Poll(60*time.Second, func() bool {
		var ds kadm.DescribedTransactions
		if ds, err = adm.DescribeTransactions(ctx, "durable"); err == nil {
			d = ds["durable"]
			err = d.Err
		}
		return err == nil
	}) {
		t.Fatalf("describe after restart: %v", err)
	}
	if d.State != "Ongoing" || len(d.Topics["restart"]) != 3 {
		t.Fatalf("after restart: %+v", d)
	}
	next := txnClient(t, b, "durable")
	produceTxn(t, ctx, next, "restart", "after", 3, true)
	seen := readAll(t, ctx, b, "restart", kgo.ReadCommitted(), 9)
	if seen["open"] != 0 || len(seen) != 9 {
		t.Fatalf("read_committed saw %v", seen)
	}
}
