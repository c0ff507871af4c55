package coord

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"kzero/coord/control"
	"kzero/coord/metadata"
	"kzero/coord/wal"
)

// DefaultSnapshotEvery is how many applied entries separate two snapshots.
const DefaultSnapshotEvery = 10000

// electionTicks is raft's election timeout in ticks (1s at the default
// 100ms tick, Kafka's controller.quorum.election.timeout.ms).
const electionTicks = 10

// DefaultSnapshotKeep is how many entries behind a snapshot a voter keeps.
const DefaultSnapshotKeep = 5000

// Role is what a node is in the metadata quorum and in the cluster
// (process.roles).
type Role int8

const (
	// Combined is process.roles=broker,controller: a voter of the quorum
	// that registers as a broker.
	Combined Role = iota
	// BrokerOnly is process.roles=broker: a raft learner that follows the
	// metadata log without voting, and registers as a broker (learner.go).
	BrokerOnly
	// ControllerOnly is process.roles=controller: a voter that registers
	// no broker; it names a new cluster, serves the quorum and, while it
	// leads, runs the active controller.
	ControllerOnly
)

// Config configures a Controller.
type Config struct {
	NodeID    int32               // node.id; also this voter's identity in the quorum
	Role      Role                // process.roles; zero: Combined
	Dir       string              // the metadata folder, e.g. <first log dir>/__cluster_metadata-0
	Listeners []metadata.Listener // registered for this broker
	Rack      string              // broker.rack

	// ClusterID, when set, names a new cluster, and an existing one must
	// carry it (Open fails otherwise). Empty: a new cluster gets a random id.
	ClusterID string
	// Bootstrap allows Open to start a new cluster when Dir holds no
	// metadata log. A node whose log dirs already hold data of a cluster
	// sets it false: a lost metadata log is then an error, never silently
	// a new, empty cluster.
	Bootstrap bool

	// Peers are the other controller voters (controller.quorum.voters
	// without this node). Empty for a single voter; a quorum of several
	// needs a Transport. A BrokerOnly node lists the voters it knows of
	// (for DescribeQuorum's addresses); it may know none.
	Peers     []Peer
	Transport Transport
	// ControllerAddr is this voter's controller listener, host:port (for
	// DescribeQuorum); empty for a single voter.
	ControllerAddr string

	SnapshotEvery uint64 // default DefaultSnapshotEvery
	// SnapshotKeep is how many entries a voter of a quorum keeps behind its
	// newest snapshot, so a follower a little behind catches up from the
	// log rather than a whole snapshot: default DefaultSnapshotKeep; -1
	// keeps none. A single voter keeps none.
	SnapshotKeep             int64
	DefaultPartitions        int32            // num.partitions, for NumPartitions -1; default 1
	DefaultReplicationFactor int16            // default.replication.factor, for -1; default 1
	Features                 map[string]int16 // finalized on a new cluster; default metadata.version=MetadataVersion

	// ValidateBrokerConfig checks a dynamic broker config that is not a
	// synonym of a topic config (those are checked here). Nil refuses them.
	ValidateBrokerConfig func(key, value string) error
	// ValidateGroupConfigs checks a group's dynamic configs, all of them
	// as they would be after a change, against the broker's bounds (as
	// Kafka's GroupConfig.validate checks streams.session.timeout.ms
	// against group.streams.min.session.timeout.ms, say). Nil checks
	// each value's own range only.
	ValidateGroupConfigs func(set map[string]string) error

	// BrokerSessionTimeout is broker.session.timeout.ms: a broker the
	// quorum leader has not heard from for longer is fenced. Default 9s.
	BrokerSessionTimeout time.Duration
	// UncleanLeaderElection is unclean.leader.election.enable as this
	// node's static config: topics without their own value, and without a
	// cluster-wide dynamic default, take it.
	UncleanLeaderElection bool
	// MinInsyncReplicas is min.insync.replicas as this node's static
	// config (default 1), for eligible leader replicas (KIP-966).
	MinInsyncReplicas int
	// UncleanShutdown says this node's log dirs were not closed cleanly:
	// its registration takes it out of every ELR.
	UncleanShutdown bool
	// AutoLeaderRebalance is auto.leader.rebalance.enable: every
	// LeaderImbalanceCheckInterval (leader.imbalance.check.interval.seconds,
	// default 300s) the quorum leader moves leadership back to preferred
	// replicas that are in the ISR and active. Kafka 4.x's controller
	// ignores leader.imbalance.per.broker.percentage, and so does kzero.
	AutoLeaderRebalance          bool
	LeaderImbalanceCheckInterval time.Duration

	TickInterval time.Duration // raft tick; default 100ms
	// StartTimeout bounds how long Open (Register) waits for the quorum
	// to take this node's registration: initial.broker.registration.timeout.ms.
	// Default 60s, as Kafka's.
	StartTimeout time.Duration
	Logger       *slog.Logger

	// WALFS is for tests only: the file system the metadata log is
	// written in, to inject faults (wal.OpenFS). Nil is the operating
	// system's.
	WALFS wal.FS
}

