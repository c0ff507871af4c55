package node

// A replica moving between log dirs (AlterReplicaLogDirs) while a
// producer writes to it and a consumer reads it, on one node with two
// log dirs.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest/await"
	"kzero/log"
)

// describedReplica is one partition of a DescribeLogDirs answer.
type describedReplica struct {
	dir      string
	size     int64
	lag      int64
	isFuture bool
}

// describeLogDirs asks broker 1 where topic's partition 0 is.
func describeLogDirs(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) []describedReplica {
	return describeLogDirsOn(t, ctx, cl, 1, topic)
}

// describeLogDirsOn asks broker where topic's partition 0 is.
func describeLogDirsOn(t *testing.T, ctx context.Context, cl *kgo.Client, broker int, topic string) []describedReplica {
	t.Helper()
	req := kmsg.NewPtrDescribeLogDirsRequest()
	req.Version = 4
	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = append(req.Topics, rt)
	kresp, err := cl.Broker(broker).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.DescribeLogDirsResponse)
	var out []describedReplica
	for _, d := range resp.Dirs {
		if d.ErrorCode != 0 {
			t.Fatalf("dir %s: %v", d.Dir, kerr.ErrorForCode(d.ErrorCode))
		}
		for _, dt := range d.Topics {
			for _, p := range dt.Partitions {
				if dt.Topic == topic && p.Partition == 0 {
					out = append(out, describedReplica{dir: d.Dir, size: p.Size, lag: p.OffsetLag, isFuture: p.IsFuture})
				}
			}
		}
	}
	return out
}

// awaitMoved polls broker's DescribeLogDirs until topic's partition 0 has
// one replica there, in dir and no longer a future log: the move finished.
func awaitMoved(t *testing.T, ctx context.Context, cl *kgo.Client, broker int, topic, dir string) {
	t.Helper()
	var got []describedReplica
	if !await.PollCtx(ctx, func() bool {
		got = describeLogDirsOn(t, ctx, cl, broker, topic)
		return len(got) == 1 && got[0].dir == dir && !got[0].isFuture
	}) {
		t.Fatalf("the move to %s on node %d never finished: %+v", dir, broker, got)
	}
}

// ackLog is what a test's producer sent, by sequence number, and the
// offset each record was acknowledged at. One goroutine produces;
// acknowledgements arrive on the client's.
type ackLog struct {
	pcl  *kgo.Client
	pad  string
	next int64 // the next sequence number; the producing goroutine's

	mu    sync.Mutex
	acked map[int64]int64 // sequence number -> offset
}

// newAckLog produces through pcl records of their sequence number and pad
// dots.
func newAckLog(pcl *kgo.Client, pad int) *ackLog {
	return &ackLog{pcl: pcl, pad: strings.Repeat(".", pad), acked: map[int64]int64{}}
}

// produce sends the next record.
func (a *ackLog) produce(t *testing.T, ctx context.Context) {
	seq := a.next
	a.next++
	a.pcl.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprint(seq) + a.pad)}, func(r *kgo.Record, err error) {
		if err != nil {
			t.Errorf("produce %d: %v", seq, err)
			return
		}
		a.mu.Lock()
		a.acked[seq] = r.Offset
		a.mu.Unlock()
	})
}

// count is how many records were acknowledged so far.
func (a *ackLog) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.acked)
}

// flush flushes the producer and returns the offset each record sent was
// acknowledged at, by sequence number; nil when the test failed meanwhile
// (a produce error). The producing goroutine must have ended.
func (a *ackLog) flush(t *testing.T, ctx context.Context) []int64 {
	t.Helper()
	if err := a.pcl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return nil
	}
	final := make([]int64, a.next)
	for seq := range a.next {
		off, ok := a.acked[seq]
		if !ok {
			t.Fatalf("record %d never acknowledged", seq)
		}
		final[seq] = off
	}
	return final
}

// awaitLeading waits until n leads tp.
func awaitLeading(t *testing.T, ctx context.Context, n *Node, tp log.TopicPartition) {
	t.Helper()
	await.TrueCtx(t, ctx, func() bool {
		p, ok := n.Replicas().Partition(tp)
		return ok && p.IsLeader()
	}, fmt.Sprintf("node %d to lead %s", n.ID(), tp))
}

// alterLogDir asks broker 1 to move topic's partition 0 to dir and
// returns the partition's error code.
func alterLogDir(t *testing.T, ctx context.Context, cl *kgo.Client, topic, dir string) int16 {
	return alterLogDirOn(t, ctx, cl, 1, topic, dir)
}

