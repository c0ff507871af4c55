package main

// Replication across real processes (issue 15): RF3 topics with
// min.insync.replicas=2, acks=all producers, and the leader killed with
// SIGKILL while they produce: every acknowledged record is there exactly
// once, at its offset, in order. A frozen follower (SIGSTOP) leaves the ISR
// and rejoins after SIGCONT; acks=all with the ISR below min.insync.replicas
// gets NOT_ENOUGH_REPLICAS.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/kzerotest/await"
)

// ackedAt is where the broker said a record went.
type ackedAt struct {
	partition int32
	offset    int64
	value     string
}

// partitionState is one partition's leader and ISR as node i's metadata says.
func partitionState(ctx context.Context, adm *kadm.Client, topic string, partition int32) (leader int32, isr []int32) {
	// A try has 2 s: kgo sends a metadata request to any broker it knows,
	// and one that is SIGSTOPped takes it and never answers; kgo would
	// wait out its request timeout and retries (20-45 s seen).
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return -1, nil
	}
	p, ok := md.Topics[topic].Partitions[partition]
	if !ok {
		return -1, nil
	}
	return p.Leader, p.ISR
}

// waitISR waits until the partition's ISR satisfies ok.
func waitISR(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, partition int32, what string, ok func(leader int32, isr []int32) bool) {
	t.Helper()
	var leader int32
	var isr []int32
	if !await.PollCtx(ctx, func() bool {
		leader, isr = partitionState(ctx, adm, topic, partition)
		return ok(leader, isr)
	}) {
		t.Fatalf("%s-%d: %s never happened (leader %d, ISR %v)", topic, partition, what, leader, isr)
	}
}

