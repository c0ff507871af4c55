package coord

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/control"
)

// memNet carries raft messages between voters in this process. Appends to
// a held voter wait until released, in order (the injected fault: a
// follower that lags the quorum).
type memNet struct {
	mu      sync.Mutex
	nodes   map[int32]*Controller
	hold    int32 // the voter whose appends are held; -1 none
	held    []*pb.Message
	readIdx chan struct{} // signalled when the held voter asks for a read index
}

type memTransport struct {
	net  *memNet
	from int32
}

func (t memTransport) Send(msgs []*pb.Message) {
	n := t.net
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range msgs {
		to := nodeID(m.GetTo())
		if t.from == n.hold && m.GetType() == pb.MsgReadIndex {
			select {
			case n.readIdx <- struct{}{}:
			default:
			}
		}
		if to == n.hold && m.GetType() == pb.MsgApp {
			n.held = append(n.held, m)
			continue
		}
		if c := n.nodes[to]; c != nil {
			go c.Step(context.Background(), m)
		}
	}
}

// release delivers the held appends in order and stops holding.
func (n *memNet) release() {
	n.mu.Lock()
	held, c := n.held, n.nodes[n.hold]
	n.held, n.hold = nil, -1
	n.mu.Unlock()
	for _, m := range held {
		c.Step(context.Background(), m)
	}
}

// startQuorum starts three voters over a memNet.
func startQuorum(t *testing.T) (*memNet, []*Controller) {
	t.Helper()
	n := &memNet{nodes: map[int32]*Controller{}, hold: -1, readIdx: make(chan struct{}, 1)}
	cs := make([]*Controller, 3)
	for i := range cs {
		id := int32(i + 1)
		cfg := testConfig(t.TempDir())
		cfg.NodeID, cfg.TickInterval = id, 20*time.Millisecond
		cfg.Transport = memTransport{n, id}
		for p := int32(1); p <= 3; p++ {
			if p != id {
				cfg.Peers = append(cfg.Peers, Peer{ID: p, Addr: fmt.Sprintf("127.0.0.1:%d", 9000+p)})
			}
		}
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		n.mu.Lock()
		n.nodes[id] = c
		n.mu.Unlock()
		cs[i] = c
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, c := range cs {
		wg.Go(func() { errs[i] = c.Register() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("voter %d: %v", i+1, err)
		}
	}
	return n, cs
}

// A follower that lags the quorum answers an admin request as the leader
// would: its read barrier waits until it has applied what the quorum had
// committed when the request came.
func TestReadBarrier(t *testing.T) {
	n, cs := startQuorum(t)
	ctx := ctx(t)
	var lead *Controller
	until(t, "a quorum leader", func() bool {
		for _, c := range cs {
			if c.Quorum().IsLeader {
				lead = c
			}
		}
		return lead != nil
	})
	follower := cs[slices.IndexFunc(cs, func(c *Controller) bool { return c != lead })]

	n.mu.Lock()
	n.hold = follower.cfg.NodeID
	n.mu.Unlock()
	mustCreate(t, lead, TopicSpec{Name: "fresh", NumPartitions: -1, ReplicationFactor: -1,
		Assignments: map[int32][]int32{0: {lead.cfg.NodeID}}})
	if follower.Image().Topic("fresh") != nil {
		t.Fatal("the held follower applied the topic")
	}

	type answer struct {
		res []TopicResults
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := follower.ElectLeaders(ctx, control.Preferred, []control.TopicPartitions{{Topic: "fresh", Partitions: []int32{0}}})
		done <- answer{res, err}
	}()
	select {
	case <-n.readIdx: // its barrier asked the leader for the commit index
	case <-ctx.Done():
		t.Fatal("the follower never asked for a read index")
	}
	n.release()
	a := <-done
	if a.err != nil || len(a.res) != 1 || len(a.res[0].Partitions) != 1 || a.res[0].Partitions[0].Err != kerr.ElectionNotNeeded {
		t.Fatalf("election on the lagging follower: %v %+v", a.err, a.res)
	}
}