// Peer is another controller voter.
type Peer struct {
	ID   int32
	Addr string
}

// Transport carries raft messages to the other voters and the learners.
// Send must not block for long and must not modify the messages; a lost
// message is fine (raft retries). Incoming messages go to
// Controller.Step.
type Transport interface {
	Send(msgs []*pb.Message)
}

// Broadcaster is a Transport that also carries the quorum leader's view of
// the quorum to every node (coord/raftnet's Broadcast); they hand it to
// Controller.ReceiveQuorum. Without it only the leader answers
// DescribeQuorum.
type Broadcaster interface {
	Broadcast(payload []byte)
}

// ErrClosed is returned by calls on a closed (or failed) Controller.
var ErrClosed = errors.New("metadata controller closed")

// Controller is this node's member of the metadata quorum: it replicates
// the metadata log with raft, applies it into Images, and turns admin
// requests into records.
//
// Goroutines: the raft loop (run) owns the raft node, the storage, the
// pending proposals and the building of images; the notifier calls
// subscribers and wakes proposers, in apply order. Every exported method is
// safe for concurrent use and never blocks the raft loop for long.
type Controller struct {
	cfg     Config
	logger  *slog.Logger
	image   atomic.Pointer[metadata.Image]
	session uint64 // random per process: told apart from entries of earlier runs
	seq     atomic.Uint64

	proposec chan *pending
	readc    chan *readWait // read barriers for the raft loop
	readSeq  atomic.Uint64
	recvc    chan *pb.Message
	reportc  chan int32 // peers messages to which were lost
	// Snapshot reports, the latest per peer: never dropped (raft waits
	// for them), never blocking the caller (the raft loop's own Send may
	// report); snapc wakes the loop.
	snapReports struct {
		sync.Mutex
		sent map[int32]bool
	}
	snapc   chan struct{}
	stopc   chan struct{}
	runDone chan struct{}
	// Images for the notifier: the raft loop appends and signals, never
	// waiting for subscribers; the notifier takes all that is queued.
	notify struct {
		sync.Mutex
		queue  []update
		closed bool
	}
	notifyc chan struct{} // one pending signal
	notDone chan struct{}

	subs struct {
		sync.Mutex
		fns  []func(prev, next *metadata.Image)
		last *metadata.Image // the last image subscribers saw
	}

	quorum    atomic.Pointer[Quorum]  // as of the last tick
	relayed   atomic.Pointer[relayed] // the leader's view, as it last sent it
	conf      atomic.Pointer[pb.ConfState]
	confc     chan confRequest // learners to add or remove, for the raft loop
	snapsIn   atomic.Int64     // snapshots received from a leader
	failed    atomic.Pointer[error]
	closeOnce sync.Once
	store     *wal.Storage
}

// pending is a Proposal waiting to apply.
type pending struct {
	seq  uint64
	data []byte
	ctx  context.Context
	done chan []error // buffered: the notifier never blocks on it
}

// update is one published image, for the notifier.
type update struct {
	next *metadata.Image
	done []delivery
}

type delivery struct {
	p       *pending
	results []error
}

func raftID(node int32) uint64 { return uint64(node) + 1 }

func nodeID(raftID uint64) int32 {
	if raftID == 0 {
		return -1
	}
	return int32(raftID - 1)
}