func TestReplicationProcesses(t *testing.T) {
	c := startProcCluster(t, 3, "--override", "replica.lag.time.max.ms=3000", "--override", "min.insync.replicas=2",
		"--override", "default.replication.factor=3")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	adm := c.admin()
	const topic, partitions = "acked", 3
	if res, err := adm.CreateTopic(ctx, partitions, 3, nil, topic); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}

	// Producers with acks=all (kgo idempotent, sarama) run while the leader
	// of partition 0 is killed and comes back.
	var mu sync.Mutex
	var acked []ackedAt
	record := func(p int32, off int64, v string) {
		mu.Lock()
		acked = append(acked, ackedAt{p, off, v})
		mu.Unlock()
	}
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	seeds := slices.Clone(c.addrs)
	prodCtx, stopProducing := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.ProducerLinger(0), kgo.MaxBufferedRecords(200))
		if err != nil {
			t.Error(err)
			return
		}
		defer cl.Close()
		for i := 0; prodCtx.Err() == nil; i++ {
			if i%50 == 49 {
				time.Sleep(20 * time.Millisecond) // pacing: a few thousand a second, enough to be mid-flight at the kill
			}
			v := "kgo-" + strconv.Itoa(i)
			cl.Produce(prodCtx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
				if err == nil {
					record(r.Partition, r.Offset, v)
				}
			})
		}
		cl.Flush(context.Background())
	})
	wg.Go(func() {
		cfg := sarama.NewConfig()
		cfg.Version = sarama.V3_0_0_0
		cfg.Producer.Idempotent = true // a retry after a lost answer is not a second copy
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		cfg.Producer.Return.Successes = true
		cfg.Producer.Retry.Max = 50
		cfg.Producer.Retry.Backoff = 200 * time.Millisecond
		cfg.Net.MaxOpenRequests = 1
		cfg.Metadata.RefreshFrequency = time.Second
		p, err := sarama.NewSyncProducer(seeds, cfg)
		if err != nil {
			t.Error(err)
			return
		}
		defer p.Close()
		for i := 0; prodCtx.Err() == nil; i++ {
			v := "sarama-" + strconv.Itoa(i)
			part, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(v)})
			if err == nil {
				record(part, off, v)
			}
		}
	})
	waitAcked := func(n int) {
		if !await.PollCtx(ctx, func() bool { return ackedCount() >= n }) {
			t.Fatalf("only %d records acknowledged", ackedCount())
		}
	}
	waitAcked(2000)
	leader, _ := partitionState(ctx, adm, topic, 0)
	if leader < 1 {
		t.Fatalf("partition 0 has no leader")
	}
	victim := int(leader - 1)
	before := ackedCount()
	c.kill(victim)
	t.Logf("killed node %d, the leader of %s-0, after %d acknowledged records", leader, topic, before)
	adm = c.admin()
	waitISR(ctx, t, adm, topic, 0, "a new leader", func(l int32, _ []int32) bool { return l > 0 && l != leader })
	waitAcked(before + 2000)
	c.start(victim)
	adm = c.admin()
	waitISR(ctx, t, adm, topic, 0, "the killed node rejoining the ISR", func(_ int32, isr []int32) bool {
		return slices.Contains(isr, leader)
	})
	waitAcked(ackedCount() + 1000)
	stopProducing()
	wg.Wait()

	// Everything acknowledged is there once, at its offset; per producer the
	// records are in order within a partition.
	mu.Lock()
	defer mu.Unlock()
	checkAcked(ctx, t, c, topic, partitions, acked)

	// A frozen follower leaves the ISR (replica.lag.time.max.ms, or the
	// controller fencing it), acks=all goes on with the two others, and it
	// rejoins after SIGCONT.
	leader, isr := partitionState(ctx, adm, topic, 1)
	frozen := int32(-1)
	for _, r := range isr {
		if r != leader {
			frozen = r
		}
	}
	p := c.procs[frozen-1]
	if err := p.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Logf("froze node %d, a follower of %s-1", frozen, topic)
	adm = kadm.NewClient(newSeedClient(t, c.addrs[leader-1]))
	waitISR(ctx, t, adm, topic, 1, "the frozen follower leaving the ISR", func(_ int32, isr []int32) bool {
		return len(isr) == 2 && !slices.Contains(isr, frozen)
	})
	pcl := newSeedClient(t, c.addrs[leader-1], kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := pcl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 1, Value: []byte("while frozen")}).FirstErr(); err != nil {
		t.Fatalf("acks=all with two of three in the ISR: %v", err)
	}

	// With min.insync.replicas=3 the same ISR is too small.
	if rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "min.insync.replicas", Value: kadm.StringPtr("3")}}, topic); err != nil || rs[0].Err != nil {
		t.Fatal(err, rs)
	}
	// A raw request: clients retry NOT_ENOUGH_REPLICAS until they time out.
	// The leadership may move meanwhile (a preferred leader rebalance, the
	// frozen node fenced): the request follows it.
	conn := kzerotest.Dial(t, c.addrs[leader-1])
	// The config change is on its way to the leader.
	var err error
	if !await.PollCtx(ctx, func() bool {
		err = produceAcksAll(conn, topic, 1, kzerotest.EncodeTimedBatch([]int64{time.Now().UnixMilli()}, [][]byte{[]byte("too few")}))
		if errors.Is(err, kerr.NotEnoughReplicas) {
			return true
		}
		if now, _ := partitionState(ctx, adm, topic, 1); errors.Is(err, kerr.NotLeaderForPartition) && now > 0 && now != leader {
			t.Logf("the leadership of %s-1 moved from node %d to node %d", topic, leader, now)
			leader, conn = now, kzerotest.Dial(t, c.addrs[now-1])
		}
		return false
	}) {
		t.Fatalf("acks=all with the ISR below min.insync.replicas: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "min.insync.replicas", Value: kadm.StringPtr("2")}}, topic); err != nil {
		t.Fatal(err)
	}
	if err := p.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitISR(ctx, t, adm, topic, 1, "the thawed follower rejoining the ISR", func(_ int32, isr []int32) bool {
		return slices.Contains(isr, frozen)
	})
}

// produceAcksAll produces one batch with acks=all and returns the
// partition's error.
func produceAcksAll(conn *kzerotest.Conn, topic string, partition int32, batch []byte) error {
	req := kzerotest.ProduceRequest(topic, partition, batch)
	req.Acks, req.TimeoutMillis = -1, 10000
	resp, err := conn.Request(req)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode)
}

// freshMetadata lets a test's admin client see leadership and ISR changes
// as they happen: kadm.Metadata answers from what kgo fetched within
// MetadataMinAge (RequestCachedMetadata; 5 s by default), so each awaited
// change cost up to 5 s.
var freshMetadata = kgo.MetadataMinAge(200 * time.Millisecond)

