package raftnet

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"kzero/kzerotest/await"
)

// Two senders to one receiver: each sender's messages arrive all, in order.
func TestDeliversInOrderPerPeer(t *testing.T) {
	noLeaks(t)
	bigQueue := func(c *Config) { c.QueueSize = 4096 }
	a, b, c := startNode(t, 1, bigQueue), startNode(t, 2, bigQueue), startNode(t, 3, bigQueue)
	connect(a, b, c)
	const n = 2000
	for _, from := range []*testNode{a, c} {
		go func() {
			for i := 0; i < n; i += 8 {
				var batch []*pb.Message
				for j := i; j < min(i+8, n); j++ {
					batch = append(batch, msg(pb.MsgApp, from.id, 2, uint64(j)))
				}
				from.Send(batch)
			}
		}()
	}
	next := map[uint64]uint64{}
	for range 2 * n {
		m := recv(t, b.got, "message")
		if m.GetIndex() != next[m.GetFrom()] {
			t.Fatalf("from %d: index %d, want %d", m.GetFrom(), m.GetIndex(), next[m.GetFrom()])
		}
		next[m.GetFrom()]++
	}
	a.Close()
	b.Close()
	c.Close()
	if s := a.Stats(); s.Sent != n || s.Dropped != 0 || s.Connects != 1 {
		t.Errorf("sender stats %+v", s)
	}
	if s := b.Stats(); s.Received != 2*n || s.BadFrames != 0 {
		t.Errorf("receiver stats %+v", s)
	}
}

// A peer that refuses connections and one that accepts but never answers
// do not hold up Send nor the messages to a live peer.
func TestDeadPeerDoesNotBlock(t *testing.T) {
	noLeaks(t)
	stuckAddr, _ := rawListener(t)
	a := startNode(t, 1, func(c *Config) { c.QueueSize = 16; c.DialTimeout = 200 * time.Millisecond })
	b := startNode(t, 2, nil)
	a.SetPeers(map[int32]string{2: b.addr(), 3: deadAddr(t), 4: stuckAddr})
	b.SetPeers(map[int32]string{1: a.addr()})
	const n = 500
	for i := range uint64(n) {
		a.Send([]*pb.Message{msg(pb.MsgApp, 1, 3, i), msg(pb.MsgApp, 1, 4, i), msg(pb.MsgApp, 1, 2, i)})
		if m := recv(t, b.got, "message to the live peer"); m.GetIndex() != i {
			t.Fatalf("index %d, want %d", m.GetIndex(), i)
		}
	}
	seen := map[int32]bool{}
	for !seen[3] || !seen[4] {
		seen[recv(t, a.unreachable, "unreachable report")] = true
	}
	if seen[2] {
		t.Error("the live peer reported unreachable")
	}
	a.Close()
	if s := a.Stats(); s.Sent < n || s.Dropped == 0 {
		t.Errorf("stats %+v", s)
	}
}

// A peer that is down when messages are first sent gets the messages sent
// once it listens, and again after it restarts on the same address.
func TestPeerComesUpLater(t *testing.T) {
	noLeaks(t)
	addr := deadAddr(t)
	a := startNode(t, 1, nil)
	a.SetPeers(map[int32]string{2: addr})
	for {
		a.Send([]*pb.Message{msg(pb.MsgHeartbeat, 1, 2, 0)})
		if recv(t, a.unreachable, "unreachable report") == 2 {
			break
		}
	}

	up := func() *testNode {
		b := startNode(t, 2, func(c *Config) { c.ListenAddr = addr; c.Peers = map[int32]string{1: a.addr()} })
		for i := range uint64(10) {
			a.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, i)})
		}
		for i := uint64(0); i < 10; {
			m := recv(t, b.got, "message after the peer came up")
			if m.GetType() == pb.MsgHeartbeat {
				// A probe sent while b was down may still have been queued
				// when it came up: raft tolerates it; only the order of the
				// appends matters here.
				continue
			}
			if m.GetIndex() != i {
				t.Fatalf("index %d, want %d", m.GetIndex(), i)
			}
			i++
		}
		return b
	}
	b := up()
	b.Close()
	// Until a write fails, a's writer believes in the old connection.
	for len(a.unreachable) > 0 {
		<-a.unreachable
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for down := false; !down; {
		a.Send([]*pb.Message{msg(pb.MsgHeartbeat, 1, 2, 0)})
		select {
		case <-a.unreachable:
			down = true
		case <-tick.C:
		}
	}
	up()
	if s := a.Stats(); s.Connects != 2 || s.Reconnects != 1 {
		t.Errorf("stats %+v", s)
	}
}