func (cfg *Config) setDefaults() error {
	if cfg.NodeID < 0 {
		return fmt.Errorf("metadata: node id %d", cfg.NodeID)
	}
	if cfg.Dir == "" {
		return errors.New("metadata: no folder")
	}
	if (len(cfg.Peers) > 0 || cfg.Role == BrokerOnly) && cfg.Transport == nil {
		return errors.New("metadata: a quorum of several voters, or a learner, needs a transport")
	}
	if cfg.Role < Combined || cfg.Role > ControllerOnly {
		return fmt.Errorf("metadata: role %d", cfg.Role)
	}
	for _, p := range cfg.Peers {
		if p.ID < 0 || p.ID == cfg.NodeID {
			return fmt.Errorf("metadata: bad peer id %d", p.ID)
		}
	}
	if cfg.SnapshotEvery == 0 {
		cfg.SnapshotEvery = DefaultSnapshotEvery
	}
	switch {
	case cfg.SnapshotKeep == 0:
		cfg.SnapshotKeep = DefaultSnapshotKeep
	case cfg.SnapshotKeep < 0:
		cfg.SnapshotKeep = 0
	}
	if cfg.DefaultPartitions <= 0 {
		cfg.DefaultPartitions = 1
	}
	if cfg.DefaultReplicationFactor <= 0 {
		cfg.DefaultReplicationFactor = 1
	}
	if cfg.Features == nil {
		cfg.Features = map[string]int16{"metadata.version": metadata.MetadataVersion}
	}
	if cfg.BrokerSessionTimeout <= 0 {
		cfg.BrokerSessionTimeout = 9 * time.Second
	}
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = 100 * time.Millisecond
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 60 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return nil
}

// New opens (or creates) the metadata log in cfg.Dir, replays it and
// starts the raft loop. Step may be called from then on (a transport
// delivers the other voters' messages to it); Register then joins.
func New(cfg Config) (*Controller, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	logger := cfg.Logger.With("component", "metadata")
	// A learner starts from nothing and gets a snapshot from the quorum
	// leader once added; it never bootstraps a cluster.
	learner := cfg.Role == BrokerOnly
	if !cfg.Bootstrap && !learner {
		// Refused before anything is created, so the operator finds the
		// folder as it was.
		if ok, err := wal.Exists(cfg.Dir); err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		} else if !ok {
			return nil, errNoMetadataLog(cfg)
		}
	}
	st, err := wal.OpenFS(cfg.Dir, logger, cfg.WALFS)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	if st.Fresh() && !learner {
		if !cfg.Bootstrap {
			st.Close()
			return nil, errNoMetadataLog(cfg)
		}
		if cfg.ClusterID == "" && len(cfg.Peers) == 0 {
			// The only voter names the cluster in its bootstrap. Voters of
			// a quorum must bootstrap alike: the first ClusterRecord to
			// commit names theirs (start).
			cfg.ClusterID = metadata.TopicIDString(metadata.NewUUID())
		}
		voters := []uint64{raftID(cfg.NodeID)}
		for _, p := range cfg.Peers {
			voters = append(voters, raftID(p.ID))
		}
		slices.Sort(voters)
		if err := st.Bootstrap(&pb.ConfState{Voters: voters, AutoLeave: new(false)}, metadata.EncodeImage(bootstrapImage(cfg))); err != nil {
			st.Close()
			return nil, fmt.Errorf("metadata: bootstrap: %w", err)
		}
	}
	snap, err := st.Snapshot()
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("metadata: %w", err)
	}
	snapIndex := snap.GetMetadata().GetIndex()
	img := metadata.EmptyImage()
	if snapIndex > 0 { // else a learner not yet given a snapshot
		if img, err = metadata.DecodeImage(snap.GetData(), int64(snapIndex)); err != nil {
			st.Close()
			return nil, fmt.Errorf("metadata: %w", err)
		}
	}
	rn, err := raft.NewRawNode(&raft.Config{
		ID:                       raftID(cfg.NodeID),
		ElectionTick:             electionTicks,
		HeartbeatTick:            1,
		Storage:                  st,
		Applied:                  snapIndex,
		MaxSizePerMsg:            1 << 20,
		MaxCommittedSizePerReady: 16 << 20,
		MaxInflightMsgs:          256,
		CheckQuorum:              true,
		PreVote:                  true,
		Logger:                   raftLogger{logger},
	})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("metadata: %w", err)
	}

	var sess [8]byte
	rand.Read(sess[:])
	c := &Controller{
		cfg:      cfg,
		logger:   logger,
		session:  binary.LittleEndian.Uint64(sess[:]),
		proposec: make(chan *pending, 256),
		readc:    make(chan *readWait, 256),
		recvc:    make(chan *pb.Message, 256),
		reportc:  make(chan int32, 256),
		snapc:    make(chan struct{}, 1),
		stopc:    make(chan struct{}),
		runDone:  make(chan struct{}),
		notifyc:  make(chan struct{}, 1),
		notDone:  make(chan struct{}),
		confc:    make(chan confRequest, 256),
		store:    st,
	}
	c.image.Store(img)
	c.subs.last = img
	cs := snap.GetMetadata().GetConfState()
	if cs == nil {
		cs = &pb.ConfState{}
	}
	c.conf.Store(cs)
	ld := &loop{c: c, rn: rn, st: st, confState: cs,
		applied: snapIndex, snapIndex: snapIndex, pending: map[uint64]*pending{}, reads: map[uint64]*readWait{},
		learners: learnerState{want: map[int32]bool{}, unwant: map[int32]bool{}}}
	go ld.run()
	go c.runNotifier()
	return c, nil
}