// newSeedClient is a kgo client seeded with one address.
func newSeedClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), freshMetadata}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// checkAcked reads every partition from the start and checks that each
// acknowledged record is at the offset it was acknowledged at, that no
// value appears twice, and that each producer's records are in order.
func checkAcked(ctx context.Context, t *testing.T, c *procCluster, topic string, partitions int, acked []ackedAt) {
	t.Helper()
	want := map[int32]int64{} // partition -> end offset to read to
	at := map[string]ackedAt{}
	for _, a := range acked {
		want[a.partition] = max(want[a.partition], a.offset+1)
		at[a.value] = a
	}
	var seeds []string
	for _, a := range c.addrs {
		if a != "" {
			seeds = append(seeds, a)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[string]int64{}
	next := map[int32]int64{}
	last := map[string]int{} // producer -> last sequence number seen, per partition key
	done := func() bool {
		for p, end := range want {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read back stopped at %v of %v", next, want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			if off, dup := seen[v]; dup {
				t.Errorf("%s at offsets %d and %d of partition %d", v, off, r.Offset, r.Partition)
			}
			seen[v] = r.Offset
			next[r.Partition] = r.Offset + 1
			var prod string
			var seq int
			if _, err := fmt.Sscanf(v, "kgo-%d", &seq); err == nil {
				prod = "kgo"
			} else if _, err := fmt.Sscanf(v, "sarama-%d", &seq); err == nil {
				prod = "sarama"
			}
			key := fmt.Sprintf("%s/%d", prod, r.Partition)
			if prev, ok := last[key]; ok && seq <= prev && prod == "kgo" {
				t.Errorf("%s after kgo-%d in partition %d: reordered", v, prev, r.Partition)
			}
			last[key] = seq
		})
	}
	lost := 0
	for v, a := range at {
		off, ok := seen[v]
		switch {
		case !ok:
			lost++
			if lost < 10 {
				t.Errorf("%s acknowledged at %d-%d is gone", v, a.partition, a.offset)
			}
		case off != a.offset:
			t.Errorf("%s acknowledged at offset %d of partition %d, found at %d", v, a.offset, a.partition, off)
		}
	}
	t.Logf("%d acknowledged records checked, %d lost, %d read", len(at), lost, len(seen))
}

