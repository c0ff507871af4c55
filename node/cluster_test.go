package node

// Several nodes in one process: a metadata quorum of three voters over
// loopback, every broker in every node's metadata, replicas placed on
// distinct brokers, metadata changes going on after the quorum leader
// stops, and a restarted voter catching up.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/kzerotest/await"
	"kzero/log"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// freeAddrs returns n loopback addresses nothing listens on now, for
// controller listeners. They are below the ephemeral port range: a port
// from it could meanwhile become the local end of one of the test's own
// outbound connections, and binding it would fail.
func freeAddrs(t testing.TB, n int) []string {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				low = v
			}
		}
	}
	if low < 12000 {
		t.Fatalf("ephemeral ports start at %d: no room below them", low)
	}
	var out []string
	for tries := 0; len(out) < n && tries < 1000; tries++ {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(10000+rand.IntN(low-10000)))
		if slices.Contains(out, addr) {
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		out = append(out, addr)
	}
	if len(out) < n {
		t.Fatalf("found %d free ports of %d", len(out), n)
	}
	return out
}

// testCluster is n combined nodes (broker and controller) in this process.
type testCluster struct {
	t      *testing.T
	dirs   []string
	voters map[int32]string
	nodes  []*Node           // nil where stopped
	mutate func(cfg *Config) // changes every node's config; nil: none
	images imageEvents
}

// imageEvents wakes the waits on the cluster's metadata: each image a
// node publishes closes ch and replaces it.
type imageEvents struct {
	sync.Mutex
	ch      chan struct{}
	watched map[*Node]bool
}

// imageChange returns a channel closed when a running node next publishes
// an image, subscribing first to the nodes not yet watched (started or
// restarted since).
func (c *testCluster) imageChange() <-chan struct{} {
	c.images.Lock()
	if c.images.ch == nil {
		c.images.ch, c.images.watched = make(chan struct{}), map[*Node]bool{}
	}
	var fresh []*Node
	for _, n := range c.nodes {
		if n != nil && !c.images.watched[n] {
			c.images.watched[n] = true
			fresh = append(fresh, n)
		}
	}
	ch := c.images.ch
	c.images.Unlock()
	for _, n := range fresh {
		n.Controller().Subscribe(func(_, _ *metadata.Image) {
			c.images.Lock()
			close(c.images.ch)
			c.images.ch = make(chan struct{})
			c.images.Unlock()
		})
	}
	return ch
}

// awaitImages waits until cond, a condition on the nodes' metadata
// images, holds: it checks again on every image a node publishes. It
// reports whether cond held before ctx ended.
func (c *testCluster) awaitImages(ctx context.Context, cond func() bool) bool {
	for {
		ch := c.imageChange()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return cond()
		}
	}
}

// config is node i's configuration.
func (c *testCluster) config(i int) Config {
	cfg := nodeConfig(int32(i+1), c.dirs[i], c.voters)
	if c.mutate != nil {
		c.mutate(&cfg)
	}
	return cfg
}

func nodeConfig(id int32, dir string, voters map[int32]string) Config {
	logs := log.DefaultManagerConfig(dir)
	return Config{
		NodeID:         id,
		Rack:           fmt.Sprintf("rack-%d", id%2),
		ListenAddr:     "127.0.0.1:0",
		Voters:         voters,
		ControllerAddr: voters[id],
		Logs:           logs,
		NumPartitions:  1,
		RackAwareReads: true, // only consumers with a client.rack see it
		Logger:         quiet,
		// Snapshots often and no log kept behind them: a voter that was
		// down catches up by snapshot.
		MetadataSnapshotEvery: 8,
		MetadataSnapshotKeep:  -1,
		// The last nodes of a test's cleanup have no quorum left.
		ControlledShutdownTimeout: 5 * time.Second,
	}
}

func startCluster(t *testing.T, n int) *testCluster {
	t.Helper()
	return startClusterWith(t, n, nil)
}

// startClusterWith is startCluster with mutate applied to every node's
// configuration.
func startClusterWith(t *testing.T, n int, mutate func(*Config)) *testCluster {
	t.Helper()
	addrs := freeAddrs(t, n)
	c := &testCluster{t: t, voters: map[int32]string{}, nodes: make([]*Node, n), mutate: mutate}
	for i := range n {
		c.voters[int32(i+1)] = addrs[i]
		c.dirs = append(c.dirs, t.TempDir())
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { c.nodes[i], errs[i] = Start(c.config(i)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(i)
		}
	})
	return c
}

