package group

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The StreamsGroupHeartbeat logic of KIP-1071, as Kafka's group
// coordinator runs it. A member joins with epoch 0, its topology, process
// id and endpoint, then heartbeats with its epoch and the tasks it owns.
// A heartbeat:
//
//  1. updates the member's metadata (a new or changed member bumps the
//     group epoch) and, the first time, the group's topology;
//  2. configures the topology against the cluster's topics
//     (configureTopology): a changed metadata hash, or a topology that
//     became ready or stopped being so, or another num.standby.replicas,
//     bump the group epoch; missing source or internal topics are
//     statuses in the response, and missing internal topics are handed to
//     the caller to create;
//  3. when the group epoch is past the target assignment's, runs the
//     assignor (streams_assignor.go) for every member;
//  4. reconciles the member towards its target as for consumer groups:
//     tasks it must give up are first revoked (it stays at its epoch,
//     UNREVOKED_TASKS, until a heartbeat no longer lists them as owned);
//     then it moves to the target epoch with the tasks no other member
//     holds any more (an active task held by another member, or a
//     standby or warm-up task active on another member of its process,
//     waits: UNRELEASED_TASKS).
//
// Static membership (instance ids, epoch -2; Kafka 4.4 adds it), task
// offsets, warm-up tasks and source topic regular expressions are
// refused with INVALID_REQUEST, as Kafka 4.3 refuses them
// (validateStreamsHeartbeat); topology updates (a new topology epoch)
// likewise. No warm-up task is ever assigned: Kafka 4.3's sticky task
// assignor hands out active and standby tasks only, and its heartbeat
// response carries the acceptable recovery lag and task offset interval
// as constants no member of a 4.3 group acts on. The assignment of an empty group's first member waits
// group.streams.initial.rebalance.delay.ms for the others
// (ASSIGNMENT_DELAYED), as Kafka 4.2 added.

// StreamsPolicy is what the broker's configuration says about streams
// groups.
type StreamsPolicy struct {
	InitialDelay      int64 // ms, group.streams.initial.rebalance.delay.ms
	SessionTimeout    int32 // ms, group.streams.session.timeout.ms
	HeartbeatInterval int32 // ms, group.streams.heartbeat.interval.ms
	MaxSize           int   // group.streams.max.size
	NumStandbys       int32 // group.streams.num.standby.replicas
	// AssignmentInterval (ms, group.streams.assignment.interval.ms,
	// KIP-1263): a group's target assignment is computed again at most
	// once per interval; a heartbeat that bumps the group epoch sooner
	// keeps the last target, and a later heartbeat computes the next.
	AssignmentInterval int64
}

// Streams member epochs of the request.
const (
	streamsJoinEpoch        = 0
	streamsLeaveEpoch       = -1
	streamsStaticLeaveEpoch = -2
)

// Response constants Kafka 4.3 sends with every heartbeat: the
// acceptable recovery lag of warm-up tasks and the task offset interval,
// at the defaults Kafka 4.4 makes the group configs
// streams.acceptable.recovery.lag and streams.task.offset.interval.ms.
// A 4.3 group has neither warm-up tasks nor task offsets, so members
// read them and do nothing with them.
const (
	acceptableRecoveryLag = 10000
	taskOffsetInterval    = 60000
)

// StreamsHeartbeatResult is a StreamsGroupHeartbeat response and the
// internal topics the broker should create (as Kafka's
// StreamsGroupHeartbeatResult.creatableTopics). Response is complete but
// for its ErrorCode: the handler sets it from Err.
type StreamsHeartbeatResult struct {
	Err      error
	Response *kmsg.StreamsGroupHeartbeatResponse
	Create   []StreamsTopic
}

// streamsFail is a heartbeat that failed with err; msg, when not empty,
// is the response's error message.
func streamsFail(err error, msg string) StreamsHeartbeatResult {
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	if msg != "" {
		resp.ErrorMessage = &msg
	}
	return StreamsHeartbeatResult{Err: err, Response: resp}
}

