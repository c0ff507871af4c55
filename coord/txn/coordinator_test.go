package txn

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
	"kzero/record"
	"kzero/replica"
)

// Tests of the coordinator on a real __transaction_state partition and
// real data partitions in a temporary log dir, without sockets; the clock
// is the test's.

type node struct {
	t        testing.TB
	logs     *log.Manager
	replicas *replica.Manager
	nextPID  atomic.Int64
	clock    atomic.Int64
	markers  *faultyMarkers
	close    func()
}

// faultyMarkers writes markers locally unless told to fail.
type faultyMarkers struct {
	LocalMarkers
	fail atomic.Bool
	mu   sync.Mutex
	n    int
}

func (f *faultyMarkers) WriteMarker(tp log.TopicPartition, pid int64, epoch int16, ce int32, commit bool, v int16) error {
	if f.fail.Load() {
		return errors.New("injected marker failure")
	}
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	return f.LocalMarkers.WriteMarker(tp, pid, epoch, ce, commit, v)
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openNode(t testing.TB, dir string) *node {
	t.Helper()
	cfg := log.DefaultManagerConfig(dir)
	cfg.Defaults.SegmentIndexBytes = 1 << 16
	cfg.Logger = discard()
	logs, err := log.OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, logs: logs, replicas: replica.NewManager(1, logs)}
	n.nextPID.Store(1000)
	n.clock.Store(1_000_000)
	n.markers = &faultyMarkers{LocalMarkers: LocalMarkers{Replicas: n.replicas}}
	var once sync.Once
	n.close = func() { once.Do(func() { logs.Close() }) }
	t.Cleanup(n.close)
	return n
}

func (n *node) lead(topic string, partition int32) *replica.Partition {
	n.t.Helper()
	cfg := log.DefaultConfig()
	cfg.SegmentIndexBytes = 1 << 16
	p, err := n.replicas.MakeLeader(replica.LeaderSpec{
		TP: log.TopicPartition{Topic: topic, Partition: partition}, ISR: []int32{1}, MinInsyncReplicas: 1, Config: cfg})
	if err != nil {
		n.t.Fatal(err)
	}
	return p
}

// coordinator returns a loaded coordinator of a one-partition
// __transaction_state, with data partitions d-0 and d-1 led here.
func (n *node) coordinator() *Coordinator {
	n.t.Helper()
	n.lead("d", 0)
	n.lead("d", 1)
	c := New(Config{
		NumPartitions: 1,
		AllocateProducerID: func(context.Context) (int64, error) {
			return n.nextPID.Add(1), nil
		},
		Markers: n.markers,
		Logger:  discard(),
	})
	c.now = n.clock.Load
	n.t.Cleanup(c.Close)
	<-c.Lead(n.lead(TopicName, 0))
	return c
}

var (
	d0 = log.TopicPartition{Topic: "d", Partition: 0}
	d1 = log.TopicPartition{Topic: "d", Partition: 1}
)