// Garbage on the listener closes that connection only: the connection a
// peer already has goes on, and new ones are accepted.
func TestGarbageClosesOnlyThatConnection(t *testing.T) {
	noLeaks(t)
	a := startNode(t, 1, nil)
	b := startNode(t, 2, func(c *Config) { c.MaxMessageBytes = 1 << 10; c.DialTimeout = 200 * time.Millisecond })
	connect(a, b)
	seq := uint64(0)
	roundTrip := func() {
		t.Helper()
		a.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, seq)})
		if m := recv(t, b.got, "message from a"); m.GetIndex() != seq {
			t.Fatalf("index %d, want %d", m.GetIndex(), seq)
		}
		seq++
	}
	roundTrip()

	hi := appendFrame(nil, kindHello, appendHello(nil, hello{version: Version, from: 1, to: 2, cluster: "test-cluster"}))
	random := make([]byte, 64)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	huge := binary.BigEndian.AppendUint32(nil, 1<<31)
	huge = append(huge, make([]byte, 12)...)
	overLimit := appendFrame(nil, kindMessage, make([]byte, 2<<10))
	badCRC, _ := appendMessage(nil, msg(pb.MsgApp, 1, 2, 0), 1<<10)
	badCRC[5] ^= 0xff
	wrongTo, _ := appendMessage(nil, msg(pb.MsgApp, 1, 3, 0), 1<<10)
	wrongFrom, _ := appendMessage(nil, msg(pb.MsgApp, 3, 2, 0), 1<<10)
	undecodable := appendFrame(nil, kindMessage, []byte{0xff, 0xff, 0xff})
	tests := []struct {
		name      string
		handshake bool // send a valid hello first
		in        []byte
	}{
		{"random bytes", false, random},
		{"huge length", false, huge},
		{"message before hello", false, badCRC},
		{"kafka request", false, []byte{0, 0, 0, 14, 0, 18, 0, 3, 0, 0, 0, 1, 0, 4, 'k', 'g', 'o', '!'}}, // ApiVersions v3, no body
		{"silence", false, nil},
		{"wrong version", false, appendFrame(nil, kindHello, appendHello(nil, hello{version: 7, from: 1, to: 2, cluster: "test-cluster"}))},
		{"wrong cluster", false, appendFrame(nil, kindHello, appendHello(nil, hello{version: Version, from: 1, to: 2, cluster: "other"}))},
		{"not a peer", false, appendFrame(nil, kindHello, appendHello(nil, hello{version: Version, from: 9, to: 2, cluster: "test-cluster"}))},
		{"over the size limit", true, overLimit},
		{"huge length after hello", true, huge},
		{"bad crc", true, badCRC},
		{"undecodable message", true, undecodable},
		{"wrong to", true, wrongTo},
		{"wrong from", true, wrongFrom},
		{"second hello", true, hi},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := b.Stats().BadFrames
			c := rawDial(t, b)
			if tt.handshake {
				if _, err := c.Write(hi); err != nil {
					t.Fatal(err)
				}
				fr := newFrameReader(c, handshakeMaxFrame)
				if kind, _, err := fr.next(); err != nil || kind != kindHello {
					t.Fatalf("no hello back: %d, %v", kind, err)
				}
			}
			if _, err := c.Write(tt.in); err != nil && len(tt.in) > 0 {
				t.Fatal(err)
			}
			drainUntilClosed(t, c)
			if got := b.Stats().BadFrames; got != before+1 {
				t.Errorf("bad frames %d, want %d", got, before+1)
			}
			roundTrip()
		})
	}
	if s := a.Stats(); s.Connects != 1 || s.Dropped != 0 {
		t.Errorf("a's connection did not survive: %+v", s)
	}
	if !b.log.contains("cluster id \\\"other\\\"") {
		t.Error("the refusal's reason is not logged")
	}
}