// validateStreamsHeartbeat checks a request as Kafka 4.3's
// GroupCoordinatorService does before looking at the group: first the
// features its streams groups do not support (static membership, task
// offsets, warm-up tasks, source topic regular expressions), then the
// request's shape. Kafka 4.3 assigns no warm-up tasks and keeps no task
// offsets (KIP-1071's warm-ups arrive in 4.4 with heartbeat v1, which
// reports them), so a member that reports either is refused.
func validateStreamsHeartbeat(r *kmsg.StreamsGroupHeartbeatRequest) (string, error) {
	invalid := func(msg string) (string, error) { return msg, kerr.InvalidRequest }
	switch {
	case r.InstanceID != nil:
		return invalid("Static membership is not yet supported.")
	case r.TaskOffsets != nil:
		return invalid("TaskOffsets are not supported yet.")
	case r.TaskEndOffsets != nil:
		return invalid("TaskEndOffsets are not supported yet.")
	case len(r.WarmupTasks) > 0:
		return invalid("WarmupTasks are not supported yet.")
	}
	if r.Topology != nil {
		for _, s := range r.Topology.Subtopologies {
			if len(s.SourceTopicRegex) > 0 {
				return invalid("Regular expressions for source topics are not supported yet.")
			}
		}
	}
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch {
	case blank(r.MemberID):
		return invalid("MemberId can't be empty.")
	case blank(r.Group):
		return invalid("GroupId can't be empty.")
	case r.RackID != nil && blank(*r.RackID):
		return invalid("RackId can't be empty.")
	}
	switch {
	case r.MemberEpoch == streamsJoinEpoch:
		// A joining member reports empty task lists: null ones are
		// refused too, as Kafka's throwIfNotEmptyCollection does.
		switch {
		case r.RebalanceTimeoutMillis == -1:
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		case r.ActiveTasks == nil || len(r.ActiveTasks) > 0:
			return invalid("ActiveTasks must be empty when (re-)joining.")
		case r.StandbyTasks == nil || len(r.StandbyTasks) > 0:
			return invalid("StandbyTasks must be empty when (re-)joining.")
		case r.WarmupTasks == nil:
			return invalid("WarmupTasks must be empty when (re-)joining.")
		case r.Topology == nil:
			return invalid("Topology must be non-null when (re-)joining.")
		}
		for _, s := range r.Topology.Subtopologies {
			for _, t := range s.StateChangelogTopics {
				if t.NumPartitions != 0 {
					return fmt.Sprintf(
						"Changelog topic %s must have an undefined partition count, but it is set to %d.", t.Topic, t.NumPartitions), kerr.StreamsInvalidTopology
				}
			}
		}
	case r.MemberEpoch == streamsStaticLeaveEpoch:
		return invalid("InstanceId can't be null.") // a non-null one was refused above
	case r.MemberEpoch < streamsStaticLeaveEpoch:
		return invalid(fmt.Sprintf("MemberEpoch is %d, but must be greater than or equal to -2.", r.MemberEpoch))
	}
	if r.ActiveTasks != nil || r.StandbyTasks != nil || r.WarmupTasks != nil {
		if r.ActiveTasks == nil || r.StandbyTasks == nil || r.WarmupTasks == nil {
			return invalid("If one task-type is non-null, all must be non-null.")
		}
	}
	if r.MemberEpoch != streamsJoinEpoch && r.Topology != nil {
		return invalid("Topology can only be provided when (re-)joining.")
	}
	return "", nil
}

// streamsOutcome is the outcome of a heartbeat: the records to write, the
// response, and what to apply once they are written (the member's
// timers, which are not persisted).
type streamsOutcome struct {
	recs   []streamsRecord
	res    StreamsHeartbeatResult
	member string // "" when nothing is to be applied
	left   bool

	sessionDeadline int64
	revoke          revokeTimer
	revokeDeadline  int64
	shutdown        bool // the member asked the application to shut down
	endpointEpoch   int32
	delayUntil      int64 // the group's initial rebalance delay ends then; 0 none
}

// streamsEnv is what the heartbeat logic reads besides the group.
type streamsEnv struct {
	now    int64
	policy *StreamsPolicy
	topics Topics
	// The request's client, and the member that asked the application
	// to shut down ("" none).
	clientID, clientHost string
	shutdownBy           string
}