// alterLogDirOn asks broker to move its replica of topic's partition 0 to
// dir and returns the partition's error code.
func alterLogDirOn(t *testing.T, ctx context.Context, cl *kgo.Client, broker int, topic, dir string) int16 {
	t.Helper()
	req := kmsg.NewPtrAlterReplicaLogDirsRequest()
	req.Version = 2
	rd := kmsg.NewAlterReplicaLogDirsRequestDir()
	rd.Dir = dir
	rt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	rd.Topics = append(rd.Topics, rt)
	req.Dirs = append(req.Dirs, rd)
	// To the broker itself: the client would answer for a partition its
	// metadata does not know without asking.
	kresp, err := cl.Broker(broker).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.AlterReplicaLogDirsResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Topic != topic {
		t.Fatalf("answer %+v", resp.Topics)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// consumed is a record read back: its offset and the producer's sequence
// number in its value.
type consumed struct{ offset, seq int64 }

// readAll consumes topic's partition 0 from the start until it has n
// records.
func readAll(t *testing.T, ctx context.Context, c *testCluster, topic string, n int) []consumed {
	t.Helper()
	cl, _ := c.client(0, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	var out []consumed
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records of %d", len(out), n)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			seq, err := strconv.ParseInt(strings.TrimRight(string(r.Value), "."), 10, 64)
			if err != nil {
				t.Fatalf("value %q", r.Value)
			}
			out = append(out, consumed{r.Offset, seq})
		})
	}
	return out
}

// checkRead checks what a consumer read against what the producer was
// told: every record once, in order, at its acknowledged offset.
func checkRead(t *testing.T, got []consumed, acked []int64) {
	t.Helper()
	if len(got) != len(acked) {
		t.Fatalf("read %d records, %d acknowledged", len(got), len(acked))
	}
	for i, r := range got {
		if r.seq != int64(i) || r.offset != acked[i] {
			t.Fatalf("record %d: sequence %d at offset %d, acknowledged at %d", i, r.seq, r.offset, acked[i])
		}
	}
}

func TestAlterReplicaLogDirsUnderLoad(t *testing.T) {
	second := t.TempDir()
	c := startClusterWith(t, 1, func(cfg *Config) {
		cfg.Logs.Dirs = append(cfg.Logs.Dirs, second)
		if os.Getenv("KZ_DEBUG") != "" {
			cfg.Logger = slog.Default()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic = "moving"
	cl, adm := c.client(0)
	segment := "1048576" // Kafka's least
	if res, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"segment.bytes": &segment}, topic); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	tp := log.TopicPartition{Topic: topic, Partition: 0}
	awaitLeading(t, ctx, c.nodes[0], tp)
	dirs := c.nodes[0].Logs().Dirs()
	first, _ := c.nodes[0].Logs().DirOf(tp)
	other := dirs[0]
	if other == first {
		other = dirs[1]
	}

	// The producer writes acks=1, many records in flight in one request
	// at a time (so in order), and keeps the offset each was
	// acknowledged at.
	pcl, _ := c.client(0, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.MaxProduceRequestsInflightPerBroker(1), kgo.ProducerBatchMaxBytes(64<<10))
	sent := newAckLog(pcl, 1000)
	produce := func(n int) {
		for range n {
			sent.produce(t, ctx)
		}
	}
	produce(4000) // ~4 MB over several segments before the first move
	if err := pcl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			produce(100)
			if t.Failed() {
				return
			}
		}
	})
	// A consumer reads along while the replica moves.
	var during []consumed
	readDone := make(chan struct{})
	wg.Go(func() {
		defer close(readDone)
		during = readAll(t, ctx, c, topic, 20000)
	})

	for i, to := range []string{other, first, other} {
		before := sent.count()
		if code := alterLogDir(t, ctx, cl, topic, to); code != 0 {
			t.Fatalf("move %d: %v", i, kerr.ErrorForCode(code))
		}
		awaitMoved(t, ctx, cl, 1, topic, to)
		t.Logf("move %d to %s: %d records acknowledged during it", i, to, sent.count()-before)
	}
	<-readDone
	close(stop)
	wg.Wait()
	final := sent.flush(t, ctx)
	if final == nil {
		return
	}
	checkRead(t, during, final[:len(during)])
	checkRead(t, readAll(t, ctx, c, topic, len(final)), final)
	got := describeLogDirs(t, ctx, cl, topic)
	if len(got) != 1 || got[0].dir != other || got[0].size == 0 {
		t.Fatalf("after the moves: %+v", got)
	}

	// A restart finds the partition in its new dir, with every record.
	c.stop(0)
	c.restart(0)
	if d, _ := c.nodes[0].Logs().DirOf(tp); d != other {
		t.Fatalf("after restart the log is in %s", d)
	}
	checkRead(t, readAll(t, ctx, c, topic, len(final)), final)
}