// A refused hello is reported on both sides with its reason, and nothing
// is delivered.
func TestHandshakeRefused(t *testing.T) {
	noLeaks(t)
	a := startNode(t, 1, nil)
	b := startNode(t, 2, func(c *Config) { c.ClusterID = "another" })
	connect(a, b)
	a.Send([]*pb.Message{msg(pb.MsgHeartbeat, 1, 2, 0)})
	if p := recv(t, a.unreachable, "unreachable report"); p != 2 {
		t.Fatalf("unreachable %d", p)
	}
	if !a.log.contains("peer refused the connection") || !a.log.contains("this node is in") {
		t.Errorf("dialer's log lacks the reason:\n%s", a.log.b.String())
	}
	a.Close()
	b.Close()
	if s := b.Stats(); s.BadFrames == 0 || s.Received != 0 {
		t.Errorf("stats %+v", s)
	}
}

// A message over MaxMessageBytes is not sent; a snapshot so refused is
// reported to raft; the messages after it go on.
func TestTooLargeRefused(t *testing.T) {
	noLeaks(t)
	limit := func(c *Config) { c.MaxMessageBytes = 4 << 10 }
	a, b := startNode(t, 1, limit), startNode(t, 2, limit)
	connect(a, b)
	snap := msg(pb.MsgSnap, 1, 2, 1)
	snap.Snapshot = &pb.Snapshot{Data: make([]byte, 8<<10)}
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, 0), snap, msg(pb.MsgApp, 1, 2, 2)})
	for _, want := range []uint64{0, 2} {
		if m := recv(t, b.got, "message"); m.GetIndex() != want || m.GetType() != pb.MsgApp {
			t.Fatalf("got %v, want index %d", m, want)
		}
	}
	if p := recv(t, a.snapFailed, "snapshot failure"); p != 2 {
		t.Fatalf("snapshot failure for %d", p)
	}
	a.Close()
	if s := a.Stats(); s.TooLarge != 1 || s.Dropped != 1 || s.Sent != 2 {
		t.Errorf("stats %+v", s)
	}
}

// A snapshot of several MiB arrives whole: one frame written in pieces,
// read in chunks.
func TestLargeSnapshot(t *testing.T) {
	noLeaks(t)
	a, b := startNode(t, 1, nil), startNode(t, 2, nil)
	connect(a, b)
	data := make([]byte, 5<<20) // more than keepBuf: the reader lets it go after
	rand.NewChaCha8([32]byte{1}).Read(data)
	for round := range 2 {
		snap := msg(pb.MsgSnap, 1, 2, uint64(round))
		snap.Snapshot = &pb.Snapshot{Data: data, Metadata: &pb.SnapshotMetadata{Index: new(uint64(100))}}
		a.Send([]*pb.Message{snap, msg(pb.MsgHeartbeat, 1, 2, 0)})
		m := recv(t, b.got, "snapshot")
		if m.GetType() != pb.MsgSnap || !bytes.Equal(m.GetSnapshot().GetData(), data) || m.GetSnapshot().GetMetadata().GetIndex() != 100 {
			t.Fatalf("snapshot differs: type %s, %d bytes", m.GetType(), len(m.GetSnapshot().GetData()))
		}
		if m := recv(t, b.got, "heartbeat"); m.GetType() != pb.MsgHeartbeat {
			t.Fatalf("got %s", m.GetType())
		}
	}
}

// SetPeers adds, moves and removes peers.
func TestSetPeers(t *testing.T) {
	noLeaks(t)
	a, b := startNode(t, 1, nil), startNode(t, 2, nil)
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, 0)})
	if p := recv(t, a.unreachable, "unknown peer report"); p != 2 {
		t.Fatalf("unreachable %d", p)
	}
	connect(a, b)
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, 1)})
	if m := recv(t, b.got, "message"); m.GetIndex() != 1 {
		t.Fatalf("index %d", m.GetIndex())
	}
	// Node 2 moves to another address.
	b2 := startNode(t, 2, func(c *Config) { c.Peers = map[int32]string{1: a.addr()} })
	a.SetPeers(map[int32]string{2: b2.addr()})
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, 2)})
	if m := recv(t, b2.got, "message at the new address"); m.GetIndex() != 2 {
		t.Fatalf("index %d", m.GetIndex())
	}
	a.SetPeers(nil)
	for len(a.unreachable) > 0 {
		<-a.unreachable
	}
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, 3)})
	if p := recv(t, a.unreachable, "removed peer report"); p != 2 {
		t.Fatalf("unreachable %d", p)
	}
	a.Close()
	b.Close()
	b2.Close()
	if len(b.got)+len(b2.got) != 0 {
		t.Error("a message after the move or removal arrived")
	}
}