// The group and transaction coordinators move with their partitions'
// leadership: a group keeps its committed offsets when the node
// coordinating it is killed, and a transaction begun before its
// coordinator died is committed by the new one, read_committed seeing it
// once.
func TestCoordinatorFailoverProcesses(t *testing.T) {
	c := startProcCluster(t, 3, "--override", "min.insync.replicas=2", "--override", "offsets.topic.num.partitions=3",
		"--override", "transaction.state.log.num.partitions=3")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	adm := c.admin()
	if res, err := adm.CreateTopic(ctx, 2, 3, nil, "work"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "work", Partition: 0, At: 42, LeaderEpoch: -1})
	offsets.Add(kadm.Offset{Topic: "work", Partition: 1, At: 7, LeaderEpoch: -1})
	// The group's coordinator may learn of the topic from the metadata
	// log a moment after the create answered; until then it answers
	// UNKNOWN_TOPIC_OR_PARTITION, retriable, as Kafka does (make test saw
	// it once).
	var commitErr error
	await.TrueCtx(t, ctx, func() bool {
		r, err := adm.CommitOffsets(ctx, "keeper", offsets)
		if commitErr = err; err == nil {
			commitErr = r.Error()
		}
		return commitErr == nil || !kerr.IsRetriable(commitErr)
	}, "the offset commit")
	if commitErr != nil {
		t.Fatalf("commit: %v", commitErr)
	}

	// A transaction: records written, not yet committed.
	seeds := slices.Clone(c.addrs)
	txcl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.TransactionalID("tx-failover"), kgo.DefaultProduceTopic("work"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer txcl.Close()
	if err := txcl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := txcl.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 2), Value: []byte("tx-" + strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// Kill the node coordinating the group, and the transaction's if other.
	gc := adm.FindGroupCoordinators(ctx, "keeper")["keeper"]
	if gc.Err != nil {
		t.Fatalf("find coordinator: %v", gc.Err)
	}
	groupNode := gc.NodeID
	tc := adm.FindTxnCoordinators(ctx, "tx-failover")["tx-failover"]
	if tc.Err != nil {
		t.Fatalf("find txn coordinator: %v", tc.Err)
	}
	txnNode := tc.NodeID
	c.kill(int(groupNode - 1))
	t.Logf("killed node %d (group coordinator; the transaction's is %d)", groupNode, txnNode)

	var fetched kadm.OffsetResponses
	if !await.PollCtx(ctx, func() bool {
		// A fresh client each time: a client keeps the coordinator it
		// found, and the dead one stays named until it is fenced.
		fetched, err = c.admin().FetchOffsets(ctx, "keeper")
		return err == nil && fetched.Error() == nil
	}) {
		t.Fatalf("offsets after failover: %v %v", err, fetched.Error())
	}
	if o, _ := fetched.Lookup("work", 0); o.At != 42 {
		t.Fatalf("work-0 committed offset %d after failover, want 42", o.At)
	}
	if o, _ := fetched.Lookup("work", 1); o.At != 7 {
		t.Fatalf("work-1 committed offset %d after failover, want 7", o.At)
	}
	if err := txcl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit after failover: %v", err)
	}

	// read_committed sees the ten records once.
	var live []string
	for _, a := range c.addrs {
		if a != "" {
			live = append(live, a)
		}
	}
	rc, err := kgo.NewClient(kgo.SeedBrokers(live...), kgo.ConsumeTopics("work"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	seen := map[string]int{}
	for len(seen) < 10 {
		fs := rc.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_committed saw %v", seen)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
	}
	for v, n := range seen {
		if n != 1 {
			t.Errorf("%s seen %d times", v, n)
		}
	}
}

// A leader that took writes no follower has (its followers frozen, the ISR
// shrunk to it) and then died diverges from the replica elected in its
// place (unclean election): when it comes back it truncates the tail the
// others never had (OffsetForLeaderEpoch) and copies the new leader's log,
// so once it leads again it serves exactly the new history.
func TestDivergedFollowerTruncates(t *testing.T) {
	// Five voters: with two followers frozen and the leader dead, three
	// are down only for a moment, and the quorum of the other two and one
	// thawed goes on.
	c := startProcCluster(t, 5, "--override", "replica.lag.time.max.ms=2000")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "div", -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{1, 2, 3}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	for k, v := range map[string]string{"min.insync.replicas": "1", "unclean.leader.election.enable": "true"} {
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, cfg)
	}
	req.Topics = append(req.Topics, rt)
	adm := c.admin()
	resp, err := req.RequestWith(ctx, newSeedClient(t, c.addrs[3]))
	if err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}
	produce := func(addr, prefix string, n int) {
		t.Helper()
		cl := newSeedClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("div"))
		for i := range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", prefix, i)}).FirstErr(); err != nil {
				t.Fatalf("produce %s-%d: %v", prefix, i, err)
			}
		}
	}
	waitISR(ctx, t, adm, "div", 0, "broker 1 leading", func(l int32, isr []int32) bool { return l == 1 && len(isr) == 3 })
	produce(c.addrs[0], "committed", 100)
	waitISR(ctx, t, adm, "div", 0, "all three in sync", func(_ int32, isr []int32) bool { return len(isr) == 3 })

	// Followers 2 and 3 freeze; the ISR shrinks to the leader, which takes
	// 50 records alone.
	for _, i := range []int{1, 2} {
		if err := c.procs[i].Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	waitISR(ctx, t, kadm.NewClient(newSeedClient(t, c.addrs[3])), "div", 0, "the ISR shrinking to the leader",
		func(l int32, isr []int32) bool { return l == 1 && slices.Equal(isr, []int32{1}) })
	produce(c.addrs[0], "lost", 50)

	// The leader dies; the followers thaw; one of them is elected
	// uncleanly and takes 30 new records at the offsets the lost ones had.
	c.kill(0)
	for _, i := range []int{1, 2} {
		if err := c.procs[i].Cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	adm = kadm.NewClient(newSeedClient(t, c.addrs[3]))
	var newLeader int32
	waitISR(ctx, t, adm, "div", 0, "an unclean election", func(l int32, _ []int32) bool {
		newLeader = l
		return l == 2 || l == 3
	})
	produce(c.addrs[newLeader-1], "new", 30)

	// The old leader comes back, truncates, catches up and rejoins the
	// ISR; a preferred election makes it the leader again.
	c.start(0)
	waitISR(ctx, t, adm, "div", 0, "the old leader rejoining the ISR", func(_ int32, isr []int32) bool {
		return slices.Contains(isr, 1)
	})
	await.TrueCtx(t, ctx, func() bool {
		if _, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"div": {0: struct{}{}}}); err != nil {
			t.Fatal(err)
		}
		l, _ := partitionState(ctx, adm, "div", 0)
		return l == 1
	}, "broker 1 leading div-0 again")
	cl := newSeedClient(t, c.addrs[0], kgo.ConsumeTopics("div"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 130 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of 130: %v", len(got), got)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != int64(len(got)) {
				t.Fatalf("record %q at offset %d, want %d", r.Value, r.Offset, len(got))
			}
			got = append(got, string(r.Value))
		})
	}
	for i, v := range got {
		want := fmt.Sprintf("committed-%d", i)
		if i >= 100 {
			want = fmt.Sprintf("new-%d", i-100)
		}
		if v != want {
			t.Fatalf("offset %d holds %q, want %q", i, v, want)
		}
	}
}
