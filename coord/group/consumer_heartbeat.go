package group

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The ConsumerGroupHeartbeat logic of KIP-848, as Kafka's group coordinator
// runs it. A member joins with epoch 0 and its subscription, then
// heartbeats with its epoch and the partitions it owns. A heartbeat:
//
//  1. updates the member's metadata; a new member or a changed
//     subscription, or subscribed topics that changed in the metadata
//     image (their metadata hash), bump the group epoch;
//  2. when the group epoch is past the target assignment's, runs the
//     assignor for every member: the new target assignment, at the group
//     epoch (at most once per group.consumer.assignment.interval.ms,
//     KIP-1263: a heartbeat sooner keeps the last target);
//  3. reconciles the member towards its target: partitions it must give
//     up are first revoked (it stays at its epoch, UNREVOKED, until a
//     heartbeat no longer lists them as owned); then it moves to the
//     target epoch with the partitions it keeps plus the new ones that
//     no other member holds any more; those still held wait
//     (UNRELEASED) and come with a later heartbeat.
//
// Every change is a list of records; nothing changes until the caller has
// written them and replayed them on the group.

// ConsumerHeartbeatRequest is a ConsumerGroupHeartbeat request. A nil
// field (or -1 rebalance timeout) is unchanged since the last heartbeat.
type ConsumerHeartbeatRequest struct {
	Version     int16 // v0: the coordinator names new members; v1: they name themselves
	Group       string
	MemberID    string
	MemberEpoch int32 // 0 joins, -1 leaves, -2 leaves as a static member that comes back
	InstanceID  *string
	RackID      *string
	// RebalanceTimeout (ms) bounds how long the member may take to revoke
	// partitions.
	RebalanceTimeout     int32
	SubscribedTopicNames []string
	SubscribedTopicRegex *string // v1+
	ServerAssignor       *string
	Owned                []TopicPartitions // the partitions the member owns
	ClientID, ClientHost string
	// Configs are the group's dynamic configs (the metadata image's):
	// consumer.session.timeout.ms and consumer.heartbeat.interval.ms
	// override the broker's for this heartbeat.
	Configs map[string]string

	// classic: a classic member's JoinGroup, as the coordinator runs it
	// through the same logic (consumer_classic.go).
	classic *classicMeta
}

// TopicPartitions is some partitions of one topic, by id (and name where
// a response names topics).
type TopicPartitions struct {
	TopicID    [16]byte
	Topic      string
	Partitions []int32
}

// ConsumerHeartbeatResult is a ConsumerGroupHeartbeat response.
type ConsumerHeartbeatResult struct {
	Err               error
	ErrMessage        string // the text Kafka sends with Err, if any
	MemberID          string
	MemberEpoch       int32
	HeartbeatInterval int32 // ms
	// HasAssignment: Assignment (the partitions the member may use now)
	// is sent; else the response's assignment is null (unchanged).
	HasAssignment bool
	Assignment    []TopicPartitions
}

// hbEnv is what the heartbeat logic reads besides the group.
type hbEnv struct {
	now    int64
	policy *Policy
	topics Topics
	// gateShares: share groups assign only partitions whose share state
	// is initialized (the coordinator has an initializer).
	gateShares bool
}

// hbOutcome is the outcome of a heartbeat: the records to write, the
// response, and what to apply to the group once they are written (apply:
// the member's timers, which are not persisted, and the subscriptions
// resolved).
type hbOutcome struct {
	recs []consumerRecord
	res  ConsumerHeartbeatResult

	member          string // "" when nothing is to be applied
	left            bool   // a consumer protocol member left (epoch -1)
	sessionDeadline int64
	revoke          revokeTimer
	revokeDeadline  int64
	resolved        bool
	version         int64
	subscribed      map[topicID]assignTopic
	byMember        map[string][]topicID
}

// revokeTimer says what a heartbeat does to the member's revocation timer.
type revokeTimer int8

