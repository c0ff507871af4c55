package raftnet

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// raftNode is a minimal raft loop around a RawNode and a MemoryStorage
// whose state machine is the list of applied proposals; its messages go
// through a Transport.
type raftNode struct {
	id    int32
	rn    *raft.RawNode
	st    *raft.MemoryStorage
	cs    *pb.ConfState
	recvc chan *pb.Message
	doc   chan func() // run on the loop's goroutine
	stopc chan struct{}
	done  chan struct{}
	w     *watch

	mu struct {
		sync.Mutex
		tr      *Transport
		lead    uint64
		applied []string
		index   uint64 // of the last applied entry
	}
}

// watch wakes waiters whenever any node's state changes.
type watch struct {
	mu sync.Mutex
	ch chan struct{}
}

func (w *watch) changed() {
	w.mu.Lock()
	close(w.ch)
	w.ch = make(chan struct{})
	w.mu.Unlock()
}

func (w *watch) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		w.mu.Lock()
		ch := w.ch
		w.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("never: %s", what)
		}
	}
}

func newRaftNode(t *testing.T, id int32, voters []uint64, w *watch) *raftNode {
	n := &raftNode{id: id, st: raft.NewMemoryStorage(), cs: &pb.ConfState{Voters: voters},
		recvc: make(chan *pb.Message, 1024), doc: make(chan func(), 64),
		stopc: make(chan struct{}), done: make(chan struct{}), w: w}
	if err := n.st.ApplySnapshot(&pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: new(uint64(1)), Term: new(uint64(1)), ConfState: n.cs}}); err != nil {
		t.Fatal(err)
	}
	rn, err := raft.NewRawNode(&raft.Config{ID: RaftID(id), ElectionTick: 10, HeartbeatTick: 1, Storage: n.st,
		Applied: 1, MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256, CheckQuorum: true, PreVote: true,
		Logger: &raft.DefaultLogger{Logger: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)}})
	if err != nil {
		t.Fatal(err)
	}
	n.rn = rn
	go n.run()
	t.Cleanup(n.stop)
	return n
}

// transport returns a Transport config that feeds this node.
func (n *raftNode) transportConfig(addr string) Config {
	report := func(f func()) {
		select {
		case n.doc <- f:
		default: // the loop is busy: raft will notice anyway
		}
	}
	return Config{
		NodeID: n.id, ClusterID: "raft-test", ListenAddr: addr,
		Deliver: func(ctx context.Context, m *pb.Message) error {
			select {
			case n.recvc <- m:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		OnUnreachable: func(p int32) { report(func() { n.rn.ReportUnreachable(RaftID(p)) }) },
		OnSnapshot: func(p int32, sent bool) {
			status := raft.SnapshotFailure
			if sent {
				status = raft.SnapshotFinish
			}
			report(func() { n.rn.ReportSnapshot(RaftID(p), status) })
		},
		Logger: slog.New(slog.DiscardHandler),
	}
}

func (n *raftNode) setTransport(tr *Transport) {
	n.mu.Lock()
	n.mu.tr = tr
	n.mu.Unlock()
}

func (n *raftNode) transport() *Transport {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.tr
}

func (n *raftNode) stop() {
	select {
	case <-n.stopc:
	default:
		close(n.stopc)
	}
	<-n.done
}

func (n *raftNode) run() {
	defer close(n.done)
	ticker := time.NewTicker(20 * time.Millisecond)
	defer ticker.Stop()
	for {
		for n.rn.HasReady() {
			n.handle(n.rn.Ready())
		}
		select {
		case <-ticker.C:
			n.rn.Tick()
		case m := <-n.recvc:
			n.rn.Step(m)
		case f := <-n.doc:
			f()
		case <-n.stopc:
			return
		}
	}
}

func (n *raftNode) handle(rd raft.Ready) {
	if !raft.IsEmptySnap(rd.Snapshot) {
		n.st.ApplySnapshot(rd.Snapshot)
		n.mu.Lock()
		n.mu.applied = strings.Fields(string(rd.Snapshot.GetData()))
		n.mu.index = rd.Snapshot.GetMetadata().GetIndex()
		n.mu.Unlock()
	}
	if !raft.IsEmptyHardState(rd.HardState) {
		n.st.SetHardState(rd.HardState)
	}
	n.st.Append(rd.Entries)
	if tr := n.transport(); tr != nil {
		tr.Send(rd.Messages)
	}
	n.mu.Lock()
	if rd.SoftState != nil {
		n.mu.lead = rd.SoftState.Lead
	}
	for _, e := range rd.CommittedEntries {
		if e.GetType() == pb.EntryNormal && len(e.GetData()) > 0 {
			n.mu.applied = append(n.mu.applied, string(e.GetData()))
		}
		n.mu.index = e.GetIndex()
	}
	n.mu.Unlock()
	n.rn.Advance(rd)
	n.w.changed()
}

func (n *raftNode) lead() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.lead
}

func (n *raftNode) applied() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.mu.applied)
}

