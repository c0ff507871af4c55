package group

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/shards"
	"kzero/replica"
)

// Config is the broker's group coordinator configuration, with Kafka's
// keys and defaults.
type Config struct {
	NumPartitions          int32         // offsets.topic.num.partitions (50)
	ReplicationFactor      int16         // offsets.topic.replication.factor (3), capped by the live brokers
	InitialRebalanceDelay  time.Duration // group.initial.rebalance.delay.ms (3s)
	MinSessionTimeout      time.Duration // group.min.session.timeout.ms (6s)
	MaxSessionTimeout      time.Duration // group.max.session.timeout.ms (30m)
	MaxSize                int           // group.max.size (unbounded)
	OffsetsRetention       time.Duration // offsets.retention.minutes (7 days)
	RetentionCheckInterval time.Duration // offsets.retention.check.interval.ms (10m)
	OffsetMetadataMaxBytes int           // offset.metadata.max.bytes (4096)

	// KIP-848 consumer groups, group.consumer.*: the session timeout
	// (45s) and heartbeat interval (5s) members get, each kept within
	// its min and max (45s-60s, 5s-15s); the most members a group may
	// have (unbounded); the server assignors, the first the default
	// ("uniform", "range"); the migration policy between the protocols
	// for non-empty groups ("bidirectional", "upgrade", "downgrade",
	// "disabled"; default bidirectional).
	ConsumerSessionTimeout       time.Duration
	ConsumerMinSessionTimeout    time.Duration
	ConsumerMaxSessionTimeout    time.Duration
	ConsumerHeartbeatInterval    time.Duration
	ConsumerMinHeartbeatInterval time.Duration
	ConsumerMaxHeartbeatInterval time.Duration
	ConsumerMaxSize              int
	ConsumerAssignors            []string
	ConsumerMigrationPolicy      string
	// group.consumer.assignment.interval.ms (KIP-1263; 1s in the
	// broker's configuration, as Kafka; 0 computes each target
	// assignment at once) within
	// group.consumer.min/max.assignment.interval.ms (0, 15s; a max of 0
	// is the default).
	ConsumerAssignmentInterval    time.Duration
	ConsumerMinAssignmentInterval time.Duration
	ConsumerMaxAssignmentInterval time.Duration

	// KIP-1071 streams groups, group.streams.*: the session timeout
	// (45s) and heartbeat interval (5s) members get, each kept within
	// its min and max (45s-60s, 5s-15s); the most members a group may
	// have (unbounded); the standby replicas of each task (0, at most
	// group.streams.max.standby.replicas, 2 when nil: 0 is a max Kafka
	// allows); how long the assignment of
	// an empty group's first member waits for others (0 here, 3s in
	// the broker's configuration, as Kafka).
	StreamsInitialRebalanceDelay time.Duration // group.streams.initial.rebalance.delay.ms (3s; 0 none)
	StreamsSessionTimeout        time.Duration
	StreamsMinSessionTimeout     time.Duration
	StreamsMaxSessionTimeout     time.Duration
	StreamsHeartbeatInterval     time.Duration
	StreamsMinHeartbeatInterval  time.Duration
	StreamsMaxHeartbeatInterval  time.Duration
	StreamsMaxSize               int
	StreamsNumStandbyReplicas    int
	StreamsMaxStandbyReplicas    *int
	// group.streams.assignment.interval.ms (KIP-1263; 1s in the
	// broker's configuration, as Kafka; 0 computes each target
	// assignment at once) within
	// group.streams.min/max.assignment.interval.ms (0, 15s; a max of 0
	// is the default).
	StreamsAssignmentInterval    time.Duration
	StreamsMinAssignmentInterval time.Duration
	StreamsMaxAssignmentInterval time.Duration

	Share ShareConfig // KIP-932 share groups, group.share.*

	// GroupConfigs returns a group's dynamic configs (the metadata
	// image's; nil if none or if GroupConfigs is nil): the members of a
	// group loaded from the log start their sessions at its session
	// timeout, as the heartbeats that the requests' configs drive do.
	GroupConfigs func(group string) map[string]string
	// InitializeShareState, when set, initializes share partitions'
	// state at the share coordinator (InitializeShareGroupState, start
	// offset -1: the partition leader starts at share.auto.offset.reset)
	// before a share group is first assigned them, as Kafka's group
	// coordinator does; share groups then assign only initialized
	// partitions. It returns those it could not initialize (retried
	// after a later heartbeat). The coordinator calls it in the
	// background, after answering the heartbeat that recorded them as
	// initializing, with no lock held, once per such heartbeat with all
	// its partitions.
	InitializeShareState func(group string, stateEpoch int32, topics []TopicPartitions) (failed []TopicPartitions)
	// runShareInit, when set (tests), runs a background initialization
	// of share state instead of a new goroutine.
	runShareInit func(job func())

	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.NumPartitions <= 0 {
		c.NumPartitions = 50
	}
	if c.ReplicationFactor <= 0 {
		c.ReplicationFactor = 3
	}
	if c.InitialRebalanceDelay < 0 {
		c.InitialRebalanceDelay = 0
	}
	if c.MinSessionTimeout <= 0 {
		c.MinSessionTimeout = 6 * time.Second
	}
	if c.MaxSessionTimeout <= 0 {
		c.MaxSessionTimeout = 30 * time.Minute
	}
	if c.MaxSize <= 0 {
		c.MaxSize = math.MaxInt32
	}
	if c.OffsetsRetention <= 0 {
		c.OffsetsRetention = 7 * 24 * time.Hour
	}
	if c.RetentionCheckInterval <= 0 {
		c.RetentionCheckInterval = 10 * time.Minute
	}
	if c.OffsetMetadataMaxBytes <= 0 {
		c.OffsetMetadataMaxBytes = 4096
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.ConsumerSessionTimeout, 45*time.Second)
	def(&c.ConsumerMinSessionTimeout, 45*time.Second)
	def(&c.ConsumerMaxSessionTimeout, 60*time.Second)
	def(&c.ConsumerHeartbeatInterval, 5*time.Second)
	def(&c.ConsumerMinHeartbeatInterval, 5*time.Second)
	def(&c.ConsumerMaxHeartbeatInterval, 15*time.Second)
	c.ConsumerSessionTimeout = min(max(c.ConsumerSessionTimeout, c.ConsumerMinSessionTimeout), c.ConsumerMaxSessionTimeout)
	c.ConsumerHeartbeatInterval = min(max(c.ConsumerHeartbeatInterval, c.ConsumerMinHeartbeatInterval), c.ConsumerMaxHeartbeatInterval)
	c.ConsumerMinAssignmentInterval, c.ConsumerAssignmentInterval = assignmentIntervals(c.ConsumerAssignmentInterval,
		c.ConsumerMinAssignmentInterval, &c.ConsumerMaxAssignmentInterval)
	if c.ConsumerMaxSize <= 0 {
		c.ConsumerMaxSize = math.MaxInt32
	}
	var known []string
	for _, a := range c.ConsumerAssignors {
		if _, ok := assignors[a]; ok {
			known = append(known, a)
		}
	}
	if len(known) == 0 {
		known = []string{"uniform", "range"}
	}
	c.ConsumerAssignors = known
	c.setStreamsDefaults()
	if c.ConsumerMigrationPolicy == "" {
		c.ConsumerMigrationPolicy = "bidirectional"
	}
	c.Share.setDefaults()
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Coordinator is this broker's group coordinator: the shards of the
// __consumer_offsets partitions it leads. Its methods are safe for
// concurrent use; JoinGroup and SyncGroup answer through callbacks, maybe
// later and from another goroutine.
type Coordinator struct {
	cfg    Config
	policy Policy
	logger *slog.Logger
	now    func() int64 // ms
	// topics is the cluster's topics, to resolve consumer groups'
	// subscriptions (SetTopics).
	topics atomic.Pointer[topicsView]
	// purges are the purges of deleted topics' offsets in flight.
	purges sync.WaitGroup
	// table is the shards of the partitions this broker leads.
	table *shards.Table[*shard]
	// loadGate, when set (tests), runs before a shard reads its
	// partition: a test holds a shard loading with it.
	loadGate func(partition int32)

	mu     sync.Mutex // orders expiry's re-arming and Close
	expiry *time.Timer
}

// groupPolicy is the policy of a group, with its dynamic configs as
// Config.GroupConfigs gives them.
func (c *Coordinator) groupPolicy(group string) *Policy {
	if c.cfg.GroupConfigs == nil {
		return &c.policy
	}
	return c.policy.withGroupConfigs(c.cfg.GroupConfigs(group))
}

// New returns a coordinator leading no partition yet.
func New(cfg Config) *Coordinator {
	cfg.setDefaults()
	c := &Coordinator{
		cfg:    cfg,
		logger: cfg.Logger,
		now:    func() int64 { return time.Now().UnixMilli() },
		policy: Policy{
			InitialRebalanceDelay: cfg.InitialRebalanceDelay.Milliseconds(),
			MinSessionTimeout:     int32(min(cfg.MinSessionTimeout.Milliseconds(), math.MaxInt32)),
			MaxSessionTimeout:     int32(min(cfg.MaxSessionTimeout.Milliseconds(), math.MaxInt32)),
			MaxSize:               cfg.MaxSize,
			NewID:                 newUUID,

			ConsumerSessionTimeout:     int32(min(cfg.ConsumerSessionTimeout.Milliseconds(), math.MaxInt32)),
			ConsumerHeartbeatInterval:  int32(min(cfg.ConsumerHeartbeatInterval.Milliseconds(), math.MaxInt32)),
			ConsumerMaxSize:            cfg.ConsumerMaxSize,
			ConsumerAssignors:          cfg.ConsumerAssignors,
			ConsumerAssignmentInterval: cfg.ConsumerAssignmentInterval.Milliseconds(),
			UpgradeAllowed:             cfg.ConsumerMigrationPolicy == "bidirectional" || cfg.ConsumerMigrationPolicy == "upgrade",
			DowngradeAllowed:           cfg.ConsumerMigrationPolicy == "bidirectional" || cfg.ConsumerMigrationPolicy == "downgrade",
			Streams:                    cfg.streamsPolicy(),
			Share:                      cfg.Share.policy(),
		},
	}
	c.table = shards.NewTable(shards.Config{Topic: TopicName, Partitions: cfg.NumPartitions, CommitTimeout: commitTimeout},
		func(rt *shards.Shard) *shard { return newShard(c, rt) })
	c.expiry = time.AfterFunc(cfg.RetentionCheckInterval, c.expireOffsets)
	return c
}

// newUUID is a random UUID in Java's UUID.toString form, the suffix of
// Kafka's member ids.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// TopicSpec is how __consumer_offsets is created: its partition count,
// its replication factor for this many live brokers, and its configs.
func (c *Coordinator) TopicSpec(liveBrokers int) (partitions int32, replicationFactor int16, configs map[string]string) {
	rf := c.cfg.ReplicationFactor
	if liveBrokers > 0 && int(rf) > liveBrokers {
		rf = int16(liveBrokers)
	}
	return c.cfg.NumPartitions, rf, map[string]string{
		"cleanup.policy":   "compact",
		"compression.type": "producer",
		"segment.bytes":    "104857600",
	}
}

// SetPartitionCount tells the coordinator how many partitions
// __consumer_offsets has, once it exists (offsets.topic.num.partitions
// until then): groups hash over them.
func (c *Coordinator) SetPartitionCount(n int32) { c.table.SetPartitionCount(n) }

// SetTopics gives the coordinator the cluster's topics as they are now (a
// new metadata image): consumer groups resolve their subscriptions against
// them, and reassign when their subscribed topics change.
//
// The offsets of topics deleted since the last call are purged from every
// group, in the background (writes to __consumer_offsets may wait for its
// followers, which must not hold up the caller, the metadata image's).
func (c *Coordinator) SetTopics(t Topics) {
	old := c.topics.Swap(&topicsView{t})
	if old == nil || old.Topics == nil || t == nil {
		return
	}
	if gone := deletedTopics(old.Topics, t); len(gone) > 0 {
		c.purges.Add(1)
		go func() {
			defer c.purges.Done()
			c.purgeTopics(gone)
		}()
	}
}

// topicsView boxes a Topics for an atomic pointer.
type topicsView struct{ Topics }

// PartitionFor is the __consumer_offsets partition of a group.
func (c *Coordinator) PartitionFor(group string) int32 {
	return c.table.PartitionFor(group)
}

// Lead makes this broker the coordinator of the groups of p, a
// __consumer_offsets partition it now leads: their state is read from p
// in the background; until it is, their requests get
// COORDINATOR_LOAD_IN_PROGRESS. Leading a partition already led is a
// no-op (a newer leader epoch is only noted, as Kafka's group coordinator
// runtime does). It returns a channel closed once the load ended.
func (c *Coordinator) Lead(p *replica.Partition) <-chan struct{} { return c.table.Lead(p) }

// Resign drops the groups of a partition this broker no longer leads;
// requests waiting on them get NOT_COORDINATOR.
func (c *Coordinator) Resign(partition int32) { c.table.Resign(partition) }

// Leading lists the partitions this broker coordinates (loaded or not).
func (c *Coordinator) Leading() []int32 { return c.table.Leading() }

// Close resigns every partition and stops the offsets expiry.
func (c *Coordinator) Close() {
	c.table.Close()
	c.mu.Lock() // after the table closed, expireOffsets re-arms no more
	c.expiry.Stop()
	c.mu.Unlock()
}

// lock returns the group's shard, locked, or why this broker cannot serve
// the group now (an error wrapping kerr.NotCoordinator or
// kerr.CoordinatorLoadInProgress).
func (c *Coordinator) lock(group string) (*shard, error) {
	return c.table.Lock(c.PartitionFor(group))
}

// JoinGroup handles a JoinGroup; done gets the response once the
// rebalance lets it, from whichever goroutine completes it.
func (c *Coordinator) JoinGroup(r *JoinRequest, done func(JoinResult)) {
	if r.Group == "" {
		done(joinError(kerr.InvalidGroupID, r.MemberID))
		return
	}
	s, err := c.lock(r.Group)
	if err != nil {
		done(joinError(err, r.MemberID))
		return
	}
	now := c.now()
	e := s.mu.groups[r.Group]
	if e != nil && e.g.share != nil {
		s.finishLocked(e, now)
		done(joinError(kerr.InconsistentGroupProtocol, r.MemberID))
		return
	}
	if e != nil && e.g.streams != nil {
		if len(e.g.streams.members) > 0 {
			s.finishLocked(e, now)
			done(joinError(kerr.InconsistentGroupProtocol, r.MemberID))
			return
		}
		// An empty streams group becomes a classic group, as Kafka's.
		if !s.dropStreamsLocked(e, now, done, r.MemberID) {
			return
		}
	}
	if e != nil && e.g.consumer != nil {
		if len(e.g.consumer.members) > 0 {
			if c.policy.classicMembersAllowed() {
				s.joinClassicLocked(e, now, r, done)
				return
			}
			s.finishLocked(e, now)
			done(joinError(kerr.InconsistentGroupProtocol, r.MemberID))
			return
		}
		// An empty consumer group becomes a classic group.
		recs := e.g.consumer.deleteRecords()
		if err := writeRecordsLocked(s, e.g.id, recs); err != nil {
			c.logger.Warn("cannot convert consumer group to classic", "group", e.g.id, "partition", s.Partition, "err", err)
			s.finishLocked(e, now)
			done(joinError(storeErr(err), r.MemberID))
			return
		}
		replayRecords(&e.g.consumer, recs, newConsumerGroup)
	}
	created := false
	if e == nil {
		if r.MemberID != "" {
			s.Unlock()
			done(joinError(kerr.UnknownMemberID, r.MemberID))
			return
		}
		e, created = s.addLocked(r.Group, now), true
	}
	e.g.Join(now, r, done)
	if created && e.g.deletable() && e.g.Size() == 0 {
		// The join failed (a bad session timeout, no protocols): leave
		// no trace of a group that never was.
		e.g.markDead(now, kerr.UnknownMemberID)
	}
	s.finishLocked(e, now)
}

// SyncGroup handles a SyncGroup; done gets the member's assignment once
// the leader's is stored.
func (c *Coordinator) SyncGroup(r *SyncRequest, done func(SyncResult)) {
	if r.Group == "" {
		done(SyncResult{Err: kerr.InvalidGroupID})
		return
	}
	s, err := c.lock(r.Group)
	if errors.Is(err, kerr.CoordinatorLoadInProgress) {
		// The rebalance in flight is lost with the old coordinator:
		// rejoin (older clients do not expect LOAD_IN_PROGRESS here).
		err = kerr.RebalanceInProgress
	}
	if err != nil {
		done(SyncResult{Err: err})
		return
	}
	now := c.now()
	e := s.mu.groups[r.Group]
	if e == nil {
		s.Unlock()
		done(SyncResult{Err: kerr.UnknownMemberID})
		return
	}
	if e.g.consumer != nil {
		s.syncClassicLocked(e, now, r, done)
		return
	}
	e.g.Sync(now, r, done)
	s.finishLocked(e, now)
}

// Heartbeat handles a Heartbeat.
func (c *Coordinator) Heartbeat(r *HeartbeatRequest) error {
	if r.Group == "" {
		return kerr.InvalidGroupID
	}
	s, err := c.lock(r.Group)
	if errors.Is(err, kerr.CoordinatorLoadInProgress) {
		return nil // as Kafka: the member is not told to rejoin while loading
	}
	if err != nil {
		return err
	}
	now := c.now()
	e := s.mu.groups[r.Group]
	if e == nil {
		s.Unlock()
		return kerr.UnknownMemberID
	}
	if e.g.consumer != nil {
		return s.heartbeatClassicLocked(e, now, r)
	}
	err = e.g.Heartbeat(now, r)
	s.finishLocked(e, now)
	return err
}

// LeaveGroup handles a LeaveGroup: an error per member (nil for a member
// that left), or a group-level error.
func (c *Coordinator) LeaveGroup(group string, members []LeaveMember) ([]error, error) {
	if group == "" {
		return nil, kerr.InvalidGroupID
	}
	s, err := c.lock(group)
	if err != nil {
		return nil, err
	}
	now := c.now()
	e := s.mu.groups[group]
	if e == nil {
		s.Unlock()
		errs := make([]error, len(members))
		for i := range errs {
			errs[i] = kerr.UnknownMemberID
		}
		return errs, nil
	}
	if e.g.consumer != nil {
		return s.leaveClassicLocked(e, now, members), nil
	}
	errs, err := e.g.Leave(now, members)
	s.finishLocked(e, now)
	return errs, err
}

// CommitOffsets handles an OffsetCommit: an error per offset, in order
// (nil for one committed).
func (c *Coordinator) CommitOffsets(r *CommitRequest) []error {
	errs := make([]error, len(r.Offsets))
	all := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	s, err := c.lock(r.Group)
	if err != nil {
		return all(err)
	}
	now := c.now()
	e := s.mu.groups[r.Group]
	if e == nil {
		if r.Generation >= 0 {
			s.Unlock()
			if r.UnknownGroupIsNotFound {
				return all(kerr.GroupIDNotFound)
			}
			return all(kerr.IllegalGeneration)
		}
		e = s.addLocked(r.Group, now)
	}
	if err := e.g.validateCommit(r); err != nil {
		s.finishLocked(e, now)
		return all(err)
	}
	if e.g.consumer != nil {
		e.g.consumer.staleCommits(r, c.env(now).topics, errs)
	}
	if e.g.streams != nil {
		e.g.streams.staleCommits(r, errs)
	}
	recs, idx, vals := s.offsetRecordsLocked(e.g.id, r.Offsets, r.RetentionMs, now, errs)
	if len(recs) > 0 {
		base, err := s.appendLocked(recs)
		if err != nil {
			c.logger.Warn("cannot store offsets", "group", e.g.id, "partition", s.Partition, "err", err)
			err = storeErr(err)
			for _, i := range idx {
				errs[i] = err
			}
			s.finishLocked(e, now)
			return errs
		}
		for k, i := range idx {
			vals[k].at = base + int64(k)
			e.g.setOffset(cloneTP(r.Offsets[i].TopicPartition), vals[k])
		}
	}
	s.finishLocked(e, now)
	return errs
}

// commitTimeout bounds how long a coordinator write waits for the ISR to
// have it (offsets.commit.timeout.ms's default).
const commitTimeout = 5 * time.Second

// offsetRecordsLocked encodes the records of a commit's offsets in the
// shard's scratch bytes, record k for offsets[idx[k]] with value vals[k];
// an offset whose metadata is too large gets OFFSET_METADATA_TOO_LARGE in
// errs instead, and one with an error already is left out. retentionMs -1
// leaves the offsets to the retention.
func (s *shard) offsetRecordsLocked(group string, offsets []CommitOffset, retentionMs, now int64, errs []error) (recs []kv, idx []int, vals []Offset) {
	s.mu.scratch = s.mu.scratch[:0]
	recs = make([]kv, 0, len(offsets))
	idx = make([]int, 0, len(offsets))
	vals = make([]Offset, 0, len(offsets))
	for i, o := range offsets {
		if errs[i] != nil {
			continue
		}
		if len(o.Metadata) > s.c.cfg.OffsetMetadataMaxBytes {
			errs[i] = kerr.OffsetMetadataTooLarge
			continue
		}
		v := Offset{Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: strings.Clone(o.Metadata), CommitTime: now, ExpireTime: -1}
		if o.CommitTime > 0 {
			v.CommitTime = o.CommitTime
		}
		if retentionMs >= 0 {
			v.ExpireTime = now + retentionMs
		}
		var rec kv
		rec.k0 = len(s.mu.scratch)
		s.mu.scratch = appendOffsetKey(s.mu.scratch, group, o.TopicPartition)
		rec.k1, rec.v0 = len(s.mu.scratch), len(s.mu.scratch)
		s.mu.scratch = appendOffsetValue(s.mu.scratch, v)
		rec.v1 = len(s.mu.scratch)
		recs, idx, vals = append(recs, rec), append(idx, i), append(vals, v)
	}
	return recs, idx, vals
}

// cloneTP copies a partition name out of a request's buffer.
func cloneTP(tp TopicPartition) TopicPartition {
	return TopicPartition{Topic: strings.Clone(tp.Topic), Partition: tp.Partition}
}

// FetchOffsets handles one group of an OffsetFetch: the partitions asked
// for, or all the group has when topics is nil. A group that does not
// exist has no offsets.
func (c *Coordinator) FetchOffsets(group string, topics []FetchTopic) ([]FetchedTopic, error) {
	return c.FetchOffsetsFor(&FetchRequest{Group: group, Topics: topics, MemberEpoch: -1})
}

// FetchOffsetsFor handles one group of an OffsetFetch, with the options
// of later versions (require_stable, the member of a consumer group).
func (c *Coordinator) FetchOffsetsFor(r *FetchRequest) ([]FetchedTopic, error) {
	s, err := c.lock(r.Group)
	if err != nil {
		return nil, err
	}
	e := s.mu.groups[r.Group]
	if e == nil {
		s.Unlock()
		return newGroup(r.Group, &c.policy, 0).fetchOffsets(r.Topics, false), nil
	}
	if e.g.consumer != nil {
		if err := e.g.consumer.validateFetch(r.MemberID, r.MemberEpoch); err != nil {
			s.Unlock()
			return nil, err
		}
	}
	if e.g.streams != nil {
		if err := e.g.streams.validateFetch(r.MemberID, r.MemberEpoch); err != nil {
			s.Unlock()
			return nil, err
		}
	}
	out := e.g.fetchOffsets(r.Topics, r.RequireStable)
	s.Unlock()
	return out, nil
}

// DeleteOffsets handles an OffsetDelete: an error per partition (nil for
// one deleted or not committed), or a group-level error.
func (c *Coordinator) DeleteOffsets(group string, tps []TopicPartition) ([]error, error) {
	s, err := c.lock(group)
	if err != nil {
		return nil, err
	}
	now := c.now()
	e := s.mu.groups[group]
	if e == nil {
		s.Unlock()
		return nil, kerr.GroupIDNotFound
	}
	if err := e.g.validateDeleteOffsets(); err != nil {
		s.finishLocked(e, now)
		return nil, err
	}
	errs := make([]error, len(tps))
	var del []TopicPartition
	var idx []int
	for i, tp := range tps {
		if e.g.subscribedTo(tp.Topic) {
			errs[i] = kerr.GroupSubscribedToTopic
			continue
		}
		if _, ok := e.g.offsets[tp]; ok {
			del, idx = append(del, tp), append(idx, i)
		}
	}
	if len(del) > 0 {
		if err := s.appendTombstonesLocked(e.g, del, false); err != nil {
			c.logger.Warn("cannot delete offsets", "group", e.g.id, "partition", s.Partition, "err", err)
			err = storeErr(err)
			for _, i := range idx {
				errs[i] = err
			}
		} else {
			for _, tp := range del {
				delete(e.g.offsets, tp)
				e.g.dropTxnOffsets(tp)
			}
		}
	}
	s.finishLocked(e, now)
	return errs, nil
}

// appendTombstonesLocked deletes offsets of g and, with groupToo, the
// group itself (its metadata, or a consumer group's epoch and target
// assignment), in one batch.
func (s *shard) appendTombstonesLocked(g *Group, tps []TopicPartition, groupToo bool) error {
	s.mu.scratch = s.mu.scratch[:0]
	recs := make([]kv, 0, len(tps)+1)
	for _, tp := range tps {
		var r kv
		r.k0 = len(s.mu.scratch)
		s.mu.scratch = appendOffsetKey(s.mu.scratch, g.id, tp)
		r.k1, r.v1 = len(s.mu.scratch), -1
		recs = append(recs, r)
	}
	switch {
	case !groupToo:
	case g.share != nil:
		recs = appendRecordsLocked(s, recs, g.id, g.share.deleteRecords())
	case g.streams != nil:
		recs = appendRecordsLocked(s, recs, g.id, g.streams.deleteRecords())
	case g.consumer != nil:
		recs = appendRecordsLocked(s, recs, g.id, g.consumer.deleteRecords())
	default:
		recs = s.appendGroupMetadataLocked(recs, g.id, nil)
	}
	if len(recs) == 0 {
		return nil
	}
	_, err := s.appendLocked(recs)
	return err
}

// DeleteGroups handles a DeleteGroups: an error per group (nil for one
// deleted). Only empty groups are deleted, with their offsets.
func (c *Coordinator) DeleteGroups(groups []string) []error {
	errs := make([]error, len(groups))
	for i, id := range groups {
		s, err := c.lock(id)
		if err != nil {
			errs[i] = err
			continue
		}
		now := c.now()
		e := s.mu.groups[id]
		if e == nil {
			s.Unlock()
			errs[i] = kerr.GroupIDNotFound
			continue
		}
		if err := e.g.validateDelete(); err != nil {
			errs[i] = err
			s.finishLocked(e, now)
			continue
		}
		if err := s.appendTombstonesLocked(e.g, e.g.allPartitions(), true); err != nil {
			c.logger.Warn("cannot delete group", "group", e.g.id, "partition", s.Partition, "err", err)
			errs[i] = storeErr(err)
		} else {
			clear(e.g.offsets)
			clear(e.g.txnOffsets)
			e.g.markDead(now, kerr.GroupIDNotFound)
		}
		s.finishLocked(e, now)
	}
	return errs
}

// ListGroups lists the groups of every loaded partition, with
// COORDINATOR_LOAD_IN_PROGRESS when some partition is still loading.
func (c *Coordinator) ListGroups() ([]Listing, error) {
	var out []Listing
	var err error
	for _, s := range c.table.All() {
		s.Lock()
		switch s.StateLocked() {
		case shards.Loading:
			err = kerr.CoordinatorLoadInProgress
		case shards.Active:
			for _, e := range s.mu.groups {
				out = append(out, e.g.Listing())
			}
		}
		s.Unlock()
	}
	slices.SortFunc(out, func(a, b Listing) int { return strings.Compare(a.Group, b.Group) })
	return out, err
}

// DescribeGroup describes a group; found is false when it does not exist.
func (c *Coordinator) DescribeGroup(group string) (d Description, found bool, err error) {
	s, err := c.lock(group)
	if err != nil {
		return Description{}, false, err
	}
	defer s.Unlock()
	e := s.mu.groups[group]
	if e == nil {
		return Description{State: Dead}, false, nil
	}
	if e.g.share != nil {
		return Description{State: Dead}, false, nil // not a classic group
	}
	if e.g.consumer != nil {
		return e.g.consumer.describeClassic(e.g.State(), &c.policy, c.env(c.now()).topics), true, nil
	}
	if e.g.streams != nil {
		// As Kafka: DescribeGroups does not describe streams groups
		// (Dead; GROUP_ID_NOT_FOUND from v6).
		return Description{State: Dead}, false, nil
	}
	return e.g.Describe(), true, nil
}

// expireOffsets drops offsets past offsets.retention.minutes, and the
// empty groups left without offsets, in every loaded partition; then
// schedules itself again.
func (c *Coordinator) expireOffsets() {
	if c.table.Closed() {
		return
	}
	for _, s := range c.table.All() {
		s.expire(c.now(), c.cfg.OffsetsRetention.Milliseconds())
	}
	c.mu.Lock()
	if !c.table.Closed() {
		c.expiry.Reset(c.cfg.RetentionCheckInterval)
	}
	c.mu.Unlock()
}

// expire runs the offsets expiry over the shard's groups.
func (s *shard) expire(now, retention int64) {
	if !s.LockActive() {
		return
	}
	var ready []func()
	for _, e := range s.mu.groups {
		expired := e.g.expireOffsets(now, retention)
		dead := e.g.deletable()
		if len(expired) == 0 && !dead {
			continue
		}
		if err := s.appendTombstonesLocked(e.g, expired, dead); err != nil {
			s.c.logger.Warn("cannot write expired offsets' tombstones", "group", e.g.id, "partition", s.Partition, "err", err)
			continue
		}
		if dead {
			e.g.markDead(now, kerr.GroupIDNotFound)
			ready = append(ready, s.settleLocked(e, now)...)
		}
	}
	s.Unlock()
	for _, f := range ready {
		f()
	}
}
