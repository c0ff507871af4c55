package main

// Several kzero processes as one cluster (issue 14): a static quorum of 3
// or 5 voters on loopback, topics placed on distinct brokers and across
// racks, and the quorum leader killed with SIGKILL: a new one is elected,
// metadata changes go on, and the killed node comes back and catches up.

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest/await"
)

// procCluster is n kzero processes, each broker and controller.
type procCluster struct {
	t      *testing.T
	dirs   []string
	voters string // controller.quorum.voters
	ctrl   []string
	procs  []*process
	addrs  []string // client listeners, "" while down
	extra  []string // more arguments for every node
}

// startProcCluster starts n nodes; extra are more arguments for each
// (--override k=v pairs).
func startProcCluster(t *testing.T, n int, extra ...string) *procCluster {
	t.Helper()
	c := &procCluster{t: t, procs: make([]*process, n), addrs: make([]string, n), extra: extra}
	// Controller ports are kept across restarts: below the ephemeral
	// range, so no client connection holds one while its node is down.
	ports, err := freeLoopbackPorts(n)
	if err != nil {
		t.Fatal(err)
	}
	var voters []string
	for i := range n {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[i]))
		c.ctrl = append(c.ctrl, addr)
		voters = append(voters, fmt.Sprintf("%d@%s", i+1, addr))
		c.dirs = append(c.dirs, t.TempDir())
	}
	c.voters = strings.Join(voters, ",")
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { c.start(i) })
	}
	wg.Wait()
	t.Cleanup(func() {
		for i := range c.procs {
			c.kill(i)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	return c
}

func (c *procCluster) args(i int) []string {
	return append([]string{
		"--override", "node.id=" + strconv.Itoa(i+1),
		"--override", "listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://" + c.ctrl[i],
		"--override", "controller.listener.names=CONTROLLER",
		"--override", "controller.quorum.voters=" + c.voters,
		"--override", "broker.rack=rack-" + strconv.Itoa(i%2),
		"--override", "broker.session.timeout.ms=2000",
		"--override", "log.dirs=" + c.dirs[i],
		"--override", "admin.listener=127.0.0.1:0",
	}, c.extra...)
}

func (c *procCluster) start(i int) {
	p := launch(c.t, c.args(i)...)
	if err := p.WaitReady(60 * time.Second); err != nil {
		p.Kill()
		c.t.Errorf("node %d: %v", i+1, err) // from goroutines: no FailNow
		return
	}
	c.procs[i], c.addrs[i] = p, p.Addr
}

func (c *procCluster) kill(i int) {
	if c.procs[i] != nil {
		c.procs[i].Kill()
		c.procs[i], c.addrs[i] = nil, ""
	}
}

// admin is a client of the running nodes.
func (c *procCluster) admin() *kadm.Client {
	var seeds []string
	for _, a := range c.addrs {
		if a != "" {
			seeds = append(seeds, a)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), freshMetadata)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// nodeAdmin is a client of node i alone.
func (c *procCluster) nodeAdmin(i int) *kadm.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs[i]), freshMetadata)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// controller is the quorum leader as node i sees it, -1 if none.
func (c *procCluster) controller(ctx context.Context, i int) int32 {
	m, err := c.nodeAdmin(i).BrokerMetadata(ctx)
	if err != nil {
		return -1
	}
	return m.Controller
}

func TestClusterProcesses(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d-nodes", n), func(t *testing.T) { clusterProcesses(t, n) })
	}
}