// Close returns while a write is blocked on a peer that stopped reading
// and while Deliver is blocked, and leaves no goroutine behind.
func TestCloseIsClean(t *testing.T) {
	noLeaks(t)
	slowAddr, slowConns := rawListener(t)
	a := startNode(t, 1, func(c *Config) { c.WriteTimeout = time.Hour })
	entered := make(chan struct{}, 1)
	b := startNode(t, 2, func(c *Config) {
		c.Deliver = func(ctx context.Context, m *pb.Message) error {
			offer(entered, struct{}{})
			<-ctx.Done()
			return ctx.Err()
		}
	})
	connect(a, b)
	a.SetPeers(map[int32]string{2: b.addr(), 3: slowAddr})
	big := make([]*pb.Message, 32)
	for i := range big {
		big[i] = msg(pb.MsgApp, 1, 3, uint64(i))
		big[i].Entries = []*pb.Entry{{Data: make([]byte, 1<<20)}}
	}
	a.Send(big)
	slow := acceptAsPeer(t, slowConns, 3, 1)
	defer slow.Close()
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, 0), msg(pb.MsgApp, 1, 2, 1)})
	recv(t, entered, "a call of Deliver")

	done := make(chan struct{})
	go func() {
		a.Close()
		b.Close()
		close(done)
	}()
	recv(t, done, "return from Close")
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, 0)}) // after Close: dropped quietly
	if err := a.Start(); err == nil {
		t.Error("Start after Close")
	}
}

// acceptAsPeer takes a connection from a raw listener, answers its hello
// as node id (to node to), and then never reads again.
func acceptAsPeer(t *testing.T, conns <-chan net.Conn, id, to int32) net.Conn {
	t.Helper()
	c := recv(t, conns, "connection")
	fr := newFrameReader(c, handshakeMaxFrame)
	if kind, _, err := fr.next(); err != nil || kind != kindHello {
		t.Fatalf("hello: %d, %v", kind, err)
	}
	if _, err := c.Write(appendFrame(nil, kindHello, appendHello(nil, hello{version: Version, from: id, to: to, cluster: "test-cluster"}))); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestJitter(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 50 * time.Millisecond, 2 * time.Second} {
		for range 100 {
			if j := jitter(d); j < d/2 || j > d {
				t.Fatalf("jitter(%v) = %v", d, j)
			}
		}
	}
}

