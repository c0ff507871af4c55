package main

// The chaos run's cluster: kzero processes on loopback whose ports and data
// stay theirs across kills, so a killed node comes back as itself; each
// writes its log to a file in the run's directory, which outlives a failed
// run.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// chaosNode is one kzero node: a process while it runs, nil while killed.
type chaosNode struct {
	id       int32
	dir      string // data in dir/data, log in dir/kzero.log
	client   string // the client listener, fixed for the run
	ctrl     string // the controller listener, fixed for the run
	proc     *process
	frozen   bool // SIGSTOPped
	starting bool // launched, not ready yet
}

// chaosCluster is the run's nodes. Only the test goroutine (the fault
// loop) starts, kills, freezes and thaws them.
type chaosCluster struct {
	t         *testing.T
	nodes     []*chaosNode
	voters    string
	overrides []string // k=v, after the cluster's own
	topics    []string // the run's, once created
	events    *chaosEvents
}

// freeLoopbackPorts finds n ports free on 127.0.0.1 below the kernel's
// ephemeral range: the nodes keep their ports across restarts, and a port
// from the ephemeral range could meanwhile be the local end of one of the
// clients' connections, which would make the restarted node's bind fail.
func freeLoopbackPorts(n int) ([]int, error) {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				low = v
			}
		}
	}
	if low < 12000 {
		return nil, fmt.Errorf("ephemeral ports start at %d: no room below them", low)
	}
	var ports []int
	for tries := 0; len(ports) < n && tries < 1000; tries++ {
		p := 10000 + rand.IntN(low-10000)
		if slices.Contains(ports, p) {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		ln.Close()
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("found %d free ports of %d", len(ports), n)
	}
	return ports, nil
}

// startChaosCluster starts n nodes under root and waits until every one is
// ready.
func startChaosCluster(t *testing.T, root string, n int, overrides []string, events *chaosEvents) *chaosCluster {
	t.Helper()
	ports, err := freeLoopbackPorts(2 * n)
	if err != nil {
		t.Fatal(err)
	}
	c := &chaosCluster{t: t, overrides: overrides, events: events}
	var voters []string
	for i := range n {
		nd := &chaosNode{
			id:     int32(i + 1),
			dir:    filepath.Join(root, fmt.Sprintf("node%d", i+1)),
			client: fmt.Sprintf("127.0.0.1:%d", ports[2*i]),
			ctrl:   fmt.Sprintf("127.0.0.1:%d", ports[2*i+1]),
		}
		if err := os.MkdirAll(filepath.Join(nd.dir, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes, nd)
		voters = append(voters, fmt.Sprintf("%d@%s", nd.id, nd.ctrl))
	}
	c.voters = strings.Join(voters, ",")
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			if nd.proc != nil {
				nd.proc.Kill() // SIGKILL ends a stopped process too
			}
		}
	})
	// Launched together: a voter waits for the quorum before it is ready.
	for _, nd := range c.nodes {
		c.launch(nd)
	}
	for _, nd := range c.nodes {
		c.wait(nd)
	}
	return c
}

func (c *chaosCluster) args(nd *chaosNode) []string {
	kv := []string{
		"node.id=" + strconv.Itoa(int(nd.id)),
		"listeners=PLAINTEXT://" + nd.client + ",CONTROLLER://" + nd.ctrl,
		"controller.listener.names=CONTROLLER",
		"controller.quorum.voters=" + c.voters,
		"broker.rack=rack-" + strconv.Itoa(int(nd.id)%2),
		"log.dirs=" + filepath.Join(nd.dir, "data"),
		"admin.listener=127.0.0.1:0",
	}
	var args []string
	for _, s := range append(kv, c.overrides...) {
		args = append(args, "--override", s)
	}
	return args
}

// launch starts nd's process with its stderr appended to nd.dir/kzero.log.
func (c *chaosCluster) launch(nd *chaosNode) {
	logPath := filepath.Join(nd.dir, "kzero.log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	fmt.Fprintf(f, "=== chaos: node %d starts at %s\n", nd.id, time.Now().UTC().Format(time.RFC3339Nano))
	f.Close()
	script := `log=$1; shift; exec "$0" "$@" 2>>"$log"`
	argv := append([]string{"-c", script, kzeroBinary(c.t), logPath}, c.args(nd)...)
	nd.proc = launchCommand(c.t, exec.Command("/bin/sh", argv...))
	nd.frozen = false
}

// chaosReadyWait bounds a node's start: a voter is ready once it has
// registered through the quorum, so a restarted node waits for the others.
const chaosReadyWait = 2 * time.Minute

// wait waits for nd's ready line; the test fails if it does not come.
func (c *chaosCluster) wait(nd *chaosNode) {
	c.ready(nd, nd.proc.WaitReady(chaosReadyWait))
}

// ready takes the outcome of nd's waitReady, on the test goroutine.
func (c *chaosCluster) ready(nd *chaosNode, err error) {
	if err != nil {
		c.t.Fatalf("node %d: %v (log: %s)", nd.id, err, filepath.Join(nd.dir, "kzero.log"))
	}
	if nd.proc.Addr != nd.client {
		c.t.Fatalf("node %d ready on %s, want %s", nd.id, nd.proc.Addr, nd.client)
	}
	nd.starting = false
}

// restart launches a killed node and waits for it in the background: a
// restarted voter cannot be ready while the quorum lacks a majority, which
// a frozen node the fault loop is yet to thaw may be part of. The outcome
// arrives on started, to be handed to ready.
func (c *chaosCluster) restart(nd *chaosNode, started chan<- chaosStarted) {
	c.launch(nd)
	nd.starting = true
	c.events.log("node %d restarting (pid %d)", nd.id, nd.proc.Cmd.Process.Pid)
	p := nd.proc
	go func() { started <- chaosStarted{nd, p.WaitReady(chaosReadyWait)} }()
}

// chaosStarted is a restarted node's waitReady outcome.
type chaosStarted struct {
	nd  *chaosNode
	err error
}

func (c *chaosCluster) kill(nd *chaosNode) {
	nd.proc.Kill()
	c.events.log("node %d killed -9 (exit: %v)", nd.id, nd.proc.Err)
	nd.proc, nd.frozen = nil, false
}

func (c *chaosCluster) signal(nd *chaosNode, sig syscall.Signal) {
	if err := nd.proc.Cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("node %d: %v: %v", nd.id, sig, err)
	}
}

