package group

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ShareConfig is the broker's configuration of KIP-932 share groups, with
// Kafka's keys and defaults.
type ShareConfig struct {
	SessionTimeout       time.Duration // group.share.session.timeout.ms (45s)
	MinSessionTimeout    time.Duration // group.share.min.session.timeout.ms (45s)
	MaxSessionTimeout    time.Duration // group.share.max.session.timeout.ms (60s)
	HeartbeatInterval    time.Duration // group.share.heartbeat.interval.ms (5s)
	MinHeartbeatInterval time.Duration // group.share.min.heartbeat.interval.ms (5s)
	MaxHeartbeatInterval time.Duration // group.share.max.heartbeat.interval.ms (15s)
	MaxSize              int           // group.share.max.size (200)
	Bounds               ShareBounds   // the bounds of share.* group configs
	// group.share.assignment.interval.ms (KIP-1263; 1s in the broker's
	// configuration, as Kafka; 0 computes each target assignment at
	// once) within group.share.min/max.assignment.interval.ms (0, 15s;
	// a max of 0 is the default).
	AssignmentInterval    time.Duration
	MinAssignmentInterval time.Duration
	MaxAssignmentInterval time.Duration
}

func (c *ShareConfig) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.SessionTimeout, 45*time.Second)
	def(&c.MinSessionTimeout, 45*time.Second)
	def(&c.MaxSessionTimeout, 60*time.Second)
	def(&c.HeartbeatInterval, 5*time.Second)
	def(&c.MinHeartbeatInterval, 5*time.Second)
	def(&c.MaxHeartbeatInterval, 15*time.Second)
	c.SessionTimeout = min(max(c.SessionTimeout, c.MinSessionTimeout), c.MaxSessionTimeout)
	c.HeartbeatInterval = min(max(c.HeartbeatInterval, c.MinHeartbeatInterval), c.MaxHeartbeatInterval)
	if c.MaxSize <= 0 {
		c.MaxSize = 200
	}
	c.MinAssignmentInterval, c.AssignmentInterval = assignmentIntervals(c.AssignmentInterval, c.MinAssignmentInterval, &c.MaxAssignmentInterval)
}

func (c *ShareConfig) policy() SharePolicy {
	ms := func(d time.Duration) int32 { return int32(min(d.Milliseconds(), math.MaxInt32)) }
	return SharePolicy{SessionTimeout: ms(c.SessionTimeout), HeartbeatInterval: ms(c.HeartbeatInterval), MaxSize: c.MaxSize,
		AssignmentInterval: c.AssignmentInterval.Milliseconds()}
}

// SharePolicy is what the configuration says about every share group.
type SharePolicy struct {
	SessionTimeout    int32 // ms
	HeartbeatInterval int32 // ms
	MaxSize           int
	// AssignmentInterval (ms, group.share.assignment.interval.ms,
	// KIP-1263): a group's target assignment is computed again at most
	// once per interval; a heartbeat that bumps the group epoch sooner
	// keeps the last target, and a later heartbeat computes the next.
	AssignmentInterval int64
}

// ShareType is the type ListGroups gives share groups, and their protocol
// type.
const ShareType = "share"