// A learner dials one controller, learns the other voter from it, and
// keeps a connection to each that carries messages both ways; quorum
// frames reach it; a controller that restarts is dialed again; a learner
// hello from a voter's id is refused.
func TestLearnerLinks(t *testing.T) {
	noLeaks(t)
	learned := make(chan [2]int32, 16) // controller, learner
	quorum := make(chan string, 16)
	voter := func(id int32, addr string) *testNode {
		return startNode(t, id, func(c *Config) {
			if addr != "" {
				c.ListenAddr = addr
			}
			c.OnLearner = func(l int32) { offer(learned, [2]int32{id, l}) }
		})
	}
	a, b := voter(1, ""), voter(2, "")
	connect(a, b)
	l := startNode(t, 4, func(c *Config) {
		c.Learner, c.Bootstrap = true, []string{a.addr()}
		c.DeliverQuorum = func(from int32, p []byte) { offer(quorum, fmt.Sprintf("%d:%s", from, p)) }
	})
	seen := map[[2]int32]bool{}
	for len(seen) < 2 {
		seen[recv(t, learned, "learner connected")] = true
	}
	if !seen[[2]int32{1, 4}] || !seen[[2]int32{2, 4}] || !slices.Equal(a.Learners(), []int32{4}) {
		t.Fatalf("learner connections %v, a's learners %v", seen, a.Learners())
	}
	// Controller to learner, over the connection the learner dialed.
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 4, 7)})
	if m := recv(t, l.got, "message to the learner"); m.GetFrom() != RaftID(1) || m.GetIndex() != 7 {
		t.Fatalf("learner got %v", m)
	}
	// Learner to the voter it learned of.
	linked := func(n *testNode, id int32) bool {
		n.mu.RLock()
		defer n.mu.RUnlock()
		return n.mu.peers[id] != nil
	}
	// The link registers right after its hello.
	await.True(t, wait, func() bool { return linked(l, 2) }, "the learner's link to voter 2")
	l.Send([]*pb.Message{msg(pb.MsgAppResp, 4, 2, 9)})
	if m := recv(t, b.got, "message from the learner"); m.GetFrom() != RaftID(4) || m.GetIndex() != 9 {
		t.Fatalf("voter got %v", m)
	}
	b.Broadcast([]byte("view"))
	if got := recv(t, quorum, "quorum frame"); got != "2:view" {
		t.Fatalf("quorum frame %q", got)
	}

	// b restarts on its address: the learner dials it again.
	addr := b.addr()
	b.Close()
	b = voter(2, addr)
	connect(a, b)
	if got := recv(t, learned, "learner reconnected"); got != [2]int32{2, 4} {
		t.Fatalf("reconnect %v", got)
	}
	b.Send([]*pb.Message{msg(pb.MsgHeartbeat, 2, 4, 11)})
	if m := recv(t, l.got, "message after the reconnection"); m.GetFrom() != RaftID(2) || m.GetIndex() != 11 {
		t.Fatalf("learner got %v", m)
	}

	// A learner hello from a voter's id is refused.
	impostor := startNode(t, 2, func(c *Config) { c.Learner, c.Bootstrap = true, []string{a.addr()} })
	await.True(t, wait, func() bool { return impostor.log.contains("refuses learner 2") }, "the impostor refused")
	l.Close()
	impostor.Close()
	a.Close()
	b.Close()
}

// A node that has yet to learn its cluster (no id: new, joining) talks to
// a node of a cluster, both ways; nodes of two clusters do not (above).
func TestNewNodeTalksToAnyCluster(t *testing.T) {
	noLeaks(t)
	a := startNode(t, 1, nil)
	b := startNode(t, 2, func(c *Config) { c.ClusterID = "" })
	connect(a, b)
	a.Send([]*pb.Message{msg(pb.MsgHeartbeat, 1, 2, 0)})
	if m := recv(t, b.got, "message from a node of the cluster"); m.GetFrom() != RaftID(1) {
		t.Fatalf("from %d", m.GetFrom())
	}
	b.Send([]*pb.Message{msg(pb.MsgHeartbeatResp, 2, 1, 0)})
	if m := recv(t, a.got, "message from the new node"); m.GetFrom() != RaftID(2) {
		t.Fatalf("from %d", m.GetFrom())
	}
	a.Close()
	b.Close()
}

// A snapshot written to a peer is reported sent (raft's SnapshotFinish):
// raft waits for that report before it sends the follower anything but
// heartbeats, and the follower's answer does not end the wait when the
// leader compacted its log meanwhile (a restarted learner then never
// caught up: TestSplitRoles).
func TestSnapshotReportedSent(t *testing.T) {
	noLeaks(t)
	a, b := startNode(t, 1, nil), startNode(t, 2, nil)
	connect(a, b)
	snap := msg(pb.MsgSnap, 1, 2, 0)
	snap.Snapshot = &pb.Snapshot{Data: []byte("state"), Metadata: &pb.SnapshotMetadata{Index: new(uint64(100))}}
	a.Send([]*pb.Message{snap, msg(pb.MsgHeartbeat, 1, 2, 0)})
	if m := recv(t, b.got, "snapshot"); m.GetType() != pb.MsgSnap {
		t.Fatalf("got %s", m.GetType())
	}
	if p := recv(t, a.snapSent, "snapshot sent report"); p != 2 {
		t.Fatalf("snapshot sent reported for %d", p)
	}
	select {
	case p := <-a.snapSent:
		t.Fatalf("a second report, for %d: only the snapshot is reported", p)
	default:
	}
}
