package raftnet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Defaults of Config.
const (
	DefaultMaxMessageBytes = 64 << 20
	DefaultQueueSize       = 1024
	DefaultDialTimeout     = 3 * time.Second
	DefaultWriteTimeout    = 10 * time.Second
	DefaultBackoffMin      = 50 * time.Millisecond
	DefaultBackoffMax      = 2 * time.Second
)

// RaftID is the raft id of node id n. Raft reserves 0 for "nobody" and
// Kafka node ids start at 0, so raft ids are node ids plus one.
func RaftID(n int32) uint64 { return uint64(n) + 1 }

// NodeID is the node id of raft id r, -1 for raft's "nobody" (0).
func NodeID(r uint64) int32 {
	if r == 0 || r > 1<<31 {
		return -1
	}
	return int32(r - 1)
}

// Config configures a Transport.
type Config struct {
	NodeID    int32  // this controller's node.id
	ClusterID string // both ends of a connection must carry the same (may be empty on all)

	// ListenAddr is the controller listener, e.g. "127.0.0.1:9093" or
	// ":0"; Addr returns the bound address.
	ListenAddr string
	// Peers are the other controllers: node id -> host:port. An entry
	// for NodeID is ignored. SetPeers replaces them.
	Peers map[int32]string
	// Advertised is this controller's own address as the voters know it
	// (its controller.quorum.voters entry), told to learners with the
	// others; empty: the bound address.
	Advertised string

	// Learner makes this the transport of a learner (a broker-only node,
	// process.roles=broker): it listens nowhere, dials Bootstrap (and then
	// every voter the controllers name) and receives the quorum's
	// messages over the connections it dialed (learner.go). Peers,
	// ListenAddr and Advertised are unused.
	Learner   bool
	Bootstrap []string // host:port of controllers (controller.quorum.bootstrap.servers or .voters)

	// OnLearner is told, on a controller, that learner id connected (its
	// hello is done): the controller adds it to the quorum. Called from
	// the connection's goroutine; it must not block. May be nil.
	OnLearner func(id int32)
	// DeliverQuorum takes the payload of a quorum frame from node from
	// (Broadcast); it must not block and must not keep payload past the
	// call. May be nil.
	DeliverQuorum func(from int32, payload []byte)

	// Deliver takes each message from a peer, in the order that peer
	// sent it, from that connection's goroutine. It may block (that
	// connection waits) but must return once ctx is done. An error closes
	// the connection. The lead passes coord's Controller.Step.
	Deliver func(ctx context.Context, m *pb.Message) error

	// OnUnreachable is told that messages to a peer were lost: its queue
	// was full, no connection could be made, or a write failed (raft's
	// RawNode.ReportUnreachable). OnSnapshot is told whether a MsgSnap
	// was written (RawNode.ReportSnapshot, SnapshotFinish or
	// SnapshotFailure): raft waits for that report, since the follower's
	// answer does not end the wait once the leader compacted its log.
	// Both are called from transport goroutines, possibly often, and must
	// not block nor call the Transport: queue the report to the raft loop.
	// Either may be nil.
	OnUnreachable func(peer int32)
	OnSnapshot    func(peer int32, sent bool)

	// TLS, when set, is the controller listener's TLS (its protocol is
	// SSL): the listener serves it and the raft frames go inside.
	// ClientTLS is the side this node dials controllers with (a voter
	// dialing the other voters, a learner its controllers); ServerName is
	// set per dial to the host dialed. Either nil: plain TCP.
	TLS, ClientTLS *tls.Config

	// SASL, when set, makes the controller listener authenticate every
	// connection (its protocol is SASL_PLAINTEXT, or SASL_SSL with TLS):
	// mechanism name -> a new server exchange of it, one per connection.
	// A dialer that does not authenticate with one of them is refused
	// and never delivers a frame. ClientSASL is the mechanism this node
	// authenticates with to the controllers it dials
	// (sasl.mechanism.controller.protocol); nil: none.
	SASL       map[string]func() Exchange
	ClientSASL ClientMechanism
	// SASLFailureMessage is what a refused login is told, from the
	// mechanism's error (node: net/sasl's Kafka messages); nil: Kafka's
	// generic message.
	SASLFailureMessage func(mechanism string, err error) string
	// FailedAuthenticationDelay holds a refused login's answer and close
	// that long (connection.failed.authentication.delay.ms), so that a
	// dialer guessing passwords is slowed down, as on Kafka's listeners.
	FailedAuthenticationDelay time.Duration

	MaxMessageBytes int           // largest encoded raft message sent or accepted; default 64 MiB
	QueueSize       int           // messages waiting per peer; default 1024
	DialTimeout     time.Duration // connect and handshake; default 3s
	WriteTimeout    time.Duration // to write one MiB to a peer (else it is cut off); default 10s
	Backoff         Backoff       // between failed dials
	Logger          *slog.Logger
}