const (
	revokeKeep  revokeTimer = iota // a revocation goes on
	revokeStart                    // a revocation starts
	revokeStop                     // no revocation
)

// apply applies a written heartbeat's outcome to the group.
func (cg *consumerGroup) apply(out *hbOutcome) {
	m := cg.members[out.member]
	if m == nil {
		return
	}
	m.sessionDeadline = out.sessionDeadline
	switch {
	case out.revoke == revokeStop:
		m.revokeDeadline = 0
	case out.revoke == revokeStart || m.revokeDeadline == 0:
		m.revokeDeadline = out.revokeDeadline
	}
	if out.resolved {
		cg.resolved.version, cg.resolved.topics, cg.resolved.members = out.version, out.subscribed, out.byMember
	}
}

func hbFail(err error, msg string) hbOutcome {
	return hbOutcome{res: ConsumerHeartbeatResult{Err: err, ErrMessage: msg}}
}

// validateHeartbeat checks a request as Kafka does before looking at the
// group: INVALID_REQUEST, INVALID_REGULAR_EXPRESSION, UNSUPPORTED_ASSIGNOR.
func validateHeartbeat(r *ConsumerHeartbeatRequest, p *Policy) (string, error) {
	invalid := func(msg string) (string, error) { return msg, kerr.InvalidRequest }
	switch {
	case r.Group == "":
		return invalid("GroupId can't be empty.")
	case r.InstanceID != nil && *r.InstanceID == "":
		return invalid("InstanceId can't be empty.")
	case r.RackID != nil && *r.RackID == "":
		return invalid("RackId can't be empty.")
	case r.Version >= 1 && r.MemberID == "":
		return invalid("MemberId can't be empty.")
	}
	switch {
	case r.MemberEpoch > 0 || r.MemberEpoch == -1:
		if r.MemberID == "" {
			return invalid("MemberId can't be empty.")
		}
	case r.MemberEpoch == 0:
		switch {
		case r.RebalanceTimeout == -1:
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		case r.Owned == nil || len(r.Owned) > 0:
			return invalid("TopicPartitions must be empty when (re-)joining.")
		case r.SubscribedTopicNames == nil && r.SubscribedTopicRegex == nil:
			return invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
		}
	case r.MemberEpoch == -2:
		if r.MemberID == "" {
			return invalid("MemberId can't be empty.")
		}
		if r.InstanceID == nil {
			return invalid("InstanceId can't be null.")
		}
	default:
		return invalid("MemberEpoch is invalid.")
	}
	if r.SubscribedTopicRegex != nil && *r.SubscribedTopicRegex != "" {
		if _, err := compileSubscription(*r.SubscribedTopicRegex); err != nil {
			return "SubscribedTopicRegex is not a valid regular expression.", kerr.InvalidRegularExpression
		}
	}
	if r.ServerAssignor != nil && !slices.Contains(p.ConsumerAssignors, *r.ServerAssignor) {
		return fmt.Sprintf("ServerAssignor %s is not supported. Supported assignors: %s.",
			*r.ServerAssignor, strings.Join(p.ConsumerAssignors, ", ")), kerr.UnsupportedAssignor
	}
	return "", nil
}