func TestAlterReplicaLogDirsErrors(t *testing.T) {
	second := t.TempDir()
	c := startClusterWith(t, 1, func(cfg *Config) { cfg.Logs.Dirs = append(cfg.Logs.Dirs, second) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, adm := c.client(0)
	if res, err := adm.CreateTopic(ctx, 1, 1, nil, "here"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	tp := log.TopicPartition{Topic: "here", Partition: 0}
	awaitLeading(t, ctx, c.nodes[0], tp)
	if code := alterLogDir(t, ctx, cl, "here", "/no/such/dir"); code != kerr.LogDirNotFound.Code {
		t.Fatalf("unknown dir: %v", kerr.ErrorForCode(code))
	}
	// A partition not here: the dir is remembered for when it comes.
	if code := alterLogDir(t, ctx, cl, "later", second); code != kerr.ReplicaNotAvailable.Code {
		t.Fatalf("unknown partition: %v", kerr.ErrorForCode(code))
	}
	// Where it is already: nothing to do.
	cur, _ := c.nodes[0].Logs().DirOf(tp)
	if code := alterLogDir(t, ctx, cl, "here", cur); code != 0 {
		t.Fatalf("same dir: %v", kerr.ErrorForCode(code))
	}
	if res, err := adm.CreateTopic(ctx, 1, 1, nil, "later"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	var d string
	await.TrueCtx(t, ctx, func() bool {
		var ok bool
		d, ok = c.nodes[0].Logs().DirOf(log.TopicPartition{Topic: "later"})
		return ok
	}, "a replica of later")
	if d != second {
		t.Fatalf("later created in %s, not the dir asked for", d)
	}

	// A future log shows in DescribeLogDirs with IsFuture and its lag.
	pcl, _ := c.client(0, kgo.DefaultProduceTopic("here"), kgo.ProducerLinger(0))
	for i := range 10 {
		if err := pcl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	other := second
	if cur == second {
		other = c.nodes[0].Logs().Dirs()[0]
	}
	l, _ := c.nodes[0].Logs().Get(tp)
	if _, err := c.nodes[0].Logs().CreateFuture(tp, other, l.Config()); err != nil {
		t.Fatal(err)
	}
	got := describeLogDirs(t, ctx, cl, "here")
	slices.SortFunc(got, func(a, b describedReplica) int { return strings.Compare(a.dir, b.dir) })
	var future, current *describedReplica
	for i := range got {
		if got[i].isFuture {
			future = &got[i]
		} else {
			current = &got[i]
		}
	}
	if len(got) != 2 || future == nil || current == nil || future.dir != other || current.dir != cur || future.lag != 10 || current.size == 0 {
		t.Fatalf("described %+v", got)
	}
	if err := c.nodes[0].Logs().DeleteFuture(tp); err != nil {
		t.Fatal(err)
	}
}

// TestAlterReplicaLogDirsFollowerAndLeader moves a follower's replica and
// then the leader's between their log dirs while an acks=all producer
// writes: the follower's fetcher appends through the move, the ISR stays
// whole, and every acknowledged record is read back once, in order.
func TestAlterReplicaLogDirsFollowerAndLeader(t *testing.T) {
	c := startClusterWith(t, 3, func(cfg *Config) {
		cfg.Logs.Dirs = append(cfg.Logs.Dirs, cfg.Logs.Dirs[0]+"-b")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic = "spread-moving"
	cl, adm := c.client(0)
	if res, err := adm.CreateTopic(ctx, 1, 3, nil, topic); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	tp := log.TopicPartition{Topic: topic, Partition: 0}
	leader := -1
	await.TrueCtx(t, ctx, func() bool {
		for i, n := range c.nodes {
			if p, ok := n.Replicas().Partition(tp); ok && p.IsLeader() && len(p.ISR()) == 3 {
				leader = i
			}
		}
		return leader >= 0
	}, "a leader with a whole ISR")
	follower := (leader + 1) % 3

	pcl, _ := c.client(0, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0))
	sent := newAckLog(pcl, 200)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			sent.produce(t, ctx)
		}
	})
	await.TrueCtx(t, ctx, func() bool { return sent.count() >= 2000 }, "2000 records acknowledged")
	for _, i := range []int{follower, leader} {
		n := c.nodes[i]
		cur, _ := n.Logs().DirOf(tp)
		to := n.Logs().Dirs()[0]
		if to == cur {
			to = n.Logs().Dirs()[1]
		}
		before := sent.count()
		if code := alterLogDirOn(t, ctx, cl, i+1, topic, to); code != 0 {
			t.Fatalf("move on node %d: %v", i+1, kerr.ErrorForCode(code))
		}
		awaitMoved(t, ctx, cl, i+1, topic, to)
		t.Logf("node %d moved its replica: %d records acknowledged meanwhile", i+1, sent.count()-before)
	}
	close(stop)
	wg.Wait()
	final := sent.flush(t, ctx)
	if final == nil {
		return
	}
	checkRead(t, readAll(t, ctx, c, topic, len(final)), final)
	// Every replica holds the same log, and the ISR is whole.
	await.TrueCtx(t, ctx, func() bool {
		p, _ := c.nodes[leader].Replicas().Partition(tp)
		same := len(p.ISR()) == 3
		for _, n := range c.nodes {
			q, _ := n.Replicas().Partition(tp)
			same = same && q.LogEndOffset() == p.LogEndOffset()
		}
		return same
	}, "every replica the same log, the ISR whole")
}
