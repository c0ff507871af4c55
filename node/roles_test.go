package node

// Split process roles in one process: three controller-only voters and two
// broker-only nodes that follow the metadata log as raft learners.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/coord/metadata"
	"kzero/kzerotest/await"
)

// splitCluster is nodes 1-3 controller-only, 4-5 broker-only; nodes[i] is
// node i+1, nil where stopped.
type splitCluster struct {
	testCluster
	cfgs []Config
}

func startSplit(t *testing.T) *splitCluster {
	t.Helper()
	addrs := freeAddrs(t, 3)
	voters := map[int32]string{1: addrs[0], 2: addrs[1], 3: addrs[2]}
	c := &splitCluster{testCluster: testCluster{t: t, voters: voters, nodes: make([]*Node, 5)}}
	for i := range 5 {
		id := int32(i + 1)
		cfg := nodeConfig(id, t.TempDir(), voters)
		cfg.Role = coord.ControllerOnly
		if id >= 4 {
			cfg.Role = coord.BrokerOnly
		}
		if id == 4 {
			// One broker knows a controller only; the other, the voters.
			cfg.Voters, cfg.BootstrapServers = nil, []string{addrs[1]}
		}
		c.cfgs = append(c.cfgs, cfg)
		c.dirs = append(c.dirs, cfg.Logs.Dirs[0])
	}
	start := func(ids ...int) {
		var wg sync.WaitGroup
		errs := make([]error, len(ids))
		for j, i := range ids {
			wg.Go(func() { c.nodes[i], errs[j] = Start(c.cfgs[i]) })
		}
		wg.Wait()
		for j, err := range errs {
			if err != nil {
				t.Fatalf("node %d: %v", ids[j]+1, err)
			}
		}
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(i)
		}
	})
	start(0, 1, 2)
	start(3, 4)
	return c
}

func (c *splitCluster) restart(i int) {
	n, err := Start(c.cfgs[i])
	if err != nil {
		c.t.Fatalf("restart node %d: %v", i+1, err)
	}
	c.nodes[i] = n
}

// quorumLeader is the index of the controller that leads the quorum.
func (c *splitCluster) quorumLeader(ctx context.Context) int {
	lead := -1
	await.TrueCtx(c.t, ctx, func() bool {
		for i, n := range c.nodes[:3] {
			if n != nil && n.Controller().Quorum().IsLeader {
				lead = i
				return true
			}
		}
		return false
	}, "a quorum leader")
	return lead
}

func TestSplitRoles(t *testing.T) {
	c := startSplit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The controllers run no broker: no Kafka listener, no registration.
	for i, n := range c.nodes[:3] {
		if n.Addr() != nil {
			t.Fatalf("controller-only node %d listens for clients at %v", i+1, n.Addr())
		}
	}
	_, adm := c.client(3)
	md, err := adm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ids := md.Brokers.NodeIDs(); !slices.Equal(ids, []int32{4, 5}) || (md.Controller != 4 && md.Controller != 5) {
		t.Fatalf("metadata: brokers %v, controller %d", ids, md.Controller)
	}

	// A replicated topic on the two brokers; records go through.
	res, err := adm.CreateTopic(ctx, 2, 2, nil, "split")
	if err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	cl, _ := c.client(4, kgo.DefaultProduceTopic("split"), kgo.ConsumeTopics("split"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	const records = 20
	for i := range records {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for got := 0; got < records; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d", got, records)
		}
		got += fs.NumRecords()
	}

	// DescribeQuorum through a broker (clients send it to the controller
	// Metadata names, a broker): three voters, two observers caught up.
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic, rt.Partitions = "__cluster_metadata", []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	lead := c.quorumLeader(ctx)
	var p kmsg.DescribeQuorumResponseTopicPartition
	if !await.PollCtx(ctx, func() bool {
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		p = resp.Topics[0].Partitions[0]
		var voters, observers []int32
		caughtUp := 0
		for _, v := range p.CurrentVoters {
			voters = append(voters, v.ReplicaID)
		}
		for _, o := range p.Observers {
			observers = append(observers, o.ReplicaID)
			if o.LogEndOffset == p.HighWatermark && o.LastCaughtUpTimestamp > 0 {
				caughtUp++
			}
		}
		return p.ErrorCode == 0 && p.LeaderID == int32(lead+1) && slices.Equal(voters, []int32{1, 2, 3}) &&
			slices.Equal(observers, []int32{4, 5}) && caughtUp == 2 && len(resp.Nodes) == 3
	}) {
		t.Fatalf("DescribeQuorum: %+v", p)
	}

	// A broker away while the metadata moves past a snapshot catches up
	// when it comes back, by snapshot.
	c.stop(4)
	for i := range 10 {
		if res, err := adm.CreateTopic(ctx, 1, 1, nil, fmt.Sprintf("while-down-%d", i)); err != nil || res.Err != nil {
			t.Fatalf("create while down: %v %v", err, res.Err)
		}
	}
	c.restart(4)
	c.waitTopic(ctx, 4, "while-down-9")
	// The restarted broker registered anew (fenced) and is unfenced once
	// its heartbeat says it caught up: until then a topic of two replicas
	// cannot be placed (INVALID_REPLICATION_FACTOR, as in Kafka), so the
	// creation below waits for it.
	c.waitImage(ctx, 3, "the restarted broker 5 unfenced", func(img *metadata.Image) bool {
		b, ok := img.Broker(5)
		return ok && b.Active()
	})
	if n := c.nodes[4].Controller().SnapshotsReceived(); n == 0 {
		t.Fatal("the restarted broker caught up without a snapshot")
	}

	// The quorum leader goes: the two other controllers elect one, and
	// metadata changes go on and reach both brokers.
	c.stop(lead)
	if res, err := adm.CreateTopic(ctx, 1, 2, nil, "after"); err != nil || res.Err != nil {
		t.Fatalf("create after the leader stopped: %v %v", err, res.Err)
	}
	if l := c.quorumLeader(ctx); l == lead {
		t.Fatalf("leader is still the stopped node %d", lead+1)
	}
	c.waitTopic(ctx, 3, "after")
	c.waitTopic(ctx, 4, "after")
}