// ShareGroupHeartbeat handles a ShareGroupHeartbeat (KIP-932): a member
// joins (epoch 0), heartbeats, or leaves (-1). The records of the change
// are written to the group's partition before the response, and applied
// once written; with an initializer, the share state of the partitions
// they record as initializing is initialized in the background after
// that (startShareInit). A join creates a group that does not exist; a
// group of another type gets GROUP_ID_NOT_FOUND.
func (c *Coordinator) ShareGroupHeartbeat(r *ShareHeartbeatRequest) ShareHeartbeatResult {
	if msg, err := validateShareHeartbeat(r); err != nil {
		return ShareHeartbeatResult{Err: err, ErrMessage: msg}
	}
	s, err := c.lock(r.Group)
	if err != nil {
		return ShareHeartbeatResult{Err: err}
	}
	now := c.now()
	env := c.env(now)
	env.policy = env.policy.withGroupConfigs(r.Configs)
	e := s.mu.groups[r.Group]
	created := false
	switch {
	case e == nil && r.MemberEpoch != 0:
		s.Unlock()
		return ShareHeartbeatResult{Err: kerr.GroupIDNotFound, ErrMessage: fmt.Sprintf("Group %s not found.", r.Group)}
	case e == nil:
		e, created = s.addLocked(r.Group, now), true
		e.g.share = newShareGroup()
	case e.g.share == nil:
		s.Unlock()
		return ShareHeartbeatResult{Err: kerr.GroupIDNotFound, ErrMessage: fmt.Sprintf("Group %s is not a share group.", r.Group)}
	}
	sg := e.g.share
	var out shareOutcome
	if r.MemberEpoch == -1 {
		out = sg.leave(&env, r)
	} else {
		out = sg.heartbeat(&env, r)
	}
	res := out.res
	if res.Err == nil && len(out.recs) > 0 {
		if err := writeRecordsLocked(s, e.g.id, out.recs); err != nil {
			s.c.logger.Warn("cannot store share group records", "group", e.g.id, "partition", s.Partition, "err", err)
			res = ShareHeartbeatResult{Err: storeErr(err)}
		} else {
			replayRecords(&e.g.share, out.recs, newShareGroup)
		}
	}
	if res.Err != nil && created {
		delete(s.mu.groups, e.g.id) // the group never was
		s.Unlock()
		return res
	}
	if res.Err == nil && e.g.share != nil {
		e.g.share.apply(&out)
		if len(out.initialize) > 0 {
			c.startShareInit(e.g.id, out.initEpoch, out.initialize)
		}
	}
	s.finishLocked(e, now)
	return res
}

// initializeShareState initializes the share state of todo (the
// partitions a heartbeat of group recorded as initializing) at the share
// coordinator, in one call (Config.InitializeShareState), with no lock
// held, then records the outcome: those initialized, with a group epoch
// bump, and those that failed as no longer initializing. It runs in the
// background (Config.runShareInit), after the heartbeat that recorded
// them was answered.
func (c *Coordinator) initializeShareState(group string, epoch int32, todo []stateTopic) {
	tps := make([]TopicPartitions, len(todo))
	for i, t := range todo {
		tps[i] = TopicPartitions{TopicID: t.id, Topic: t.name, Partitions: t.partitions}
	}
	failed := tpBuilder{}
	for _, t := range c.cfg.InitializeShareState(group, epoch, tps) {
		for _, p := range t.Partitions {
			failed.add(t.TopicID, p)
		}
	}
	c.shareStateInitialized(group, todo, failed.set())
}

// shareStateInitialized records the outcome of a background
// initialization of todo's share state (initializeShareState).
func (c *Coordinator) shareStateInitialized(group string, todo []stateTopic, failed tpSet) {
	s, err := c.lock(group)
	if err != nil {
		c.logger.Info("share partitions initialized, but the group's coordinator is gone", "group", group, "err", err)
		return // the next coordinator initializes them again
	}
	now := c.now()
	e := s.mu.groups[group]
	if e == nil || e.g.share == nil {
		s.Unlock()
		return // deleted meanwhile
	}
	sg := e.g.share
	recs := sg.initializedRecords(todo, failed)
	// Whatever happens to the records below, these are no longer being
	// initialized here: one left initializing is retried.
	sg.setInFlight(todo, false)
	if len(recs) > 0 {
		if err := writeRecordsLocked(s, e.g.id, recs); err != nil {
			s.c.logger.Warn("cannot store share group records", "group", e.g.id, "partition", s.Partition, "err", err)
		} else {
			replayRecords(&e.g.share, recs, newShareGroup)
		}
	}
	s.finishLocked(e, now)
}

// startShareInit starts the background initialization of todo's share
// state.
func (c *Coordinator) startShareInit(group string, epoch int32, todo []stateTopic) {
	group = strings.Clone(group)
	job := func() { c.initializeShareState(group, epoch, todo) }
	if c.cfg.runShareInit != nil {
		c.cfg.runShareInit(job)
		return
	}
	go job()
}