// heartbeat handles a join or a heartbeat (epoch >= 0) of a validated
// request. newID names a member joining with no id (v0).
func (cg *consumerGroup) heartbeat(env *hbEnv, r *ConsumerHeartbeatRequest, newID func() string) hbOutcome {
	memberID := r.MemberID // aliases the request until replaced by a kept copy below
	if memberID == "" {
		memberID = newID()
	}
	var old, replaced *consumerMember
	if r.InstanceID == nil {
		old = cg.members[memberID]
		if old == nil && r.MemberEpoch != 0 {
			return hbFail(kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of the group.", memberID))
		}
	} else {
		inst := *r.InstanceID
		cur := cg.members[cg.static[inst]]
		switch {
		case r.MemberEpoch == 0 && cur != nil && cur.id != memberID:
			if cur.current.epoch != -2 {
				return hbFail(kerr.UnreleasedInstanceID, fmt.Sprintf("Static member %s with instance id %s re-joins the consumer group "+
					"but the previous member %s has not left yet.", memberID, inst, cur.id))
			}
			replaced = cur
			old = cg.members[memberID]
		case r.MemberEpoch == 0:
			old = cg.members[memberID]
		case cur == nil:
			return hbFail(kerr.UnknownMemberID, fmt.Sprintf("Instance id %s is unknown.", inst))
		case cur.id != memberID:
			return hbFail(kerr.FencedInstanceID, fmt.Sprintf("Static member %s with instance id %s is fenced by %s.", memberID, inst, cur.id))
		default:
			old = cur
		}
	}
	if old != nil && old.classic != nil && r.classic == nil && r.MemberEpoch != 0 {
		return hbFail(kerr.UnknownMemberID, fmt.Sprintf("Member %s is a classic protocol member.", old.id))
	}
	if old != nil && r.MemberEpoch != 0 {
		if msg := checkMemberEpoch(old, r); msg != "" {
			return hbFail(kerr.FencedMemberEpoch, msg)
		}
	}
	if old == nil && replaced == nil && len(cg.members) >= env.policy.ConsumerMaxSize {
		return hbFail(kerr.GroupMaxSizeReached, fmt.Sprintf("The consumer group has reached its maximum capacity of %d members.", env.policy.ConsumerMaxSize))
	}
	if old != nil {
		memberID = old.id
	} else if memberID == r.MemberID {
		memberID = strings.Clone(memberID)
	}

	// 1. The member's metadata and the group epoch.
	var prev *memberMeta
	switch {
	case old != nil:
		prev = &old.memberMeta
	case replaced != nil:
		prev = &replaced.memberMeta
	}
	meta := memberMeta{rebalanceTimeout: -1}
	if prev != nil {
		meta = *prev
	}
	if r.InstanceID != nil {
		meta.instanceID = *r.InstanceID
	}
	if r.RackID != nil {
		meta.rackID = *r.RackID
	}
	if r.RebalanceTimeout != -1 {
		meta.rebalanceTimeout = r.RebalanceTimeout
	}
	if r.ServerAssignor != nil {
		meta.assignor = *r.ServerAssignor
	}
	if r.SubscribedTopicNames != nil {
		meta.topics = slices.Compact(slices.Sorted(slices.Values(r.SubscribedTopicNames)))
	}
	if r.SubscribedTopicRegex != nil {
		meta.regex = *r.SubscribedTopicRegex
	}
	meta.clientID, meta.clientHost = r.ClientID, r.ClientHost
	meta.classic = r.classic

	var recs []consumerRecord
	replacedID := ""
	if replaced != nil {
		replacedID = replaced.id
		recs = append(recs, removeMemberRecords(replacedID)...)
	}
	if old == nil || !meta.equal(prev) {
		recs = append(recs, consumerRecord{typ: consumerMemberType, member: memberID, meta: cloneMeta(meta)})
	}
	bump := cg.epoch == 0 || prev == nil || !slices.Equal(meta.topics, prev.topics) || meta.regex != prev.regex

	byMember, subscribed, hash := cg.resolved.members, cg.resolved.topics, cg.metaHash
	version := env.topics.Version()
	resolved := bump || cg.resolved.version != version
	if resolved {
		metas := make(map[string]*memberMeta, len(cg.members)+1)
		for id, m := range cg.members {
			if id != replacedID {
				metas[id] = &m.memberMeta
			}
		}
		updated := meta // only a resolving heartbeat puts it on the heap
		metas[memberID] = &updated
		byMember, subscribed, hash = cg.resolve(env.topics, metas)
		bump = bump || hash != cg.metaHash
	}
	epoch := cg.epoch
	if bump {
		epoch++
		recs = append(recs, consumerRecord{typ: consumerEpochType, epoch: epoch, metaHash: hash})
	}

	// 2. The target assignment, at most once per assignment interval
	// (KIP-1263): sooner, the member gets the last target (none if new)
	// and a later heartbeat computes the next.
	targetEpoch, target := cg.assignmentEpoch, cg.target[memberID]
	if replaced != nil && old == nil {
		target = cg.target[replacedID]
	}
	if epoch > cg.assignmentEpoch && assignable(cg.assignedAt, env.now, env.policy.ConsumerAssignmentInterval) {
		spec := &assignSpec{topics: subscribed}
		for _, m := range cg.sortedMembers() {
			if m.id == replacedID || m.id == memberID {
				continue
			}
			spec.members = append(spec.members, assignMember{id: m.id, instanceID: m.instanceID, topics: byMember[m.id], current: cg.target[m.id]})
		}
		spec.members = append(spec.members, assignMember{id: memberID, instanceID: meta.instanceID, topics: byMember[memberID], current: target})
		slices.SortFunc(spec.members, func(a, b assignMember) int { return strings.Compare(a.id, b.id) })
		name := cg.preferredAssignor(env.policy, map[string]string{memberID: meta.assignor})
		targets := assignors[name].assign(spec)
		for _, m := range spec.members {
			t := targets[m.id]
			if cur, ok := cg.target[m.id]; !ok || !cur.equal(t) {
				recs = append(recs, consumerRecord{typ: consumerTargetMemberType, member: m.id, target: t})
			}
		}
		recs = append(recs, consumerRecord{typ: consumerTargetEpochType, epoch: epoch, assignedAt: env.now})
		targetEpoch, target = epoch, targets[memberID]
	} else if replaced != nil && old == nil {
		recs = append(recs, consumerRecord{typ: consumerTargetMemberType, member: memberID, target: target})
	}

	// 3. Reconciliation.
	var cur currentAssignment
	switch {
	case old != nil:
		cur = old.current
	case replaced != nil:
		// The new instance takes over what the old one held.
		cur = currentAssignment{assigned: replaced.current.assigned}
	}
	var owned tpSet
	if r.Owned != nil {
		owned = ownedSet(r.Owned)
	}
	next := reconcile(cur, targetEpoch, target, owned, func(id topicID, p int32) bool {
		return cg.heldByOther(id, p, memberID, replacedID)
	})
	if old == nil || !next.equal(&cur) {
		recs = append(recs, consumerRecord{typ: consumerCurrentType, member: memberID, current: next})
	}

	res := ConsumerHeartbeatResult{MemberID: memberID, MemberEpoch: next.epoch, HeartbeatInterval: env.policy.ConsumerHeartbeatInterval}
	full := r.RebalanceTimeout != -1 && (r.SubscribedTopicNames != nil || r.SubscribedTopicRegex != nil) && r.Owned != nil
	if r.MemberEpoch == 0 || full || !next.assigned.equal(cur.assigned) {
		res.HasAssignment, res.Assignment = true, partitionList(next.assigned)
	}
	out := hbOutcome{recs: recs, res: res, member: memberID, sessionDeadline: env.now + int64(env.policy.ConsumerSessionTimeout),
		revokeDeadline: env.now + int64(max(meta.rebalanceTimeout, 0))}
	switch {
	case next.state != memberUnrevoked:
		out.revoke = revokeStop
	case cur.state != memberUnrevoked || cur.epoch != next.epoch:
		out.revoke = revokeStart
	}
	if resolved {
		out.resolved, out.version, out.subscribed, out.byMember = true, version, subscribed, byMember
	}
	return out
}

// checkMemberEpoch returns why a heartbeat's epoch fences the member, or
// "": an epoch above the member's, or below it unless it is the previous
// one and the member owns only partitions it still has (the response that
// moved it on was lost).
func checkMemberEpoch(m *consumerMember, r *ConsumerHeartbeatRequest) string {
	cur := m.current.epoch
	switch {
	case r.MemberEpoch > cur:
		return fmt.Sprintf("The consumer group member has a greater member epoch (%d) than the one known by the group coordinator (%d). "+
			"The member must abandon all its partitions and rejoin.", r.MemberEpoch, cur)
	case r.MemberEpoch < cur && (r.MemberEpoch != m.current.previousEpoch || r.Owned == nil || !ownedSet(r.Owned).subsetOf(m.current.assigned)):
		return fmt.Sprintf("The consumer group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). "+
			"The member must abandon all its partitions and rejoin.", r.MemberEpoch, cur)
	}
	return ""
}

// reconcile moves a member's current assignment towards its target, as
// Kafka's CurrentAssignmentBuilder does. owned is what the member reports
// owning (nil: not reported); heldByOther reports a partition another
// member has not released yet.
func reconcile(m currentAssignment, targetEpoch int32, target, owned tpSet, heldByOther func(topicID, int32) bool) currentAssignment {
	switch m.state {
	case memberStable:
		if m.epoch == targetEpoch {
			return m
		}
	case memberUnrevoked:
		if owned == nil || owned.intersects(m.revoking) {
			return m // still revoking
		}
	}
	return nextAssignment(m, m.epoch, targetEpoch, target, owned, heldByOther)
}

// nextAssignment computes the member's next state: keep what is in both
// the assignment and the target; revoke the rest first if the member may
// still own it (it stays at memberEpoch); else move to the target epoch
// with the new partitions that are free.
func nextAssignment(m currentAssignment, memberEpoch, targetEpoch int32, target, owned tpSet, heldByOther func(topicID, int32) bool) currentAssignment {
	keep, revoke, add := tpBuilder{}, tpBuilder{}, tpBuilder{}
	epochs := make(map[tp]int32, m.assigned.size()+target.size())
	unreleased := false
	for id, ps := range m.assigned {
		for _, p := range ps {
			epochs[tp{id, p}] = m.epochOf(id, p)
			if target.has(id, p) {
				keep.add(id, p)
			} else {
				revoke.add(id, p)
			}
		}
	}
	for id, ps := range target {
		for _, p := range ps {
			switch {
			case m.assigned.has(id, p):
			case heldByOther(id, p):
				unreleased = true
			default:
				add.add(id, p)
			}
		}
	}
	revoking := revoke.set()
	if len(revoking) > 0 && (owned == nil || owned.intersects(revoking)) {
		return currentAssignment{epoch: memberEpoch, previousEpoch: m.epoch, state: memberUnrevoked, assigned: keep.set(), revoking: revoking, epochs: epochs}
	}
	for id := range revoking {
		for _, p := range revoking[id] {
			delete(epochs, tp{id, p})
		}
	}
	for id, ps := range add {
		for _, p := range ps {
			keep.add(id, p)
			epochs[tp{id, p}] = targetEpoch
		}
	}
	state := memberStable
	if unreleased {
		state = memberUnreleased
	}
	return currentAssignment{epoch: targetEpoch, previousEpoch: m.epoch, state: state, assigned: keep.set(), revoking: tpSet{}, epochs: epochs}
}

// leave handles a heartbeat with epoch -1 (the member leaves) or -2 (a
// static member leaves and will come back: it keeps its assignment until
// its session expires).
func (cg *consumerGroup) leave(env *hbEnv, r *ConsumerHeartbeatRequest) hbOutcome {
	res := ConsumerHeartbeatResult{MemberID: r.MemberID, MemberEpoch: r.MemberEpoch}
	var m *consumerMember
	if r.InstanceID == nil {
		if m = cg.members[r.MemberID]; m == nil {
			return hbFail(kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of the group.", r.MemberID))
		}
	} else {
		inst := *r.InstanceID
		switch m = cg.members[cg.static[inst]]; {
		case m == nil:
			return hbFail(kerr.UnknownMemberID, fmt.Sprintf("Instance id %s is unknown.", inst))
		case m.id != r.MemberID:
			return hbFail(kerr.FencedInstanceID, fmt.Sprintf("Static member %s with instance id %s is fenced by %s.", r.MemberID, inst, m.id))
		}
		if r.MemberEpoch == -2 {
			c := m.current
			c.epoch, c.revoking = -2, tpSet{}
			return hbOutcome{recs: []consumerRecord{{typ: consumerCurrentType, member: m.id, current: c}}, res: res}
		}
	}
	return hbOutcome{recs: cg.fenceRecords(env, m), res: res}
}

// removeMemberRecords are the tombstones of a member's records.
func removeMemberRecords(id string) []consumerRecord {
	return []consumerRecord{
		{typ: consumerCurrentType, member: id, tombstone: true},
		{typ: consumerTargetMemberType, member: id, tombstone: true},
		{typ: consumerMemberType, member: id, tombstone: true},
	}
}

// fenceRecords remove members (left, expired, or too slow to revoke) and
// bump the group epoch, so the next heartbeat reassigns their partitions.
func (cg *consumerGroup) fenceRecords(env *hbEnv, gone ...*consumerMember) []consumerRecord {
	var recs []consumerRecord
	metas := make(map[string]*memberMeta, len(cg.members))
	for id, m := range cg.members {
		metas[id] = &m.memberMeta
	}
	for _, m := range gone {
		recs = append(recs, removeMemberRecords(m.id)...)
		delete(metas, m.id)
	}
	_, _, hash := cg.resolve(env.topics, metas)
	return append(recs, consumerRecord{typ: consumerEpochType, epoch: cg.epoch + 1, metaHash: hash})
}

// expired lists the members whose session expired or who did not revoke
// partitions within their rebalance timeout, by id.
func (cg *consumerGroup) expired(now int64) []*consumerMember {
	if d := cg.nextDeadline(); d == 0 || now < d {
		return nil
	}
	var out []*consumerMember
	for _, m := range cg.sortedMembers() {
		if (m.sessionDeadline != 0 && now >= m.sessionDeadline) ||
			(m.revokeDeadline != 0 && now >= m.revokeDeadline && m.current.state == memberUnrevoked) ||
			(m.classicDeadline != 0 && now >= m.classicDeadline) {
			out = append(out, m)
		}
	}
	return out
}

// nextDeadline is the earliest member timer; 0 if none.
func (cg *consumerGroup) nextDeadline() int64 {
	var next int64
	for _, m := range cg.members {
		for _, t := range []int64{m.sessionDeadline, m.revokeDeadline, m.classicDeadline} {
			if t != 0 && (next == 0 || t < next) {
				next = t
			}
		}
	}
	return next
}

// restartTimers starts every member's timers at now: after a load, as if
// each had just heartbeated.
func (cg *consumerGroup) restartTimers(now int64, p *Policy) {
	for _, m := range cg.members {
		m.sessionDeadline = now + int64(m.sessionTimeout(p))
		m.revokeDeadline, m.classicDeadline = 0, 0
		if m.current.state == memberUnrevoked {
			m.revokeDeadline = now + int64(max(m.rebalanceTimeout, 0))
		}
	}
}

// ownedSet is a heartbeat's owned partitions as a set.
func ownedSet(ts []TopicPartitions) tpSet {
	b := tpBuilder{}
	for _, t := range ts {
		for _, p := range t.Partitions {
			b.add(t.TopicID, p)
		}
	}
	return b.set()
}

// partitionList is s in topic id order, as responses list it.
func partitionList(s tpSet) []TopicPartitions {
	out := make([]TopicPartitions, 0, len(s))
	for _, id := range s.ids() {
		out = append(out, TopicPartitions{TopicID: id, Partitions: s[id]})
	}
	return out
}

// sessionTimeout is the member's session timeout (ms): a classic member's
// own, else group.consumer.session.timeout.ms.
func (m *consumerMember) sessionTimeout(p *Policy) int32 {
	if m.classic != nil {
		return m.classic.sessionTimeout
	}
	return p.ConsumerSessionTimeout
}