// call runs f on the loop's goroutine and returns its error.
func (n *raftNode) call(t *testing.T, f func() error) error {
	errc := make(chan error, 1)
	select {
	case n.doc <- func() { errc <- f() }:
	case <-time.After(wait):
		t.Fatal("raft loop stuck")
	}
	return recv(t, errc, "raft loop answer")
}

// agreedLeader waits until every node names the same leader (not
// excluded) and returns it.
func agreedLeader(t *testing.T, w *watch, nodes []*raftNode, excluded uint64) *raftNode {
	t.Helper()
	var leader *raftNode
	w.until(t, "an agreed leader", func() bool {
		lead := nodes[0].lead()
		for _, n := range nodes {
			if n.lead() != lead {
				return false
			}
		}
		for _, n := range nodes {
			if RaftID(n.id) == lead && lead != excluded {
				leader = n
				return true
			}
		}
		return false
	})
	return leader
}

// commit proposes data on the leader and waits until every node applied it.
func commit(t *testing.T, w *watch, leader *raftNode, nodes []*raftNode, data string) {
	t.Helper()
	if err := leader.call(t, func() error { return leader.rn.Propose([]byte(data)) }); err != nil {
		t.Fatalf("propose %s: %v", data, err)
	}
	w.until(t, "every node applies "+data, func() bool {
		for _, n := range nodes {
			if !slices.Contains(n.applied(), data) {
				return false
			}
		}
		return true
	})
}

// Three raft nodes talk through three Transports: they elect a leader and
// commit; when the leader's transport closes the other two elect another
// and go on; when it comes back on its address it catches up, by snapshot
// since the new leader compacted its log.
func TestRaftOverTransport(t *testing.T) {
	noLeaks(t)
	w := &watch{ch: make(chan struct{})}
	ids := []int32{1, 2, 3}
	voters := []uint64{RaftID(1), RaftID(2), RaftID(3)}
	var nodes []*raftNode
	peers := map[int32]string{}
	for _, id := range ids {
		n := newRaftNode(t, id, voters, w)
		tr := New(n.transportConfig("127.0.0.1:0"))
		if err := tr.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.transport().Close() })
		peers[id] = tr.Addr().String()
		n.setTransport(tr)
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		n.transport().SetPeers(peers)
	}

	leader := agreedLeader(t, w, nodes, 0)
	for _, d := range []string{"a", "b", "c"} {
		commit(t, w, leader, nodes, d)
	}

	// The leader is cut off: the others elect one of themselves.
	old := leader
	old.transport().Close()
	rest := slices.DeleteFunc(slices.Clone(nodes), func(n *raftNode) bool { return n == old })
	leader = agreedLeader(t, w, rest, RaftID(old.id))
	commit(t, w, leader, rest, "d")
	commit(t, w, leader, rest, "e")

	// Both compact their logs behind "e": the old leader can only catch
	// up from a snapshot.
	for _, n := range rest {
		if err := n.call(t, func() error {
			n.mu.Lock()
			index, data := n.mu.index, strings.Join(n.mu.applied, " ")
			n.mu.Unlock()
			if _, err := n.st.CreateSnapshot(index, n.cs, []byte(data)); err != nil {
				return err
			}
			return n.st.Compact(index)
		}); err != nil {
			t.Fatal(err)
		}
	}
	tr := New(old.transportConfig(peers[old.id]))
	tr.SetPeers(peers)
	if err := tr.Start(); err != nil {
		t.Fatal(err)
	}
	old.setTransport(tr)
	t.Cleanup(func() { tr.Close() })
	commit(t, w, leader, nodes, "f")
	if got, want := old.applied(), []string{"a", "b", "c", "d", "e", "f"}; !slices.Equal(got, want) {
		t.Errorf("the old leader applied %q, want %q", got, want)
	}
	if err := old.call(t, func() error {
		if snap, _ := old.st.Snapshot(); snap.GetMetadata().GetIndex() <= 1 {
			t.Error("the old leader caught up without a snapshot")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		n.stop()
		n.transport().Close()
	}
	var received uint64
	for _, n := range nodes {
		received += n.transport().Stats().Received
	}
	if received == 0 {
		t.Error("nothing went through the new transports")
	}
}