// ShareTopicsDeleting records that the share state of a share group's
// topics (by id, with their names) is being deleted
// (DeleteShareGroupOffsets), as Kafka's group coordinator does: they are
// no longer initialized (a later heartbeat initializes them again) and,
// until done, are being deleted. Nothing is recorded without an
// initializer (Config.InitializeShareState) or for a group that is not a
// share group.
func (c *Coordinator) ShareTopicsDeleting(group string, topics map[[16]byte]string, done bool) error {
	if len(topics) == 0 {
		return nil
	}
	return c.recordShareState(group, func(m *shareStateMeta) shareStateMeta {
		if done {
			return m.withoutDeleting(topics)
		}
		return m.withDeleting(topics)
	})
}

// recordShareState writes a share group's share state record (type 15)
// with the state next makes of its current one, and applies it. Nothing is
// recorded without an initializer (Config.InitializeShareState) or for a
// group that is not a share group.
func (c *Coordinator) recordShareState(group string, next func(*shareStateMeta) shareStateMeta) error {
	if c.cfg.InitializeShareState == nil {
		return nil
	}
	s, err := c.lock(group)
	if err != nil {
		return err
	}
	defer s.Unlock()
	e := s.mu.groups[group]
	if e == nil || e.g.share == nil {
		return nil
	}
	recs := []shareRecord{{typ: shareStatePartitionType, state: next(&e.g.share.state)}}
	if err := writeRecordsLocked(s, e.g.id, recs); err != nil {
		return storeErr(err)
	}
	replayRecords(&e.g.share, recs, newShareGroup)
	return nil
}

// ShareStatesInitialized records that the share state of a share group's
// partitions was initialized outside a heartbeat (AlterShareGroupOffsets),
// as Kafka's group coordinator does: they are initialized, and listed as
// the group's share partitions (ShareInitialized). Nothing is recorded
// without an initializer (Config.InitializeShareState) or for a group that
// is not a share group.
func (c *Coordinator) ShareStatesInitialized(group string, topics []TopicPartitions) error {
	if len(topics) == 0 {
		return nil
	}
	b, names := tpBuilder{}, map[topicID]string{}
	for _, t := range topics {
		names[t.TopicID] = t.Topic
		for _, p := range t.Partitions {
			b.add(t.TopicID, p)
		}
	}
	var done []stateTopic
	now := c.now()
	for id, ps := range b.set() {
		done = append(done, stateTopic{id: id, name: names[id], partitions: ps, createdAt: now})
	}
	slices.SortFunc(done, func(a, b stateTopic) int { return compareIDs(a.id, b.id) })
	return c.recordShareState(group, func(m *shareStateMeta) shareStateMeta { return m.withInitialized(done, nil) })
}

// ShareInitialized lists the partitions of a share group whose share state
// is initialized, by topic id with the name recorded with them: what
// DescribeShareGroupOffsets describes when it names no topics (Kafka's
// initialized share group partitions). GROUP_ID_NOT_FOUND for a group that
// does not exist or is of another type.
func (c *Coordinator) ShareInitialized(group string) ([]TopicPartitions, error) {
	s, err := c.lock(group)
	if err != nil {
		return nil, err
	}
	defer s.Unlock()
	e := s.mu.groups[group]
	if e == nil || e.g.share == nil {
		return nil, kerr.GroupIDNotFound
	}
	var out []TopicPartitions
	for _, t := range e.g.share.state.initialized {
		out = append(out, TopicPartitions{TopicID: t.id, Topic: t.name, Partitions: slices.Clone(t.partitions)})
	}
	return out, nil
}