// heartbeat handles a join or heartbeat (epoch >= 0) of a validated
// request.
func (sg *streamsGroup) heartbeat(env *streamsEnv, r *kmsg.StreamsGroupHeartbeatRequest) streamsOutcome {
	old := sg.members[r.MemberID]
	if old == nil && r.MemberEpoch != streamsJoinEpoch {
		return streamsOutcome{res: streamsFail(kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of the group.", r.MemberID))}
	}
	owned := ownedTasks(r)
	if old != nil && r.MemberEpoch != streamsJoinEpoch {
		if msg := checkStreamsEpoch(old, r.MemberEpoch, owned); msg != "" {
			return streamsOutcome{res: streamsFail(kerr.FencedMemberEpoch, msg)}
		}
	}
	if old == nil && len(sg.members) >= env.policy.MaxSize {
		return streamsOutcome{res: streamsFail(kerr.GroupMaxSizeReached,
			fmt.Sprintf("The streams group has reached its maximum capacity of %d members.", env.policy.MaxSize))}
	}
	memberID := r.MemberID
	if old != nil {
		memberID = old.id
	} else {
		memberID = strings.Clone(memberID)
	}

	// 1. The member's metadata and the topology.
	meta := streamsMemberMeta{rebalanceTimeout: -1}
	if old != nil {
		meta = old.streamsMemberMeta
	}
	if r.RackID != nil {
		meta.rackID = strings.Clone(*r.RackID)
	}
	if r.RebalanceTimeoutMillis != -1 {
		meta.rebalanceTimeout = r.RebalanceTimeoutMillis
	}
	if r.Topology != nil {
		meta.topologyEpoch = r.Topology.Epoch
	}
	meta.clientID, meta.clientHost = env.clientID, env.clientHost
	if r.ProcessID != nil {
		meta.processID = strings.Clone(*r.ProcessID)
	}
	if r.UserEndpoint != nil {
		meta.endpoint = &hostPort{host: strings.Clone(r.UserEndpoint.Host), port: r.UserEndpoint.Port}
	}
	if r.ClientTags != nil {
		tags := make([]keyValue, len(r.ClientTags))
		for i, t := range r.ClientTags {
			tags[i] = keyValue{strings.Clone(t.Key), strings.Clone(t.Value)}
		}
		slices.SortFunc(tags, func(a, b keyValue) int { return strings.Compare(a.key, b.key) })
		meta.clientTags = tags
	}
	var recs []streamsRecord
	bump := false
	if old == nil || !meta.equal(&old.streamsMemberMeta) {
		recs = append(recs, streamsRecord{typ: streamsMemberType, member: memberID, meta: meta})
		bump = true
	}
	var statuses []kmsg.StreamsGroupHeartbeatResponseStatus
	topology := sg.topology
	if r.Topology != nil {
		fromReq := topologyFromRequest(r.Topology)
		switch {
		case topology == nil:
			topology = fromReq
			recs = append(recs, streamsRecord{typ: streamsTopologyType, topology: topology})
		case topology.epoch > fromReq.epoch:
			// A member with a stale topology: told so below.
		case !topology.equal(fromReq):
			return streamsOutcome{res: streamsFail(kerr.InvalidRequest, "Topology updates are not supported yet.")}
		}
	}
	if topology != nil && meta.topologyEpoch < topology.epoch {
		statuses = append(statuses, status(statusStaleTopology, fmt.Sprintf(
			"The member's topology epoch %d is behind the group's topology epoch %d.", meta.topologyEpoch, topology.epoch)))
	}

	// 2. The topology against the cluster's topics.
	var cfg *configuredTopology
	if topology == sg.topology {
		cfg = sg.configure(env.topics)
	} else {
		cfg = configureTopology(topology, env.topics)
	}
	validated := int32(-1)
	if cfg.ready() {
		validated = topology.epoch
		for _, ts := range [][]kmsg.TaskIDs{r.ActiveTasks, r.StandbyTasks, r.WarmupTasks} {
			if msg := invalidTasks(cfg, ts); msg != "" {
				return streamsOutcome{res: streamsFail(kerr.InvalidRequest, msg)}
			}
		}
	}
	standbys := env.policy.NumStandbys
	bump = bump || sg.epoch == 0 || cfg.hash != sg.metaHash || validated != sg.validatedEpoch || standbys != sg.standbys
	epoch := sg.epoch
	delayUntil := sg.delayUntil
	if bump {
		// The first member of an empty group: the assignment waits
		// group.streams.initial.rebalance.delay.ms for the others, and
		// the epoch moves by two, as Kafka's.
		if old == nil && len(sg.members) == 0 && env.policy.InitialDelay > 0 {
			epoch++
			delayUntil = env.now + env.policy.InitialDelay
		}
		epoch++
		recs = append(recs, streamsRecord{typ: streamsEpochType, epoch: epoch, metaHash: cfg.hash, validatedEpoch: validated, standbys: standbys})
	}

	// 3. The target assignment.
	targetEpoch, target := sg.assignmentEpoch, sg.target[memberID]
	switch {
	case epoch > sg.assignmentEpoch && delayUntil > env.now:
		targetEpoch, target = max(1, sg.assignmentEpoch), taskAssignment{}
		statuses = append(statuses, status(statusAssignmentDelayed, "Assignment delayed due to the configured initial rebalance delay."))
	case epoch > sg.assignmentEpoch && assignable(sg.assignedAt, env.now, env.policy.AssignmentInterval):
		var assignees []streamsAssignee
		for _, m := range sg.sortedMembers() {
			if m.id != memberID {
				assignees = append(assignees, streamsAssignee{id: m.id, process: m.processID, prev: sg.target[m.id]})
			}
		}
		assignees = append(assignees, streamsAssignee{id: memberID, process: meta.processID, prev: sg.target[memberID]})
		targets, trecs := sg.assign(cfg, assignees, standbys, epoch, env.now)
		recs = append(recs, trecs...)
		targetEpoch, target = epoch, targets[memberID]
	}

	// 4. Reconciliation.
	var cur streamsCurrent
	if old != nil {
		cur = old.current
	}
	next := reconcileStreams(cur, targetEpoch, target, owned, sg.blocker(memberID, meta.processID))
	if old == nil || !next.equal(&cur) {
		recs = append(recs, streamsRecord{typ: streamsCurrentType, member: memberID, current: next})
	}

	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.MemberID, resp.MemberEpoch = memberID, next.epoch
	resp.HeartbeatIntervalMillis = env.policy.HeartbeatInterval
	resp.AcceptableRecoveryLagLegacy, resp.TaskOffsetIntervalMillis = acceptableRecoveryLag, taskOffsetInterval
	if r.MemberEpoch == streamsJoinEpoch || !next.assigned.equal(cur.assigned) {
		resp.ActiveTasks = taskIDs(next.assigned.active)
		resp.StandbyTasks = taskIDs(next.assigned.standby)
		resp.WarmupTasks = taskIDs(next.assigned.warmup)
	}
	endpointEpoch := sg.endpointEpoch
	if meta.endpoint != nil && (r.MemberEpoch == streamsJoinEpoch || !next.assigned.equal(cur.assigned)) {
		endpointEpoch++ // the partitions behind an endpoint changed
	}
	resp.EndpointInformationEpoch = endpointEpoch
	if r.EndpointInformationEpoch != endpointEpoch {
		resp.PartitionsByUserEndpoint = sg.endpoints(cfg, env.topics, memberID, &meta, next.assigned)
	}
	if cfg.status >= 0 {
		statuses = append(statuses, status(cfg.status, cfg.detail))
	}
	shutdownBy := env.shutdownBy
	if r.ShutdownApplication && shutdownBy == "" {
		shutdownBy = memberID // the first to ask is named
	}
	if shutdownBy != "" {
		statuses = append(statuses, status(4, fmt.Sprintf(
			"Streams group member %s encountered a fatal error and requested a shutdown for the entire application.", shutdownBy)))
	}
	resp.Status = statuses
	out := streamsOutcome{recs: recs, res: StreamsHeartbeatResult{Response: resp, Create: cfg.create}, member: memberID, delayUntil: delayUntil,
		sessionDeadline: env.now + int64(env.policy.SessionTimeout), revokeDeadline: env.now + int64(max(meta.rebalanceTimeout, 0)),
		shutdown: r.ShutdownApplication, endpointEpoch: endpointEpoch}
	switch {
	case next.state != streamsUnrevoked:
		out.revoke = revokeStop
	case cur.state != streamsUnrevoked || cur.epoch != next.epoch:
		out.revoke = revokeStart
	}
	return out
}

// assign runs the assignor over assignees (the members, with the one
// heartbeating as it will be) for the topology as configured: the
// targets, and the records of those that changed and of the target
// epoch.
func (sg *streamsGroup) assign(cfg *configuredTopology, assignees []streamsAssignee, standbys, epoch int32, now int64) (map[string]taskAssignment, []streamsRecord) {
	var tasks map[string]int32
	if cfg.ready() {
		tasks = cfg.tasks
	}
	slices.SortFunc(assignees, func(a, b streamsAssignee) int { return strings.Compare(a.id, b.id) })
	targets := assignStreams(tasks, assignees, int(standbys))
	var recs []streamsRecord
	for _, m := range assignees {
		t := targets[m.id]
		if cur, ok := sg.target[m.id]; !ok || !cur.equal(t) {
			recs = append(recs, streamsRecord{typ: streamsTargetMemberType, member: m.id, target: t})
		}
	}
	return targets, append(recs, streamsRecord{typ: streamsTargetEpochType, epoch: epoch, assignedAt: now})
}

// delayedAssignment is the assignment the end of the initial rebalance
// delay computes, at the group epoch: its records (none if the group has
// no assignment to make).
func (sg *streamsGroup) delayedAssignment(topics Topics, now int64) []streamsRecord {
	if sg.epoch <= sg.assignmentEpoch {
		return nil
	}
	var assignees []streamsAssignee
	for _, m := range sg.sortedMembers() {
		assignees = append(assignees, streamsAssignee{id: m.id, process: m.processID, prev: sg.target[m.id]})
	}
	_, recs := sg.assign(sg.configure(topics), assignees, max(sg.standbys, 0), sg.epoch, now)
	return recs
}

func status(code int8, detail string) kmsg.StreamsGroupHeartbeatResponseStatus {
	s := kmsg.NewStreamsGroupHeartbeatResponseStatus()
	s.StatusCode, s.StatusDetail = code, detail
	return s
}

// endpoints lists, for each member with a user endpoint, the partitions
// its active and standby tasks read (interactive queries find a key's
// store through them): the source topics of each task's subtopology at
// the task's partition. self's metadata and tasks are the heartbeat's.
func (sg *streamsGroup) endpoints(cfg *configuredTopology, topics Topics, self string, selfMeta *streamsMemberMeta, selfTasks taskAssignment) []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint {
	out := []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint{}
	partitions := func(s taskSet) map[string][]int32 {
		byTopic := map[string][]int32{}
		for sub, ps := range s {
			for _, name := range cfg.topicsFor[sub] {
				t, ok := topics.ByName(name)
				for _, p := range ps {
					if ok && p < t.Partitions {
						byTopic[name] = append(byTopic[name], p)
					}
				}
			}
		}
		return byTopic
	}
	add := func(ep *hostPort, tasks taskAssignment) {
		e := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpoint()
		e.UserEndpoint.Host, e.UserEndpoint.Port = ep.host, ep.port
		active, standby := partitions(tasks.active), partitions(tasks.standby)
		for _, name := range sortedKeys(active) {
			a := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition()
			a.Topic, a.Partitions = name, slices.Compact(slices.Sorted(slices.Values(active[name])))
			e.ActivePartitions = append(e.ActivePartitions, a)
		}
		for _, name := range sortedKeys(standby) {
			s := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition()
			s.Topic, s.Partitions = name, slices.Compact(slices.Sorted(slices.Values(standby[name])))
			e.StandbyPartitions = append(e.StandbyPartitions, s)
		}
		if e.ActivePartitions == nil {
			e.ActivePartitions = []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition{}
		}
		if e.StandbyPartitions == nil {
			e.StandbyPartitions = []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition{}
		}
		out = append(out, e)
	}
	for _, m := range sg.sortedMembers() {
		if m.id != self && m.endpoint != nil {
			add(m.endpoint, m.current.assigned)
		}
	}
	if selfMeta.endpoint != nil {
		add(selfMeta.endpoint, selfTasks)
	}
	return out
}

// ownedTasks is what a heartbeat reports owning; nil when not reported.
func ownedTasks(r *kmsg.StreamsGroupHeartbeatRequest) *taskAssignment {
	if r.ActiveTasks == nil {
		return nil
	}
	return &taskAssignment{active: taskSetOf(r.ActiveTasks), standby: taskSetOf(r.StandbyTasks), warmup: taskSetOf(r.WarmupTasks)}
}

func taskSetOf(ts []kmsg.TaskIDs) taskSet {
	s := taskSet{}
	for _, t := range ts {
		for _, p := range t.Partitions {
			s.add(strings.Clone(t.SubtopologyID), p)
		}
	}
	s.normalize()
	return s
}

// taskIDs lists s as a response does, by subtopology id.
func taskIDs(s taskSet) []kmsg.TaskIDs {
	out := make([]kmsg.TaskIDs, 0, len(s))
	for _, id := range s.ids() {
		t := kmsg.NewTaskIDs()
		t.SubtopologyID, t.Partitions = id, slices.Clone(s[id])
		out = append(out, t)
	}
	return out
}

// invalidTasks says why tasks a member reports do not exist in the
// topology; "" when they all do.
func invalidTasks(cfg *configuredTopology, ts []kmsg.TaskIDs) string {
	for _, t := range ts {
		n, ok := cfg.tasks[t.SubtopologyID]
		if !ok {
			return fmt.Sprintf("Subtopology %s does not exist in the topology.", t.SubtopologyID)
		}
		for _, p := range t.Partitions {
			if p < 0 || p >= n {
				return fmt.Sprintf("Task %d for subtopology %s is invalid. Number of tasks for this subtopology: %d", p, t.SubtopologyID, n)
			}
		}
	}
	return ""
}

// checkStreamsEpoch returns why a heartbeat's epoch fences the member, or
// "": an epoch above the member's, or below it unless it is the previous
// one and the member owns only tasks it still has.
func checkStreamsEpoch(m *streamsMember, epoch int32, owned *taskAssignment) string {
	cur := m.current.epoch
	switch {
	case epoch > cur:
		return fmt.Sprintf("The streams group member has a greater member epoch (%d) than the one known by the group coordinator (%d). "+
			"The member must abandon all its partitions and rejoin.", epoch, cur)
	case epoch < cur && (epoch != m.current.previousEpoch || owned == nil || !owned.subsetOf(m.current.assigned)):
		return fmt.Sprintf("The streams group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). "+
			"The member must abandon all its partitions and rejoin.", epoch, cur)
	}
	return ""
}

// subsetOf reports whether every task of a is in b (of the same kind).
func (a *taskAssignment) subsetOf(b taskAssignment) bool {
	for _, pair := range [][2]taskSet{{a.active, b.active}, {a.standby, b.standby}, {a.warmup, b.warmup}} {
		for id, ps := range pair[0] {
			for _, p := range ps {
				if !pair[1].has(id, p) {
					return false
				}
			}
		}
	}
	return true
}

// blocker returns whether a task of a kind (0 active, 1 standby, 2
// warm-up) cannot go to member yet, because the task's state is still
// held elsewhere: an active task another member holds as active (assigned
// or being revoked), or another member of the same process as standby or
// warm-up; a standby or warm-up task that another member of the same
// process holds as active. A process keeps one copy of a task's state.
func (sg *streamsGroup) blocker(member, process string) func(kind int, sub string, p int32) bool {
	return func(kind int, sub string, p int32) bool {
		for _, o := range sg.members {
			if o.id == member {
				continue
			}
			a, r := &o.current.assigned, &o.current.revoking
			active := a.active.has(sub, p) || r.active.has(sub, p)
			passive := a.standby.has(sub, p) || r.standby.has(sub, p) || a.warmup.has(sub, p) || r.warmup.has(sub, p)
			switch {
			case kind == 0 && active:
				return true
			case o.processID != process:
			case kind == 0 && passive, kind != 0 && active:
				return true
			}
		}
		return false
	}
}

// reconcileStreams moves a member's current tasks towards its target, as
// Kafka's streams CurrentAssignmentBuilder does; owned is what the member
// reports owning (nil: not reported).
func reconcileStreams(m streamsCurrent, targetEpoch int32, target taskAssignment, owned *taskAssignment, blocked func(int, string, int32) bool) streamsCurrent {
	switch m.state {
	case streamsStable:
		if m.epoch == targetEpoch {
			return m
		}
	case streamsUnrevoked:
		if owned == nil || owned.intersects(m.revoking) {
			return m // still revoking
		}
	}
	cur := [3]taskSet{m.assigned.active, m.assigned.standby, m.assigned.warmup}
	tgt := [3]taskSet{target.active, target.standby, target.warmup}
	var keep, revoke, add [3]taskSet
	unreleased, revoking := false, false
	for k := range 3 {
		keep[k], revoke[k], add[k] = taskSet{}, taskSet{}, taskSet{}
		for sub, ps := range cur[k] {
			for _, p := range ps {
				if tgt[k].has(sub, p) {
					keep[k].add(sub, p)
				} else {
					revoke[k].add(sub, p)
					revoking = true
				}
			}
		}
		for sub, ps := range tgt[k] {
			for _, p := range ps {
				switch {
				case cur[k].has(sub, p):
				case blocked(k, sub, p):
					unreleased = true
				default:
					add[k].add(sub, p)
				}
			}
		}
		keep[k].normalize()
		revoke[k].normalize()
		add[k].normalize()
	}
	// Active tasks keep the epoch they were got at; new ones get the
	// target epoch.
	epochs := map[task]int32{}
	for _, s := range []taskSet{keep[0], revoke[0]} {
		for sub, ps := range s {
			for _, p := range ps {
				epochs[task{sub, p}] = m.epochOf(sub, p)
			}
		}
	}
	rev := taskAssignment{revoke[0], revoke[1], revoke[2]}
	if revoking && (owned == nil || owned.intersects(rev)) {
		return streamsCurrent{epoch: m.epoch, previousEpoch: m.epoch, state: streamsUnrevoked,
			assigned: taskAssignment{keep[0], keep[1], keep[2]}, revoking: rev, epochs: epochs}
	}
	for sub, ps := range revoke[0] {
		for _, p := range ps {
			delete(epochs, task{sub, p})
		}
	}
	for sub, ps := range add[0] {
		for _, p := range ps {
			epochs[task{sub, p}] = targetEpoch
		}
	}
	for k := range 3 {
		for sub, ps := range add[k] {
			for _, p := range ps {
				keep[k].add(sub, p)
			}
		}
		keep[k].normalize()
	}
	state := streamsStable
	if unreleased {
		state = streamsUnreleased
	}
	return streamsCurrent{epoch: targetEpoch, previousEpoch: m.epoch, state: state,
		assigned: taskAssignment{keep[0], keep[1], keep[2]}, revoking: taskAssignment{taskSet{}, taskSet{}, taskSet{}}, epochs: epochs}
}

// intersects reports whether a and b share a task of the same kind.
func (a *taskAssignment) intersects(b taskAssignment) bool {
	return a.active.intersects(b.active) || a.standby.intersects(b.standby) || a.warmup.intersects(b.warmup)
}

// leave handles a heartbeat with epoch -1: the member leaves, its tasks
// go to the others at the next heartbeat.
func (sg *streamsGroup) leave(r *kmsg.StreamsGroupHeartbeatRequest) streamsOutcome {
	m := sg.members[r.MemberID]
	if m == nil {
		return streamsOutcome{res: streamsFail(kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of the group.", r.MemberID))}
	}
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.MemberID, resp.MemberEpoch = m.id, r.MemberEpoch
	return streamsOutcome{recs: sg.fenceRecords(m), res: StreamsHeartbeatResult{Response: resp}, left: true}
}

// fenceRecords remove members (left, expired, or too slow to revoke) and
// bump the group epoch, so the next heartbeat reassigns their tasks. When
// no member remains, the assignment epoch follows the group epoch (an
// empty group has nothing to assign), as Kafka writes it.
func (sg *streamsGroup) fenceRecords(gone ...*streamsMember) []streamsRecord {
	var recs []streamsRecord
	left := map[string]bool{}
	for _, m := range gone {
		left[m.id] = true
		recs = append(recs,
			streamsRecord{typ: streamsCurrentType, member: m.id, tombstone: true},
			streamsRecord{typ: streamsTargetMemberType, member: m.id, tombstone: true},
			streamsRecord{typ: streamsMemberType, member: m.id, tombstone: true})
	}
	recs = append(recs, streamsRecord{typ: streamsEpochType, epoch: sg.epoch + 1, metaHash: sg.metaHash,
		validatedEpoch: sg.validatedEpoch, standbys: sg.standbys})
	if len(left) == len(sg.members) {
		recs = append(recs, streamsRecord{typ: streamsTargetEpochType, epoch: sg.epoch + 1})
	}
	return recs
}

// deleteRecords are the tombstones that end a streams group with no
// members: its target assignment, topology and epoch.
func (sg *streamsGroup) deleteRecords() []streamsRecord {
	var recs []streamsRecord
	for _, id := range sortedKeys(sg.target) {
		recs = append(recs, streamsRecord{typ: streamsTargetMemberType, member: id, tombstone: true})
	}
	for _, m := range sg.sortedMembers() { // none unless the group is deleted with members
		recs = append(recs,
			streamsRecord{typ: streamsCurrentType, member: m.id, tombstone: true},
			streamsRecord{typ: streamsMemberType, member: m.id, tombstone: true})
	}
	return append(recs,
		streamsRecord{typ: streamsTargetEpochType, tombstone: true},
		streamsRecord{typ: streamsTopologyType, tombstone: true},
		streamsRecord{typ: streamsEpochType, tombstone: true})
}

// apply applies a written heartbeat's outcome to the group: the member's
// timers.
func (sg *streamsGroup) apply(out *streamsOutcome) {
	m := sg.members[out.member]
	if m == nil {
		return
	}
	sg.endpointEpoch = max(sg.endpointEpoch, out.endpointEpoch)
	sg.delayUntil = out.delayUntil
	m.sessionDeadline = out.sessionDeadline
	switch {
	case out.revoke == revokeStop:
		m.revokeDeadline = 0
	case out.revoke == revokeStart || m.revokeDeadline == 0:
		m.revokeDeadline = out.revokeDeadline
	}
}

// expired lists the members whose session expired or who did not revoke
// tasks within their rebalance timeout, by id.
func (sg *streamsGroup) expired(now int64) []*streamsMember {
	if d := sg.nextDeadline(); d == 0 || now < d {
		return nil
	}
	var out []*streamsMember
	for _, m := range sg.sortedMembers() {
		if (m.sessionDeadline != 0 && now >= m.sessionDeadline) ||
			(m.revokeDeadline != 0 && now >= m.revokeDeadline && m.current.state == streamsUnrevoked) {
			out = append(out, m)
		}
	}
	return out
}

// nextDeadline is the earliest member timer; 0 if none.
func (sg *streamsGroup) nextDeadline() int64 {
	var next int64
	for _, m := range sg.members {
		for _, t := range []int64{m.sessionDeadline, m.revokeDeadline} {
			if t != 0 && (next == 0 || t < next) {
				next = t
			}
		}
	}
	if t := sg.delayUntil; t != 0 && (next == 0 || t < next) {
		next = t
	}
	return next
}

// restartTimers starts every member's timers at now: after a load, as if
// each had just heartbeated.
func (sg *streamsGroup) restartTimers(now int64, p *StreamsPolicy) {
	for _, m := range sg.members {
		m.sessionDeadline = now + int64(p.SessionTimeout)
		m.revokeDeadline = 0
		if m.current.state == streamsUnrevoked {
			m.revokeDeadline = now + int64(max(m.rebalanceTimeout, 0))
		}
	}
}

// topologyFromRequest copies a request's topology out of its buffer.
func topologyFromRequest(t *kmsg.StreamsGroupHeartbeatRequestTopology) *streamsTopology {
	out := &streamsTopology{epoch: t.Epoch}
	for _, s := range t.Subtopologies {
		st := subtopology{id: strings.Clone(s.SubtopologyID), sourceTopics: cloneStrings(s.SourceTopics),
			sourceRegex: cloneStrings(s.SourceTopicRegex), repartitionSinks: cloneStrings(s.RepartitionSinkTopics),
			changelogs: internalTopics(s.StateChangelogTopics), repartitionSources: internalTopics(s.RepartitionSourceTopics)}
		for _, g := range s.CopartitionGroups {
			st.copartitionGroups = append(st.copartitionGroups, copartitionGroup{sourceTopics: slices.Clone(g.SourceTopics),
				sourceRegex: slices.Clone(g.SourceTopicRegex), repartitionSources: slices.Clone(g.RepartitionSourceTopics)})
		}
		out.subtopologies = append(out.subtopologies, st)
	}
	return out
}

func cloneStrings(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.Clone(s)
	}
	return out
}

func internalTopics(ts []kmsg.TopicInfo) []internalTopic {
	out := make([]internalTopic, len(ts))
	for i, t := range ts {
		it := internalTopic{name: strings.Clone(t.Topic), partitions: t.NumPartitions, replicationFactor: t.ReplicationFactor}
		for _, c := range t.Configs {
			it.configs = append(it.configs, keyValue{strings.Clone(c.Key), strings.Clone(c.Value)})
		}
		out[i] = it
	}
	return out
}

// equal reports whether two topologies are the same.
func (a *streamsTopology) equal(b *streamsTopology) bool {
	return a.epoch == b.epoch && slices.EqualFunc(a.subtopologies, b.subtopologies, func(x, y subtopology) bool {
		return x.id == y.id && slices.Equal(x.sourceTopics, y.sourceTopics) && slices.Equal(x.sourceRegex, y.sourceRegex) &&
			slices.Equal(x.repartitionSinks, y.repartitionSinks) &&
			slices.EqualFunc(x.changelogs, y.changelogs, internalTopic.equal) &&
			slices.EqualFunc(x.repartitionSources, y.repartitionSources, internalTopic.equal) &&
			slices.EqualFunc(x.copartitionGroups, y.copartitionGroups, func(g, h copartitionGroup) bool {
				return slices.Equal(g.sourceTopics, h.sourceTopics) && slices.Equal(g.sourceRegex, h.sourceRegex) &&
					slices.Equal(g.repartitionSources, h.repartitionSources)
			})
	})
}

func (a internalTopic) equal(b internalTopic) bool {
	return a.name == b.name && a.partitions == b.partitions && a.replicationFactor == b.replicationFactor && slices.Equal(a.configs, b.configs)
}

// streamsPolicy is the streams groups' policy from the configuration.
func (c *Config) streamsPolicy() StreamsPolicy {
	return StreamsPolicy{
		InitialDelay:      max(c.StreamsInitialRebalanceDelay.Milliseconds(), 0),
		SessionTimeout:    int32(min(c.StreamsSessionTimeout.Milliseconds(), 1<<31-1)),
		HeartbeatInterval: int32(min(c.StreamsHeartbeatInterval.Milliseconds(), 1<<31-1)),
		MaxSize:           c.StreamsMaxSize,
		NumStandbys:       int32(c.StreamsNumStandbyReplicas),

		AssignmentInterval: c.StreamsAssignmentInterval.Milliseconds(),
	}
}

// setStreamsDefaults applies Kafka's defaults of group.streams.*.
func (c *Config) setStreamsDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.StreamsSessionTimeout, 45*time.Second)
	def(&c.StreamsMinSessionTimeout, 45*time.Second)
	def(&c.StreamsMaxSessionTimeout, 60*time.Second)
	def(&c.StreamsHeartbeatInterval, 5*time.Second)
	def(&c.StreamsMinHeartbeatInterval, 5*time.Second)
	def(&c.StreamsMaxHeartbeatInterval, 15*time.Second)
	c.StreamsSessionTimeout = min(max(c.StreamsSessionTimeout, c.StreamsMinSessionTimeout), c.StreamsMaxSessionTimeout)
	c.StreamsHeartbeatInterval = min(max(c.StreamsHeartbeatInterval, c.StreamsMinHeartbeatInterval), c.StreamsMaxHeartbeatInterval)
	c.StreamsMinAssignmentInterval, c.StreamsAssignmentInterval = assignmentIntervals(c.StreamsAssignmentInterval,
		c.StreamsMinAssignmentInterval, &c.StreamsMaxAssignmentInterval)
	if c.StreamsMaxSize <= 0 {
		c.StreamsMaxSize = 1<<31 - 1
	}
	if c.StreamsMaxStandbyReplicas == nil || *c.StreamsMaxStandbyReplicas < 0 {
		c.StreamsMaxStandbyReplicas = new(2)
	}
	c.StreamsNumStandbyReplicas = min(max(c.StreamsNumStandbyReplicas, 0), *c.StreamsMaxStandbyReplicas)
}