// wantErr checks that got wraps want (is nil for a nil want).
func wantErr(t *testing.T, what string, got error, want *kerr.Error) {
	t.Helper()
	if want == nil && got != nil || want != nil && !errors.Is(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func initPID(t *testing.T, c *Coordinator, id string) (int64, int16) {
	t.Helper()
	pid, epoch, err := c.InitProducerID(context.Background(), id, 60000, -1, -1)
	if err != nil {
		t.Fatalf("init %s: %v", id, err)
	}
	return pid, epoch
}

// markers lists the control batches of a partition: producer id, epoch
// and whether each commits.
func markers(t *testing.T, n *node, tp log.TopicPartition) (out []string) {
	t.Helper()
	p, ok := n.replicas.Partition(tp)
	if !ok {
		t.Fatalf("no partition %s", tp)
	}
	l := p.Log()
	err := l.Scan(0, l.LogEndOffset(), func(b record.Batch) error {
		if b.IsControl() {
			typ, err := b.ControlType()
			if err != nil {
				return err
			}
			out = append(out, typ.String()+"@"+itoa(int64(b.ProducerEpoch())))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func itoa(v int64) string {
	if v < 0 {
		return "-" + itoa(-v)
	}
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoa(v/10) + string(rune('0'+v%10))
}

func TestInitProducerIDBumpsEpoch(t *testing.T) {
	n := openNode(t, t.TempDir())
	c := n.coordinator()
	pid, epoch := initPID(t, c, "a")
	if epoch != 0 {
		t.Fatalf("first epoch %d", epoch)
	}
	pid2, epoch2 := initPID(t, c, "a")
	if pid2 != pid || epoch2 != 1 {
		t.Fatalf("second init: %d/%d, want %d/1", pid2, epoch2, pid)
	}
	other, _ := initPID(t, c, "b")
	if other == pid {
		t.Fatal("two transactional ids share a producer id")
	}
	_, _, err := c.InitProducerID(context.Background(), "a", 0, -1, -1)
	wantErr(t, "zero timeout", err, kerr.InvalidTransactionTimeout)
	_, _, err = c.InitProducerID(context.Background(), "a", 16*60*1000, -1, -1)
	wantErr(t, "timeout above the max", err, kerr.InvalidTransactionTimeout)

	// KIP-360: the current producer bumps; an older one is fenced.
	p3, e3, err := c.InitProducerID(context.Background(), "a", 60000, pid, 1)
	if err != nil || p3 != pid || e3 != 2 {
		t.Fatalf("KIP-360 bump: %d/%d %v", p3, e3, err)
	}
	_, _, err = c.InitProducerID(context.Background(), "a", 60000, pid, 0)
	wantErr(t, "KIP-360 with an old epoch", err, kerr.ProducerFenced)
	// A retry of the bump that happened answers the same.
	p4, e4, err := c.InitProducerID(context.Background(), "a", 60000, pid, 1)
	if err != nil || p4 != pid || e4 != 2 {
		t.Fatalf("KIP-360 retry: %d/%d %v", p4, e4, err)
	}
}

func TestCommitWritesMarkersV1(t *testing.T) {
	n := openNode(t, t.TempDir())
	c := n.coordinator()
	pid, epoch := initPID(t, c, "a")
	wantErr(t, "end with nothing open", endErr(c, "a", pid, epoch, true, false), kerr.InvalidTxnState)
	wantErr(t, "add", c.AddPartitions("a", pid, epoch, []log.TopicPartition{d0, d1}, false), nil)
	wantErr(t, "verify d0", c.Verify("a", pid, epoch, d0), nil)
	wantErr(t, "verify other", c.Verify("a", pid, epoch, log.TopicPartition{Topic: "x"}), kerr.InvalidTxnState)
	wantErr(t, "verify old epoch", c.Verify("a", pid, epoch-1, d0), kerr.InvalidProducerEpoch)
	wantErr(t, "add wrong epoch", c.AddPartitions("a", pid, epoch+1, []log.TopicPartition{d0}, false), kerr.ProducerFenced)
	wantErr(t, "add wrong pid", c.AddPartitions("a", pid+1, epoch, []log.TopicPartition{d0}, false), kerr.InvalidProducerIDMapping)
	wantErr(t, "add unknown id", c.AddPartitions("nope", pid, epoch, []log.TopicPartition{d0}, false), kerr.InvalidProducerIDMapping)

	res, err := c.EndTxn(context.Background(), "a", pid, epoch, true, false)
	if err != nil || res.ProducerID != pid || res.Epoch != epoch {
		t.Fatalf("commit: %+v %v", res, err)
	}
	d, _ := c.Describe("a")
	if d.State != CompleteCommit || len(d.Partitions) != 0 {
		t.Fatalf("after commit: %+v", d)
	}
	for _, tp := range []log.TopicPartition{d0, d1} {
		if got := markers(t, n, tp); len(got) != 1 || got[0] != "commit@0" {
			t.Fatalf("%s markers %v", tp, got)
		}
	}
	// Retries of the commit succeed; an abort of it is refused.
	wantErr(t, "commit retry", endErr(c, "a", pid, epoch, true, false), nil)
	wantErr(t, "abort after commit", endErr(c, "a", pid, epoch, false, false), kerr.InvalidTxnState)
}

func endErr(c *Coordinator, id string, pid int64, epoch int16, commit, tv2 bool) error {
	_, err := c.EndTxn(context.Background(), id, pid, epoch, commit, tv2)
	return err
}

func TestEndTxnV2BumpsEpoch(t *testing.T) {
	n := openNode(t, t.TempDir())
	c := n.coordinator()
	pid, epoch := initPID(t, c, "a")
	wantErr(t, "implicit add", c.AddPartitions("a", pid, epoch, []log.TopicPartition{d0}, true), nil)
	res, err := c.EndTxn(context.Background(), "a", pid, epoch, false, true)
	if err != nil || res.ProducerID != pid || res.Epoch != epoch+1 {
		t.Fatalf("abort v2: %+v %v", res, err)
	}
	if got := markers(t, n, d0); len(got) != 1 || got[0] != "abort@1" {
		t.Fatalf("markers %v, want the bumped epoch", got)
	}
	// The retry with the old epoch gets the same answer.
	res2, err := c.EndTxn(context.Background(), "a", pid, epoch, false, true)
	if err != nil || res2 != res {
		t.Fatalf("retry: %+v %v", res2, err)
	}
	wantErr(t, "commit with the old epoch", endErr(c, "a", pid, epoch, true, true), kerr.ProducerFenced)
	// v2 may abort with nothing added: the epoch moves all the same.
	res3, err := c.EndTxn(context.Background(), "a", pid, res.Epoch, false, true)
	if err != nil || res3.Epoch != res.Epoch+1 {
		t.Fatalf("empty abort: %+v %v", res3, err)
	}
	wantErr(t, "empty commit", endErr(c, "a", pid, res3.Epoch, true, true), kerr.InvalidTxnState)
}

func TestEpochExhaustionRotatesProducerID(t *testing.T) {
	n := openNode(t, t.TempDir())
	c := n.coordinator()
	pid, _ := initPID(t, c, "a")
	s, _ := c.shardFor("a")
	s.mu.txns["a"].epoch = 32766
	s.Unlock()
	pid2, epoch2 := initPID(t, c, "a")
	if pid2 == pid || epoch2 != 0 {
		t.Fatalf("after exhaustion: %d/%d, want a new producer id at 0", pid2, epoch2)
	}

	// v2: the end that exhausts the epoch hands out the next producer id.
	s, _ = c.shardFor("a")
	s.mu.txns["a"].epoch = 32766
	s.Unlock()
	wantErr(t, "add", c.AddPartitions("a", pid2, 32766, []log.TopicPartition{d0}, true), nil)
	res, err := c.EndTxn(context.Background(), "a", pid2, 32766, true, true)
	if err != nil || res.ProducerID == pid2 || res.Epoch != 0 {
		t.Fatalf("end at exhaustion: %+v %v", res, err)
	}
	if got := markers(t, n, d0); len(got) != 1 || got[0] != "commit@32767" {
		t.Fatalf("markers %v", got)
	}
	d, _ := c.Describe("a")
	if d.ProducerID != res.ProducerID || d.Epoch != 0 || d.State != CompleteCommit {
		t.Fatalf("after rotation: %+v", d)
	}
	// A retry from the old producer id answers the new one.
	res2, err := c.EndTxn(context.Background(), "a", pid2, 32766, true, true)
	if err != nil || res2 != res {
		t.Fatalf("retry after rotation: %+v %v", res2, err)
	}
}

func TestInitFencesOngoingTransaction(t *testing.T) {
	n := openNode(t, t.TempDir())
	c := n.coordinator()
	pid, epoch := initPID(t, c, "a")
	wantErr(t, "add", c.AddPartitions("a", pid, epoch, []log.TopicPartition{d0}, false), nil)
	_, _, err := c.InitProducerID(context.Background(), "a", 60000, -1, -1)
	wantErr(t, "init while ongoing", err, kerr.ConcurrentTransactions)
	waitState(t, c, "a", CompleteAbort)
	if got := markers(t, n, d0); len(got) != 1 || got[0] != "abort@1" {
		t.Fatalf("markers %v", got)
	}
	_, epoch2 := initPID(t, c, "a")
	if epoch2 != 2 {
		t.Fatalf("epoch after fence and init: %d", epoch2)
	}
	wantErr(t, "zombie end", endErr(c, "a", pid, epoch, true, false), kerr.ProducerFenced)
}

func waitState(t *testing.T, c *Coordinator, id string, want State) Description {
	t.Helper()
	for range 2000 {
		d, err := c.Describe(id)
		if err == nil && d.State == want {
			return d
		}
		c.wg.Wait()
	}
	d, err := c.Describe(id)
	t.Fatalf("%s is %+v %v, want %s", id, d, err, want)
	return d
}

func TestTimedOutTransactionIsAborted(t *testing.T) {
	n := openNode(t, t.TempDir())
	c := n.coordinator()
	pid, epoch := initPID(t, c, "a")
	wantErr(t, "add", c.AddPartitions("a", pid, epoch, []log.TopicPartition{d0}, false), nil)
	n.clock.Add(59_000)
	c.abortTimedOut()
	if d, _ := c.Describe("a"); d.State != Ongoing {
		t.Fatalf("aborted before its timeout: %+v", d)
	}
	n.clock.Add(2_000)
	c.abortTimedOut()
	d := waitState(t, c, "a", CompleteAbort)
	if d.Epoch != epoch+1 {
		t.Fatalf("timed out abort left epoch %d", d.Epoch)
	}
	wantErr(t, "the producer's commit", endErr(c, "a", pid, epoch, true, false), kerr.ProducerFenced)
}

func TestMarkersRetriedAndPrepareFinishedOnLoad(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c := n.coordinator()
	pid, epoch := initPID(t, c, "a")
	wantErr(t, "add", c.AddPartitions("a", pid, epoch, []log.TopicPartition{d0, d1}, false), nil)
	n.markers.fail.Store(true)
	wantErr(t, "commit", endErr(c, "a", pid, epoch, true, false), nil)
	if d, _ := c.Describe("a"); d.State != PrepareCommit {
		t.Fatalf("with markers failing: %+v", d)
	}
	wantErr(t, "add while preparing", c.AddPartitions("a", pid, epoch, []log.TopicPartition{d0}, false), kerr.ConcurrentTransactions)
	wantErr(t, "commit retry while preparing", endErr(c, "a", pid, epoch, true, false), kerr.ConcurrentTransactions)
	c.Close() // the coordinator stops with the markers unwritten
	if got := markers(t, n, d0); len(got) != 0 {
		t.Fatalf("markers %v", got)
	}
	n.markers.fail.Store(false)

	// A new coordinator of the partition (a restart, a new leader) loads
	// PrepareCommit and finishes it.
	c2 := New(Config{NumPartitions: 1, Markers: n.markers, Logger: discard(),
		AllocateProducerID: func(context.Context) (int64, error) { return n.nextPID.Add(1), nil }})
	c2.now = n.clock.Load
	defer c2.Close()
	p, _ := n.replicas.Partition(log.TopicPartition{Topic: TopicName})
	<-c2.Lead(p)
	waitState(t, c2, "a", CompleteCommit)
	for _, tp := range []log.TopicPartition{d0, d1} {
		if got := markers(t, n, tp); len(got) != 1 || got[0] != "commit@0" {
			t.Fatalf("%s markers %v", tp, got)
		}
	}
}

func TestStateSurvivesReload(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c := n.coordinator()
	pid, epoch := initPID(t, c, "a")
	wantErr(t, "add", c.AddPartitions("a", pid, epoch, []log.TopicPartition{d0, d1}, false), nil)
	initPID(t, c, "b")
	c.Close()
	n.close()

	n2 := openNode(t, dir)
	c2 := n2.coordinator()
	d, err := c2.Describe("a")
	if err != nil || d.State != Ongoing || d.ProducerID != pid || len(d.Partitions) != 2 || d.TimeoutMs != 60000 {
		t.Fatalf("reloaded a: %+v %v", d, err)
	}
	list, _ := c2.List(ListFilter{States: []State{Empty}})
	if len(list) != 1 || list[0].ID != "b" {
		t.Fatalf("list Empty: %+v", list)
	}
	_, err = c2.Describe("c")
	wantErr(t, "describe unknown", err, kerr.TransactionalIDNotFound)

	// Expiration removes idle ids with no transaction open, for good.
	n2.clock.Add(8 * 24 * 3600 * 1000)
	c2.expireIDs()
	if _, err := c2.Describe("b"); !errors.Is(err, kerr.TransactionalIDNotFound) {
		t.Fatalf("b not expired: %v", err)
	}
	if _, err := c2.Describe("a"); err != nil {
		t.Fatalf("a expired while open: %v", err)
	}
}

func TestNotCoordinator(t *testing.T) {
	n := openNode(t, t.TempDir())
	c := New(Config{NumPartitions: 1, Markers: n.markers, Logger: discard()})
	defer c.Close()
	_, _, err := c.InitProducerID(context.Background(), "a", 1000, -1, -1)
	wantErr(t, "init without the partition", err, kerr.NotCoordinator)
}