// expireShareLocked fences the members of the group whose session
// expired: one batch, one group epoch bump.
func (s *shard) expireShareLocked(e *entry, now int64) {
	g := e.g
	gone := g.share.expired(now)
	if len(gone) == 0 {
		return
	}
	env := s.c.env(now)
	recs := g.share.fenceRecords(&env, gone...)
	if err := writeRecordsLocked(s, g.id, recs); err != nil {
		s.c.logger.Warn("cannot remove expired share group members", "group", g.id, "partition", s.Partition, "err", err)
		for _, m := range gone {
			m.sessionDeadline = now + 1000 // try again later
		}
		return
	}
	for _, m := range gone {
		s.c.logger.Info("share group member expired", "group", g.id, "member", m.id)
	}
	replayRecords(&g.share, recs, newShareGroup)
}

// ShareGroupDescription is a share group as ShareGroupDescribe shows it.
type ShareGroupDescription struct {
	Err             error
	ErrMessage      string // the text Kafka sends with Err, if any
	State           State
	Epoch           int32
	AssignmentEpoch int32
	AssignorName    string
	Members         []ShareMemberDescription
}

// ShareMemberDescription is one member of a share group.
type ShareMemberDescription struct {
	MemberID, RackID     string
	MemberEpoch          int32
	ClientID, ClientHost string
	SubscribedTopicNames []string
	Assignment           []TopicPartitions // with topic names
}

// DescribeShareGroup describes a share group (ShareGroupDescribe):
// GROUP_ID_NOT_FOUND for a group that does not exist or is of another
// type.
func (c *Coordinator) DescribeShareGroup(group string) ShareGroupDescription {
	if group == "" {
		return ShareGroupDescription{Err: kerr.InvalidGroupID, State: Dead}
	}
	s, err := c.lock(group)
	if err != nil {
		return ShareGroupDescription{Err: err, State: Dead}
	}
	defer s.Unlock()
	e := s.mu.groups[group]
	switch {
	case e == nil:
		return ShareGroupDescription{Err: kerr.GroupIDNotFound, ErrMessage: fmt.Sprintf("Group %s not found.", group), State: Dead}
	case e.g.share == nil:
		return ShareGroupDescription{Err: kerr.GroupIDNotFound, ErrMessage: fmt.Sprintf("Group %s is not a share group.", group), State: Dead}
	}
	sg := e.g.share
	topics := c.env(c.now()).topics
	d := ShareGroupDescription{State: e.g.State(), Epoch: sg.epoch, AssignmentEpoch: sg.assignmentEpoch, AssignorName: "simple"}
	for _, m := range sg.sortedMembers() {
		d.Members = append(d.Members, ShareMemberDescription{
			MemberID: m.id, RackID: m.rackID, MemberEpoch: m.current.epoch,
			ClientID: m.clientID, ClientHost: m.clientHost,
			SubscribedTopicNames: slices.Clone(m.topics),
			Assignment:           named(m.current.assigned, topics),
		})
	}
	return d
}

// ShareGroupStatus says whether group is a share group this broker
// coordinates: whether it has no members, and its group epoch (the state
// epoch Kafka's group coordinator initializes share partition state with:
// AlterShareGroupOffsets); GROUP_ID_NOT_FOUND for a group that does not
// exist or is of another type; the coordinator errors. With create, a
// group that does not exist is created empty (AlterShareGroupOffsets on a
// new group, as Kafka).
func (c *Coordinator) ShareGroupStatus(group string, create bool) (empty bool, epoch int32, err error) {
	if group == "" {
		return false, 0, kerr.InvalidGroupID
	}
	s, err := c.lock(group)
	if err != nil {
		return false, 0, err
	}
	now := c.now()
	e := s.mu.groups[group]
	switch {
	case e == nil && create:
		e = s.addLocked(group, now)
		recs := []shareRecord{{typ: shareEpochType}}
		if err := writeRecordsLocked(s, e.g.id, recs); err != nil {
			delete(s.mu.groups, e.g.id)
			s.Unlock()
			return false, 0, storeErr(err)
		}
		replayRecords(&e.g.share, recs, newShareGroup)
	case e == nil || e.g.share == nil:
		s.Unlock()
		return false, 0, kerr.GroupIDNotFound
	}
	empty, epoch = len(e.g.share.members) == 0, e.g.share.epoch
	s.finishLocked(e, now)
	return empty, epoch, nil
}