// Backoff bounds the wait between failed dials to a peer: it starts at
// Min, doubles per failure up to Max, with jitter, and resets once a
// connection is made.
type Backoff struct {
	Min, Max time.Duration
}

// Stats are a Transport's counters since New.
type Stats struct {
	Sent       uint64 // messages written to a connection
	Received   uint64 // messages delivered
	Dropped    uint64 // messages not sent: queue full, no connection, write failed, too large, unknown peer
	TooLarge   uint64 // of Dropped: larger than MaxMessageBytes
	Connects   uint64 // outbound connections made (handshake done)
	Reconnects uint64 // of Connects: those after a peer's first
	BadFrames  uint64 // inbound connections closed for breaking the protocol
	// AuthFailures are inbound connections closed for failing SASL
	// authentication (not in BadFrames).
	AuthFailures uint64
}

// Transport carries raft messages between controllers over TCP. See the
// package doc for its goroutines and the wire format.
type Transport struct {
	cfg    Config
	logger *slog.Logger
	ctx    context.Context // done on Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu struct {
		sync.RWMutex
		ln      net.Listener
		started bool
		closed  bool
		addrs   map[int32]string // the configured peers
		peers   map[int32]*peer  // their writers, once started; on a learner, its links' by voter id
		// On a controller: the writers of learners' connections. On a
		// learner: the addresses it has a link to.
		learners map[int32]*peer
		links    map[string]bool
	}

	stats struct {
		sent, received, dropped, tooLarge atomic.Uint64
		connects, reconnects, badFrames   atomic.Uint64
		authFailures                      atomic.Uint64
	}
}