func (c *chaosCluster) freeze(nd *chaosNode) {
	c.signal(nd, syscall.SIGSTOP)
	nd.frozen = true
	c.events.log("node %d frozen (SIGSTOP)", nd.id)
}

func (c *chaosCluster) thaw(nd *chaosNode) {
	c.signal(nd, syscall.SIGCONT)
	nd.frozen = false
	c.events.log("node %d thawed (SIGCONT)", nd.id)
}

// healthy is the nodes that run and are not frozen.
func (c *chaosCluster) healthy() []*chaosNode {
	var ok []*chaosNode
	for _, nd := range c.nodes {
		if nd.proc != nil && !nd.frozen && !nd.starting {
			ok = append(ok, nd)
		}
	}
	return ok
}

// seeds is every node's client listener: the ports stay, so a client
// reconnects to a restarted node by itself.
func (c *chaosCluster) seeds() []string {
	var s []string
	for _, nd := range c.nodes {
		s = append(s, nd.client)
	}
	return s
}

// chaosView is the cluster as one healthy node sees it: the metadata
// quorum's leader and the partitions each node leads.
type chaosView struct {
	controller *chaosNode // nil if unknown
	leads      map[int32][]string
}

// view asks the healthy nodes in turn for Metadata of the run's topics;
// the zero view if none answers within a few seconds.
func (c *chaosCluster) view(ctx context.Context) chaosView {
	for _, nd := range c.healthy() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(nd.client))
		if err != nil {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err := kadm.NewClient(cl).Metadata(qctx, c.topics...)
		cancel()
		cl.Close()
		if err != nil {
			continue
		}
		v := chaosView{leads: map[int32][]string{}}
		if m.Controller >= 1 && int(m.Controller) <= len(c.nodes) {
			v.controller = c.nodes[m.Controller-1]
		}
		for _, td := range m.Topics.Sorted() {
			for _, p := range td.Partitions.Sorted() {
				v.leads[p.Leader] = append(v.leads[p.Leader], fmt.Sprintf("%s/%d", td.Topic, p.Partition))
			}
		}
		return v
	}
	return chaosView{}
}

// chaosState is the cluster as Metadata shows it: brokers listed, and the
// partitions of the run's topics by how well they are replicated.
type chaosState struct {
	brokers    int
	inSync     int   // the ISR size asked for
	err        error // Metadata failed, or a topic did
	leaderless int   // no leader
	below      int   // a leader, fewer in sync than asked for
	partial    int   // enough in sync, not every replica
}

func (s chaosState) String() string {
	if s.err != nil {
		return s.err.Error()
	}
	return fmt.Sprintf("%d brokers; partitions: %d without a leader, %d with fewer than %d in sync, %d more with a partial ISR",
		s.brokers, s.leaderless, s.below, s.inSync, s.partial)
}

// state asks the cluster for metadata of topics, counting as below the
// partitions with fewer than inSync replicas in their ISR.
func (c *chaosCluster) state(ctx context.Context, adm *kadm.Client, topics []string, inSync int) chaosState {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m, err := adm.Metadata(qctx, topics...)
	if err != nil {
		return chaosState{err: err}
	}
	s := chaosState{brokers: len(m.Brokers), inSync: inSync}
	for _, topic := range topics {
		td := m.Topics[topic]
		if td.Err != nil {
			s.err = fmt.Errorf("%s: %w", topic, td.Err)
			return s
		}
		for _, p := range td.Partitions {
			switch {
			case p.Leader < 0 || p.Err != nil:
				s.leaderless++
			case len(p.ISR) < inSync:
				s.below++
			case len(p.ISR) < len(p.Replicas):
				s.partial++
			}
		}
	}
	return s
}

// await asks for the cluster's state every quarter second until ok says
// it is good or ctx ends; it returns the last state seen.
func (c *chaosCluster) await(ctx context.Context, topics []string, inSync int, ok func(chaosState) bool) (chaosState, bool) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.seeds()...))
	if err != nil {
		return chaosState{err: err}, false
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		s := c.state(ctx, adm, topics, inSync)
		if ok(s) {
			return s, true
		}
		select {
		case <-ctx.Done():
			return s, false
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// led: every node is a broker again and every partition has a leader.
func (c *chaosCluster) led(s chaosState) bool {
	return s.err == nil && s.brokers == len(c.nodes) && s.leaderless == 0
}