func clusterProcesses(t *testing.T, n int) {
	c := startProcCluster(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := c.admin()

	m, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Brokers) != n {
		t.Fatalf("metadata lists %d brokers, want %d", len(m.Brokers), n)
	}
	racks := map[int32]string{}
	for _, b := range m.Brokers {
		racks[b.NodeID] = *b.Rack
	}

	// Replication factor 3: three distinct brokers, both racks.
	res, err := adm.CreateTopic(ctx, 12, 3, nil, "placed")
	if err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	md, err := adm.Metadata(ctx, "placed")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range md.Topics["placed"].Partitions {
		rs := slices.Clone(p.Replicas)
		slices.Sort(rs)
		if len(slices.Compact(rs)) != 3 {
			t.Fatalf("partition %d replicas %v: not three distinct brokers", p.Partition, p.Replicas)
		}
		rackSet := map[string]bool{}
		for _, r := range p.Replicas {
			rackSet[racks[r]] = true
		}
		if len(rackSet) != 2 {
			t.Fatalf("partition %d replicas %v on racks %v: not across both racks", p.Partition, p.Replicas, rackSet)
		}
	}
	// Fewer brokers than the factor: refused.
	res, err = adm.CreateTopic(ctx, 1, int16(n+1), nil, "too-many")
	if err == nil && res.Err == nil {
		t.Fatalf("replication factor %d on %d brokers accepted", n+1, n)
	}

	// Kill the quorum leader, several times: a new one is elected,
	// metadata changes go on, the killed node catches up after a restart.
	rounds := 2
	if s := os.Getenv("KZERO_ELECTION_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	var took, spread []time.Duration
	for r := range rounds {
		lead := c.controller(ctx, 0)
		if lead < 1 {
			t.Fatalf("round %d: no controller", r)
		}
		c.kill(int(lead - 1))
		killed := time.Now()
		survivor := int(lead) % n
		if !await.PollCtx(ctx, func() bool {
			id := c.controller(ctx, survivor)
			return id >= 1 && id != lead && c.addrs[id-1] != ""
		}) {
			t.Fatalf("round %d: no new controller after killing %d", r, lead)
		}
		elected := time.Since(killed)
		topic := fmt.Sprintf("after-%d", r)
		res, err := c.nodeAdmin(survivor).CreateTopic(ctx, 3, 3, nil, topic)
		if err != nil || res.Err != nil {
			t.Fatalf("round %d: create after the leader died: %v %v", r, err, res.Err)
		}
		created := time.Now()
		// Metadata propagation: until every live broker's Metadata has it.
		for i := range n {
			if c.addrs[i] != "" && i != int(lead-1) {
				await.TrueCtx(t, ctx, func() bool { return hasTopic(ctx, c.nodeAdmin(i), topic, 3) },
					fmt.Sprintf("round %d: node %d to see %s", r, i+1, topic))
			}
		}
		spread = append(spread, time.Since(created))
		took = append(took, elected)
		c.start(int(lead - 1))
		if t.Failed() {
			t.FailNow()
		}
		await.TrueCtx(t, ctx, func() bool { return hasTopic(ctx, c.nodeAdmin(int(lead-1)), topic, 3) },
			fmt.Sprintf("round %d: restarted node %d to learn of %s", r, lead, topic))
	}
	// A broker killed -9 stops heartbeating: it is fenced, Metadata no
	// longer lists it, its partitions have no leader (no follower is in
	// sync without replication); restarted, it leads them again.
	lead := c.controller(ctx, 0)
	victim := int32(1)
	if victim == lead {
		victim = 2
	}
	c.kill(int(victim - 1))
	watcher := int(lead - 1)
	// ledBy lists the partitions id leads and those of its replicas
	// whose ISR lacks it.
	ledBy := func(id int32) (brokers []int32, led []int32, outOfSync []int32) {
		m, err := c.nodeAdmin(watcher).Metadata(ctx, "placed")
		if err != nil {
			return nil, nil, nil
		}
		for _, b := range m.Brokers {
			brokers = append(brokers, b.NodeID)
		}
		for _, p := range m.Topics["placed"].Partitions {
			if p.Leader == id {
				led = append(led, p.Partition)
			}
			if slices.Contains(p.Replicas, id) && !slices.Contains(p.ISR, id) {
				outOfSync = append(outOfSync, p.Partition)
			}
		}
		return brokers, led, outOfSync
	}
	var brokers, leads, outOfSync []int32
	if !await.PollCtx(ctx, func() bool {
		brokers, leads, _ = ledBy(victim)
		return brokers != nil && !slices.Contains(brokers, victim) && len(leads) == 0
	}) {
		t.Fatalf("killed broker %d never fenced: brokers %v, still leads %v", victim, brokers, leads)
	}
	c.start(int(victim - 1))
	if t.Failed() {
		t.FailNow()
	}
	// Back, it catches up by replication and rejoins every ISR it left.
	if !await.PollCtx(ctx, func() bool {
		brokers, _, outOfSync = ledBy(victim)
		return slices.Contains(brokers, victim) && len(outOfSync) == 0
	}) {
		t.Fatalf("restarted broker %d: brokers %v, out of the ISR of %v", victim, brokers, outOfSync)
	}

	// The majority lost: metadata changes fail with a clear error within
	// the request's timeout, and partitions the survivor leads keep being
	// served.
	// The survivor: the leader of placed-0; a majority of the others dies.
	md, err = c.nodeAdmin(0).Metadata(ctx, "placed")
	if err != nil {
		t.Fatal(err)
	}
	led := int32(0)
	survivor := int(md.Topics["placed"].Partitions[led].Leader - 1)
	if survivor < 0 {
		t.Fatalf("placed-0 has no leader")
	}
	for i, killed := 0, 0; killed < n/2+1; i++ {
		if i != survivor {
			c.kill(i)
			killed++
		}
	}
	// Not idempotent: a producer id block comes from the quorum (as in
	// Kafka, where a broker asks the controller for one on first use).
	// acks=1: acks=all would wait for an ISR that cannot shrink without a
	// quorum, as in Kafka.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs[survivor]), kgo.DefaultProduceTopic("placed"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: led, Value: []byte("still served")}).FirstErr(); err != nil {
		t.Fatalf("produce to partition %d led by the survivor: %v", led, err)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "no-quorum", 1, 1
	req.Topics, req.TimeoutMillis = append(req.Topics, rt), 2000
	start := time.Now()
	resp, err := req.RequestWith(ctx, cl.Broker(survivor+1)) // no controller to route to
	if err != nil {
		t.Fatal(err)
	}
	code := resp.Topics[0].ErrorCode
	if code != kerr.RequestTimedOut.Code && code != kerr.NotController.Code {
		t.Fatalf("CreateTopics without a quorum: %v, want REQUEST_TIMED_OUT or NOT_CONTROLLER", kerr.ErrorForCode(code))
	}
	if waited := time.Since(start); waited > 30*time.Second {
		t.Fatalf("CreateTopics without a quorum answered after %v", waited)
	}

	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	sort.Slice(spread, func(i, j int) bool { return spread[i] < spread[j] })
	t.Logf("%d nodes: new controller seen %v after a kill -9 of the leader (median %v)", n, took, took[len(took)/2])
	t.Logf("%d nodes: a created topic in every live broker's Metadata %v after CreateTopics answered (median %v)", n, spread, spread[len(spread)/2])
}

// hasTopic reports whether adm's broker lists topic with partitions
// partitions in its Metadata.
func hasTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int) bool {
	md, err := adm.Metadata(ctx, topic)
	return err == nil && md.Topics[topic].Err == nil && len(md.Topics[topic].Partitions) == partitions
}

// A node whose registration the quorum never takes (the other voter of its
// two never starts) exits with an error after
// initial.broker.registration.timeout.ms, as Kafka's broker does.
func TestInitialRegistrationTimeout(t *testing.T) {
	ports, err := freeLoopbackPorts(2)
	if err != nil {
		t.Fatal(err)
	}
	mine := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	other := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	p := launch(t,
		"--override", "node.id=1",
		"--override", "listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://"+mine,
		"--override", "controller.listener.names=CONTROLLER",
		"--override", "controller.quorum.voters=1@"+mine+",2@"+other,
		"--override", "log.dirs="+t.TempDir(),
		"--override", "admin.listener=127.0.0.1:0",
		"--override", "initial.broker.registration.timeout.ms=1500",
	)
	select {
	case <-p.Done():
	case <-time.After(20 * time.Second): // not the default minute: the key was not read
		p.Kill()
		t.Fatalf("still running 20 s later; stderr:\n%s", p.Stderr)
	}
	if p.Err == nil || !strings.Contains(p.Stderr.String(), "join metadata quorum") {
		t.Fatalf("exit %v; stderr:\n%s", p.Err, p.Stderr)
	}
}