func (c *testCluster) stop(i int) {
	if c.nodes[i] == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.nodes[i].Stop(ctx); err != nil {
		c.t.Errorf("stop node %d: %v", i+1, err)
	}
	c.nodes[i] = nil
}

func (c *testCluster) restart(i int) {
	n, err := Start(c.config(i))
	if err != nil {
		c.t.Fatalf("restart node %d: %v", i+1, err)
	}
	c.nodes[i] = n
}

// leader is the index of the node the quorum follows, once all running
// nodes agree on one.
func (c *testCluster) leader(ctx context.Context) int {
	lead := int32(-1)
	if !c.awaitImages(ctx, func() bool {
		lead = -1
		agree := true
		for _, n := range c.nodes {
			if n == nil {
				continue
			}
			id := n.Controller().Image().ControllerID()
			if lead == -1 {
				lead = id
			}
			agree = agree && id == lead && id >= 0
		}
		return agree && lead >= 1 && c.nodes[lead-1] != nil
	}) {
		c.t.Fatal("no quorum leader all nodes agree on")
	}
	return int(lead - 1)
}

func (c *testCluster) client(i int, opts ...kgo.Opt) (*kgo.Client, *kadm.Client) {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.nodes[i].Addr().String())}, opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
}

// waitTopic waits until node i's metadata has topic.
func (c *testCluster) waitTopic(ctx context.Context, i int, topic string) {
	if !c.awaitImages(ctx, func() bool { return c.nodes[i].Controller().Image().Topic(topic) != nil }) {
		c.t.Fatalf("node %d never learned of topic %s", i+1, topic)
	}
}