// Open is New then Register: the controller is running and this broker
// registered when it returns.
func Open(cfg Config) (*Controller, error) {
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := c.Register(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Register waits for the quorum (up to Config.StartTimeout), names the
// cluster if it is new, and registers this broker (a ControllerOnly node
// registers none; a BrokerOnly one first waits for the quorum leader's
// snapshot). The Image is current when it returns.
func (c *Controller) Register() error {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.StartTimeout)
	defer cancel()
	return c.start(ctx)
}

func errNoMetadataLog(cfg Config) error {
	return fmt.Errorf("metadata: %s holds no metadata log, but this node has data of cluster %q: refusing to start a new cluster over it (restore the metadata log, or move the data away)", cfg.Dir, cfg.ClusterID)
}

// bootstrapImage is a new cluster's first image: its id and finalized
// features are in the bootstrap snapshot itself, so they are durable before
// the quorum first elects a leader.
func bootstrapImage(cfg Config) *metadata.Image {
	b := metadata.NewBuilder(metadata.EmptyImage())
	if len(cfg.Peers) > 0 {
		return b.Finish(1)
	}
	b.Apply(&metadata.ClusterRecord{ID: cfg.ClusterID}, 1)
	for _, name := range slices.Sorted(maps.Keys(cfg.Features)) {
		b.Apply(&metadata.FeatureLevel{Name: name, Level: cfg.Features[name]}, 1)
	}
	return b.Finish(1)
}

// start names a new cluster and registers this broker, retrying while the
// quorum has no leader yet.
func (c *Controller) start(ctx context.Context) error {
	clusterID := c.cfg.ClusterID
	if clusterID == "" {
		clusterID = metadata.TopicIDString(metadata.NewUUID())
	}
	boot := []metadata.Record{&metadata.ClusterRecord{ID: clusterID}}
	for _, name := range slices.Sorted(maps.Keys(c.cfg.Features)) {
		boot = append(boot, &metadata.FeatureLevel{Name: name, Level: c.cfg.Features[name]})
	}
	if c.cfg.Role == ControllerOnly {
		if err := c.nameCluster(ctx, boot); err != nil {
			return err
		}
		return c.checkClusterID()
	}
	// A new incarnation of this broker registers fenced, as Kafka's do; the
	// active controller unfences it (and elects it where it can lead) once
	// it has caught up. The previous incarnation is gone: the log dirs'
	// lock says no other process runs on them. So no session of it is
	// waited out (Kafka's DUPLICATE_BROKER_REGISTRATION): its leaderships
	// are dropped in the same group.
	incarnation := metadata.NewUUID()
	for {
		img := c.Image()
		if c.cfg.Role == BrokerOnly && img.ClusterID() == "" {
			// A learner decides on the quorum's image: wait for the
			// snapshot the leader sends once it has added this node.
			select {
			case <-ctx.Done():
				return fmt.Errorf("metadata: no snapshot from the quorum (is a controller of controller.quorum.bootstrap.servers reachable?): %w", ctx.Err())
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		groups, reply := control.New(c.controlConfig()).Register(img, time.Now(), control.Registration{Broker: c.cfg.NodeID,
			Incarnation: incarnation, Rack: c.cfg.Rack, Listeners: c.cfg.Listeners, PreviousGone: true,
			UncleanShutdown: c.cfg.UncleanShutdown})
		if reply.Err != nil && !errors.Is(reply.Err, kerr.InconsistentClusterID) {
			return fmt.Errorf("metadata: register broker %d: %s: %s", c.cfg.NodeID, codeName(reply.Err), reply.Message)
		}
		if img.ClusterID() == "" {
			// Rejected harmlessly if replay has yet to reach the cluster record.
			groups = append([][]metadata.Record{boot}, groups...)
		}
		// A proposal forwarded to a leader that cannot take it (gone, or
		// unreachable from here) is lost: each attempt has an election's
		// time, then it is decided again.
		actx, cancel := context.WithTimeout(ctx, 2*c.cfg.TickInterval*electionTicks)
		res, err := c.propose(actx, groups)
		cancel()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			continue
		}
		if err != nil {
			return fmt.Errorf("metadata: register broker %d: %w", c.cfg.NodeID, err)
		}
		last := res[len(res)-1]
		if last == nil {
			break
		}
		if !errors.Is(last, kerr.NotController) && !staleDecision(last) && !errors.Is(last, kerr.RequestTimedOut) {
			code, msg := metadata.Split(last)
			return fmt.Errorf("metadata: register broker %d: %s: %s", c.cfg.NodeID, codeName(code), msg)
		}
		// No leader elected yet, decided on an image replay has moved
		// past, or overtaken by a snapshot from the leader: decide again.
		select {
		case <-ctx.Done():
			return fmt.Errorf("metadata: no quorum leader: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	// Serve once unfenced: the partitions it can lead have their leader.
	for {
		if b, ok := c.Image().Broker(c.cfg.NodeID); ok && b.Incarnation == incarnation && !b.Fenced {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("metadata: broker %d registered but not unfenced by the controller: %w", c.cfg.NodeID, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return c.checkClusterID()
}

func (c *Controller) checkClusterID() error {
	if want, got := c.cfg.ClusterID, c.Image().ClusterID(); want != "" && got != want {
		return fmt.Errorf("metadata: the metadata log in %s belongs to cluster %s, but the log dirs (meta.properties) to cluster %s; refusing to start", c.cfg.Dir, got, want)
	}
	return nil
}

// nameCluster proposes boot (the cluster record and features) until the
// image names a cluster: a controller-only voter registers no broker, but
// a new quorum of them still names its cluster.
func (c *Controller) nameCluster(ctx context.Context, boot []metadata.Record) error {
	for c.Image().ClusterID() == "" {
		// Rejected harmlessly when another voter's commits first.
		if _, err := c.propose(ctx, [][]metadata.Record{boot}); err != nil {
			return fmt.Errorf("metadata: name the cluster: %w", err)
		}
		if c.Image().ClusterID() != "" {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("metadata: no quorum leader: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// Image returns the current metadata image. It never blocks.
func (c *Controller) Image() *metadata.Image { return c.image.Load() }

// Subscribe registers fn to be called with new images, in apply order,
// after they are published (Image returns them). fn is first called, before
// Subscribe returns, with the empty image and the image current then; each
// later call's prev is the previous call's next, so diffing prev against
// next reaches every change exactly once. Images that applied while fn ran
// are coalesced: fn sees the newest. Calls come from one goroutine, one at a
// time; a slow fn delays the proposers waiting on it, never the raft loop
// (it queues images without waiting). fn must
// not call Subscribe, and must not wait on a Proposal (CreateTopics, ...):
// its result is delivered after fn returns.
func (c *Controller) Subscribe(fn func(prev, next *metadata.Image)) {
	c.subs.Lock()
	defer c.subs.Unlock()
	fn(metadata.EmptyImage(), c.subs.last)
	c.subs.fns = append(c.subs.fns, fn)
}

// Step hands a raft message from another voter to the raft loop.
func (c *Controller) Step(ctx context.Context, m *pb.Message) error {
	select {
	case c.recvc <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.runDone:
		return ErrClosed
	}
}

// ReportUnreachable tells raft that messages to peer were lost, so it
// probes the peer instead of streaming to it. It never blocks: a report
// that does not fit is dropped (the next loss reports again).
func (c *Controller) ReportUnreachable(peer int32) {
	select {
	case c.reportc <- peer:
	default:
	}
}

// ReportSnapshot tells raft that a snapshot to peer was written (sent)
// or not. Raft waits for it: until then the leader sends that follower
// nothing but heartbeats, and the follower's answer alone does not end
// the wait if the leader compacted its log meanwhile. So unlike
// ReportUnreachable it is never dropped; nor does it block.
func (c *Controller) ReportSnapshot(peer int32, sent bool) {
	c.snapReports.Lock()
	if c.snapReports.sent == nil {
		c.snapReports.sent = map[int32]bool{}
	}
	c.snapReports.sent[peer] = sent
	c.snapReports.Unlock()
	select {
	case c.snapc <- struct{}{}:
	default:
	}
}

// takeSnapshotReports returns the snapshot reports since the last call.
func (c *Controller) takeSnapshotReports() map[int32]bool {
	c.snapReports.Lock()
	defer c.snapReports.Unlock()
	m := c.snapReports.sent
	c.snapReports.sent = nil
	return m
}

// Close stops the raft loop and the notifier and closes the storage.
// Proposals still waiting fail with ErrClosed.
func (c *Controller) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.stopc)
		<-c.runDone
		c.notify.Lock()
		c.notify.closed = true
		c.notify.Unlock()
		c.signalNotifier()
		<-c.notDone
		err = c.store.Close()
	})
	return err
}

// Err returns why the controller stopped on its own (a storage failure),
// nil while it runs.
func (c *Controller) Err() error {
	if p := c.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// runNotifier is the notifier goroutine: it calls subscribers with the
// newest image, then wakes the proposals the entries up to it answered.
func (c *Controller) runNotifier() {
	defer close(c.notDone)
	for range c.notifyc {
		c.notify.Lock()
		queue, closed := c.notify.queue, c.notify.closed
		c.notify.queue = nil
		c.notify.Unlock()
		if len(queue) > 0 {
			// Subscribers see the newest image, diffed against the last
			// one they saw: what changed in between is in the diff.
			next := queue[len(queue)-1].next
			c.subs.Lock()
			for _, fn := range c.subs.fns {
				fn(c.subs.last, next)
			}
			c.subs.last = next
			c.subs.Unlock()
			for _, u := range queue {
				for _, d := range u.done {
					d.p.done <- d.results
				}
			}
		}
		if closed {
			return
		}
	}
}

// enqueue hands an image to the notifier without waiting.
func (c *Controller) enqueue(u update) {
	c.notify.Lock()
	c.notify.queue = append(c.notify.queue, u)
	c.notify.Unlock()
	c.signalNotifier()
}

func (c *Controller) signalNotifier() {
	select {
	case c.notifyc <- struct{}{}:
	default:
	}
}

// propose proposes groups of records as one entry and waits until it
// applies. It returns one result per group: nil when the group applied, or
// why not. An error means the outcome is unknown (ctx ended, the controller
// closed); the entry may still apply.
func (c *Controller) propose(ctx context.Context, groups [][]metadata.Record) ([]error, error) {
	seq := c.seq.Add(1)
	p := &pending{seq: seq, ctx: ctx, done: make(chan []error, 1)}
	p.data = metadata.AppendProposal(nil, &metadata.Proposal{Proposer: c.cfg.NodeID, Session: c.session, Seq: seq, Groups: groups})
	select {
	case c.proposec <- p:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.runDone:
		return nil, c.closedErr()
	}
	select {
	case res := <-p.done:
		return res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.runDone:
		select { // it may have applied just before the loop stopped
		case res := <-p.done:
			return res, nil
		default:
			return nil, c.closedErr()
		}
	}
}

func (c *Controller) closedErr() error {
	if err := c.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return ErrClosed
}

// codeFor maps a Go error from propose to the Kafka error a response carries.
func codeFor(err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return kerr.RequestTimedOut
	}
	return kerr.NotController
}