// New returns a Transport for cfg, with defaults filled in. It does nothing
// until Start.
func New(cfg Config) *Transport {
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.Backoff.Min <= 0 {
		cfg.Backoff.Min = DefaultBackoffMin
	}
	if cfg.Backoff.Max < cfg.Backoff.Min {
		cfg.Backoff.Max = max(DefaultBackoffMax, cfg.Backoff.Min)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	t := &Transport{cfg: cfg, logger: cfg.Logger.With("component", "raftnet", "node", cfg.NodeID)}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.mu.addrs = copyPeers(cfg.Peers, cfg.NodeID)
	t.mu.peers = map[int32]*peer{}
	t.mu.learners = map[int32]*peer{}
	t.mu.links = map[string]bool{}
	return t
}

func copyPeers(peers map[int32]string, self int32) map[int32]string {
	out := make(map[int32]string, len(peers))
	for id, addr := range peers {
		if id != self {
			out[id] = addr
		}
	}
	return out
}

// Start binds the listener and starts accepting peers and sending to them.
// It returns the bind error, or an error for a config it cannot run.
func (t *Transport) Start() error {
	if t.cfg.NodeID < 0 {
		return fmt.Errorf("raftnet: node id %d", t.cfg.NodeID)
	}
	if t.cfg.Deliver == nil {
		return errors.New("raftnet: no Deliver")
	}
	if len(t.cfg.ClusterID) > maxClusterIDLen {
		return fmt.Errorf("raftnet: cluster id of %d bytes, at most %d", len(t.cfg.ClusterID), maxClusterIDLen)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.started || t.mu.closed {
		return errors.New("raftnet: Start after Start or Close")
	}
	for id := range t.mu.addrs {
		if id < 0 {
			return fmt.Errorf("raftnet: peer id %d", id)
		}
	}
	if t.cfg.Learner {
		if len(t.cfg.Bootstrap) == 0 {
			return errors.New("raftnet: a learner with no controller to dial")
		}
		t.mu.started = true
		for _, addr := range t.cfg.Bootstrap {
			t.startLinkLocked(addr)
		}
		return nil
	}
	ln, err := net.Listen("tcp", t.cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("raftnet: listen: %w", err)
	}
	if t.cfg.TLS != nil {
		// The handshake runs on the connection's first read, in serve,
		// under the hello's deadline.
		ln = tls.NewListener(ln, t.cfg.TLS)
	}
	t.mu.ln = ln
	t.mu.started = true
	t.wg.Go(func() { t.accept(ln) })
	for id, addr := range t.mu.addrs {
		t.startPeerLocked(id, addr)
	}
	return nil
}

// Addr returns the listener's address, nil before Start.
func (t *Transport) Addr() net.Addr {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.mu.ln == nil {
		return nil
	}
	return t.mu.ln.Addr()
}

// SetPeers replaces the peers. A peer whose address changed, or that is
// gone, loses its writer and the messages queued for it; new peers get one.
func (t *Transport) SetPeers(peers map[int32]string) {
	next := copyPeers(peers, t.cfg.NodeID)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return
	}
	for id, p := range t.mu.peers {
		if next[id] != p.addr {
			p.cancel()
			delete(t.mu.peers, id)
		}
	}
	t.mu.addrs = next
	if !t.mu.started {
		return
	}
	for id, addr := range next {
		if t.mu.peers[id] == nil {
			t.startPeerLocked(id, addr)
		}
	}
}

func (t *Transport) startPeerLocked(id int32, addr string) {
	p := newPeer(t, id, addr)
	t.mu.peers[id] = p
	t.wg.Go(p.run)
}

// Send queues msgs for their peers and returns at once: it never blocks on
// the network. A message whose peer queue is full, or for no known peer,
// is dropped (counted, and reported through OnUnreachable and, for a
// MsgSnap, OnSnapshot(to, false)). Send keeps the messages until written and
// does not modify them.
func (t *Transport) Send(msgs []*pb.Message) {
	for _, m := range msgs {
		to := NodeID(m.GetTo())
		t.mu.RLock()
		p, closed := t.mu.peers[to], t.mu.closed
		if p == nil {
			p = t.mu.learners[to]
		}
		t.mu.RUnlock()
		if closed {
			return
		}
		if p != nil {
			select {
			case p.queue <- outbound{m: m}:
				continue
			default:
			}
		}
		t.lost(to, m)
	}
}

// Broadcast queues a quorum frame with payload for every peer and learner
// connected or to connect, dropping it where a queue is full. coord's
// quorum leader sends its view of the quorum this way so that every node
// can answer DescribeQuorum as the leader would. payload must not change
// afterwards.
func (t *Transport) Broadcast(payload []byte) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.mu.closed {
		return
	}
	for _, m := range []map[int32]*peer{t.mu.peers, t.mu.learners} {
		for _, p := range m {
			select {
			case p.queue <- outbound{quorum: payload}:
			default:
			}
		}
	}
}

// lost counts and reports a message that will not be sent.
func (t *Transport) lost(to int32, m *pb.Message) {
	t.stats.dropped.Add(1)
	if m.GetType() == pb.MsgSnap && t.cfg.OnSnapshot != nil {
		t.cfg.OnSnapshot(to, false)
	}
	if t.cfg.OnUnreachable != nil {
		t.cfg.OnUnreachable(to)
	}
}

// Stats returns the counters.
func (t *Transport) Stats() Stats {
	s := &t.stats
	return Stats{
		Sent:         s.sent.Load(),
		Received:     s.received.Load(),
		Dropped:      s.dropped.Load(),
		TooLarge:     s.tooLarge.Load(),
		Connects:     s.connects.Load(),
		Reconnects:   s.reconnects.Load(),
		BadFrames:    s.badFrames.Load(),
		AuthFailures: s.authFailures.Load(),
	}
}

// Close stops the listener, every connection and writer, and waits for
// their goroutines (Deliver calls in progress must return on their
// context). Queued messages are dropped without reports.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return nil
	}
	t.mu.closed = true
	ln := t.mu.ln
	clear(t.mu.peers)
	clear(t.mu.learners)
	t.mu.Unlock()
	t.cancel() // stops writers, readers, dials, and closes connections
	var err error
	if ln != nil {
		err = ln.Close()
	}
	t.wg.Wait()
	return err
}