func TestThreeNodeQuorum(t *testing.T) {
	c := startCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// Every node knows the three brokers and the same cluster id.
	cluster := c.nodes[0].Controller().Image().ClusterID()
	for i, n := range c.nodes {
		img := n.Controller().Image()
		if img.ClusterID() != cluster || cluster == "" {
			t.Fatalf("node %d: cluster %q, node 1: %q", i+1, img.ClusterID(), cluster)
		}
		for id := int32(1); id <= 3; id++ {
			if _, ok := img.Broker(id); !ok {
				t.Fatalf("node %d does not know broker %d", i+1, id)
			}
		}
		if mp, ok, err := log.ReadMetaProperties(c.dirs[i]); err != nil || !ok || mp.ClusterID != cluster || mp.NodeID != int32(i+1) {
			t.Fatalf("node %d meta.properties %+v %v %v", i+1, mp, ok, err)
		}
	}

	// A topic created through any node: replicas on three distinct brokers,
	// leaders spread, every node learns it.
	_, adm := c.client(1)
	res, err := adm.CreateTopic(ctx, 6, 3, nil, "spread")
	if err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	md, err := adm.Metadata(ctx, "spread")
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 3 {
		t.Fatalf("metadata lists %d brokers", len(md.Brokers))
	}
	leaders := map[int32]int{}
	for _, p := range md.Topics["spread"].Partitions {
		rs := slices.Clone(p.Replicas)
		slices.Sort(rs)
		if !slices.Equal(rs, []int32{1, 2, 3}) {
			t.Fatalf("partition %d replicas %v", p.Partition, p.Replicas)
		}
		leaders[p.Leader]++
		// A new partition's ISR is every live replica.
		isr := slices.Clone(p.ISR)
		slices.Sort(isr)
		if !slices.Equal(isr, []int32{1, 2, 3}) {
			t.Fatalf("partition %d ISR %v, leader %d", p.Partition, p.ISR, p.Leader)
		}
	}
	if len(leaders) != 3 {
		t.Fatalf("leaders %v: not spread over the three brokers", leaders)
	}
	for i := range c.nodes {
		c.waitTopic(ctx, i, "spread")
	}

	// Records go to each partition's leader and come back.
	cl, _ := c.client(0, kgo.DefaultProduceTopic("spread"), kgo.ConsumeTopics("spread"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	const records = 60
	for i := range records {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	for got < records {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", got, records, err)
		}
		got += fs.NumRecords()
	}

	// The followers copied what the leaders served them (a read may end
	// inside a batch, which the fetcher leaves for the next fetch).
	var read, fetched int64
	if !await.PollCtx(ctx, func() bool {
		read, fetched = 0, 0
		for _, n := range c.nodes {
			s := n.Replicas().Stats()
			read, fetched = read+s.FollowerReadBytes, fetched+s.FetchedBytes
		}
		return fetched > 0 && fetched <= read
	}) {
		t.Fatalf("followers read %d bytes from leaders and appended %d", read, fetched)
	}

	// DescribeQuorum, sent where Metadata says the controller is: the
	// leader, the three voters and how far each got; a node that is not
	// the leader answers NOT_LEADER_OR_FOLLOWER naming the leader.
	lead := c.leader(ctx)
	qcl, _ := c.client(0)
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic, rt.Partitions = "__cluster_metadata", []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	var voters []kmsg.DescribeQuorumResponseTopicPartitionReplicaState
	if !await.PollCtx(ctx, func() bool {
		resp, err := req.RequestWith(ctx, qcl)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.LeaderID != int32(lead+1) || len(p.CurrentVoters) != 3 || p.HighWatermark <= 0 || len(resp.Nodes) != 3 {
			t.Fatalf("DescribeQuorum: %+v (leader %d)", resp, lead+1)
		}
		voters = p.CurrentVoters
		caughtUp := 0
		for _, v := range p.CurrentVoters {
			if v.LogEndOffset == p.HighWatermark && v.LastCaughtUpTimestamp > 0 {
				caughtUp++
			}
		}
		return caughtUp == 3
	}) {
		t.Fatalf("voters never all caught up: %+v", voters)
	}
	// Another node answers as the leader would, from the view the leader
	// relays (a Kafka broker forwards DescribeQuorum to the controller).
	follower := (lead + 1) % 3
	var p kmsg.DescribeQuorumResponseTopicPartition
	if !await.PollCtx(ctx, func() bool {
		resp, err := req.RequestWith(ctx, qcl.Broker(follower+1))
		if err != nil {
			t.Fatal(err)
		}
		p = resp.Topics[0].Partitions[0]
		if p.ErrorCode == 0 && p.LeaderID == int32(lead+1) && len(p.CurrentVoters) == 3 && len(p.Observers) == 0 {
			return true
		}
		if p.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Fatalf("DescribeQuorum on follower %d: %+v", follower+1, p)
		}
		return false
	}) {
		t.Fatalf("DescribeQuorum on follower %d: %+v", follower+1, p)
	}

	// The quorum leader stops: the two others elect a new one and
	// metadata changes go on.
	old := c.leader(ctx)
	c.stop(old) // a controlled shutdown first
	other := (old + 1) % 3
	// Its leaderships moved to the followers in sync before it stopped.
	img := c.nodes[other].Controller().Image()
	if b, _ := img.Broker(int32(old + 1)); b == nil || !b.InControlledShutdown && !b.Fenced {
		t.Fatalf("stopped broker %d: %+v", old+1, b)
	}
	for _, p := range img.Topic("spread").Partitions {
		if p.Leader == int32(old+1) || p.Leader < 0 {
			t.Fatalf("partition %d led by %d after broker %d stopped", p.Partition, p.Leader, old+1)
		}
	}
	// Every record is still there, read from the new leaders.
	rcl, _ := c.client(other, kgo.ConsumeTopics("spread"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < records; {
		fs := rcl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d after the leader stopped: %v", got, records, err)
		}
		got += fs.NumRecords()
	}
	_, adm = c.client(other)
	res, err = adm.CreateTopic(ctx, 2, 2, nil, "after")
	if err != nil || res.Err != nil {
		t.Fatalf("create after the leader stopped: %v %v", err, res.Err)
	}
	if l := c.leader(ctx); l == old {
		t.Fatalf("leader is still the stopped node %d", old+1)
	}

	// More changes than a snapshot's worth, while it is down.
	for i := range 10 {
		if res, err := adm.CreateTopic(ctx, 1, 2, nil, fmt.Sprintf("while-down-%d", i)); err != nil || res.Err != nil {
			t.Fatalf("create while down: %v %v", err, res.Err)
		}
	}

	// It comes back and catches up, by snapshot: the leader compacted
	// the entries it missed.
	c.restart(old)
	c.waitTopic(ctx, old, "after")
	c.waitTopic(ctx, old, "while-down-9")
	if n := c.nodes[old].Controller().SnapshotsReceived(); n == 0 {
		t.Fatal("the restarted voter caught up without a snapshot")
	}
	// Back and unfenced, it follows its partitions and rejoins their ISRs.
	c.waitImage(ctx, other, fmt.Sprintf("broker %d back in every ISR of spread", old+1), func(img *metadata.Image) bool {
		for _, p := range img.Topic("spread").Partitions {
			if !slices.Contains(p.ISR, int32(old+1)) {
				return false
			}
		}
		b, _ := img.Broker(int32(old + 1))
		return b != nil && !b.Fenced && !b.InControlledShutdown
	})
	// And it goes on following.
	if res, err := adm.CreateTopic(ctx, 1, 3, nil, "last"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	c.waitTopic(ctx, old, "last")
}
