package group

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// shareGroup is the state of a KIP-932 share group: its epoch, members,
// target assignment and the members' current assignments. Like
// consumerGroup it changes only by replaying records (replay), live after
// they are written and on load alike; the heartbeat logic reads it and
// returns the records of a change, with no I/O and no clock.
//
// A share group differs from a consumer group in what its assignment
// means: members of a share group consume a partition together (the
// partition leader hands each record to one of them), so a partition may
// be assigned to several members and is never revoked first. A member's
// current assignment jumps to its target at once, and the group is Empty
// or Stable.
type shareGroup struct {
	epoch           int32 // the group epoch
	metaHash        int64 // hash of the subscribed topics' metadata at epoch
	assignmentEpoch int32 // the epoch of the target assignment
	assignedAt      int64 // ms, when the target assignment was computed; 0 unknown
	members         map[string]*shareMember
	target          map[string]tpSet // member id -> target assignment
	// state is which partitions have share state at the share
	// coordinator (record type 15): with an initializer
	// (Config.InitializeShareState), only initialized partitions are
	// assigned.
	state shareStateMeta
	// initializing is, of state's initializing partitions, those a
	// background initialization of this coordinator is initializing now
	// (started by the heartbeat that recorded them). Not persisted: the
	// others (left by a crash, a failed initialization or a failed write
	// of the record that ends one) are initialized again after the next
	// heartbeat, as Kafka's coordinator retries them.
	initializing tpBuilder

	// Not persisted: the subscriptions resolved against the topics of
	// one metadata version.
	resolved struct {
		version int64 // Topics.Version; -1 none
		topics  map[topicID]assignTopic
		members map[string][]topicID
	}
}

// shareMember is one member of a share group.
type shareMember struct {
	id string
	shareMemberMeta
	current shareCurrent
	// sessionDeadline (ms, not persisted, restarted on load): the member
	// is fenced unless it heartbeats by then.
	sessionDeadline int64
}

func newShareGroup() *shareGroup {
	sg := &shareGroup{members: map[string]*shareMember{}, target: map[string]tpSet{}}
	sg.resolved.version = -1
	return sg
}

// replay applies one record of the group. A group epoch tombstone is the
// caller's to apply (the group is deleted).
func (sg *shareGroup) replay(r *shareRecord) {
	switch r.typ {
	case shareEpochType:
		sg.epoch, sg.metaHash = r.epoch, r.metaHash
		sg.resolved.version = -1
	case shareMemberType:
		if r.tombstone {
			delete(sg.members, r.member)
			sg.resolved.version = -1
			return
		}
		sg.member(r.member).shareMemberMeta = r.meta
		sg.resolved.version = -1
	case shareTargetEpochType:
		sg.assignmentEpoch, sg.assignedAt = r.epoch, r.assignedAt
		if r.tombstone {
			sg.assignmentEpoch, sg.assignedAt = 0, 0
		}
	case shareTargetMemberType:
		if r.tombstone {
			delete(sg.target, r.member)
			return
		}
		sg.target[r.member] = r.target
	case shareCurrentType:
		if r.tombstone {
			if m := sg.members[r.member]; m != nil {
				m.current = shareCurrent{}
			}
			return
		}
		sg.member(r.member).current = r.current
	case shareStatePartitionType:
		sg.state = r.state
		if r.tombstone {
			sg.state = shareStateMeta{}
		}
	}
}

// member returns the member id, created with no metadata if new.
func (sg *shareGroup) member(id string) *shareMember {
	m := sg.members[id]
	if m == nil {
		m = &shareMember{id: id}
		sg.members[id] = m
	}
	return m
}

// stateOf is the group's state: Empty without members, else Stable.
func (sg *shareGroup) stateOf() State {
	if len(sg.members) == 0 {
		return Empty
	}
	return Stable
}

// sortedMembers lists the members by id.
func (sg *shareGroup) sortedMembers() []*shareMember {
	return slices.SortedFunc(maps.Values(sg.members), func(a, b *shareMember) int { return cmp.Compare(a.id, b.id) })
}

// ShareHeartbeatRequest is a ShareGroupHeartbeat request (v1: members name
// themselves). A nil field is unchanged since the last heartbeat.
type ShareHeartbeatRequest struct {
	Group                string
	MemberID             string
	MemberEpoch          int32 // 0 joins, -1 leaves
	RackID               *string
	SubscribedTopicNames []string
	ClientID, ClientHost string
	// Configs are the group's dynamic configs (the metadata image's):
	// share.session.timeout.ms and share.heartbeat.interval.ms override
	// the broker's for this heartbeat.
	Configs map[string]string
}

// ShareHeartbeatResult is a ShareGroupHeartbeat response.
type ShareHeartbeatResult struct {
	Err               error
	ErrMessage        string // the text Kafka sends with Err, if any
	MemberID          string
	MemberEpoch       int32
	HeartbeatInterval int32 // ms
	// HasAssignment: Assignment is sent; else the response's assignment
	// is null (unchanged).
	HasAssignment bool
	Assignment    []TopicPartitions
}

// shareOutcome is the outcome of a share heartbeat: the records to write,
// the response, and the member's session deadline to apply once written.
type shareOutcome struct {
	recs            []shareRecord
	res             ShareHeartbeatResult
	member          string // "" when nothing is to be applied
	sessionDeadline int64
	resolved        bool
	version         int64
	subscribed      map[topicID]assignTopic
	byMember        map[string][]topicID
	// initialize: the partitions the records recorded as initializing,
	// whose share state the coordinator initializes in the background
	// once they are written, at state epoch initEpoch.
	initialize []stateTopic
	initEpoch  int32
}

func shareFail(err error, msg string) shareOutcome {
	return shareOutcome{res: ShareHeartbeatResult{Err: err, ErrMessage: msg}}
}

// validateShareHeartbeat checks a request as Kafka does before looking at
// the group (INVALID_REQUEST).
func validateShareHeartbeat(r *ShareHeartbeatRequest) (string, error) {
	invalid := func(msg string) (string, error) { return msg, kerr.InvalidRequest }
	switch {
	case r.Group == "":
		return invalid("GroupId can't be empty.")
	case r.RackID != nil && *r.RackID == "":
		return invalid("RackId can't be empty.")
	case r.MemberID == "":
		return invalid("MemberId can't be empty.")
	}
	switch {
	case r.MemberEpoch > 0 || r.MemberEpoch == -1:
	case r.MemberEpoch == 0:
		if len(r.SubscribedTopicNames) == 0 {
			return invalid("SubscribedTopicNames must be set in first request.")
		}
	default:
		return invalid("MemberEpoch is invalid.")
	}
	return "", nil
}

// apply applies a written heartbeat's outcome to the group.
func (sg *shareGroup) apply(out *shareOutcome) {
	if m := sg.members[out.member]; m != nil {
		m.sessionDeadline = out.sessionDeadline
	}
	if out.resolved {
		sg.resolved.version, sg.resolved.topics, sg.resolved.members = out.version, out.subscribed, out.byMember
	}
	if len(out.initialize) > 0 {
		sg.setInFlight(out.initialize, true)
	}
}

// heartbeat handles a join or a heartbeat (epoch >= 0) of a validated
// request.
func (sg *shareGroup) heartbeat(env *hbEnv, r *ShareHeartbeatRequest) shareOutcome {
	old := sg.members[r.MemberID]
	switch {
	case old == nil && r.MemberEpoch != 0:
		return shareFail(kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", r.MemberID, r.Group))
	case old != nil && r.MemberEpoch != 0 && r.MemberEpoch != old.current.epoch:
		return shareFail(kerr.FencedMemberEpoch, fmt.Sprintf("The share group member has a member epoch (%d) different from the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.",
			r.MemberEpoch, old.current.epoch))
	case old == nil && len(sg.members) >= env.policy.Share.MaxSize:
		return shareFail(kerr.GroupMaxSizeReached, fmt.Sprintf("The share group has reached its maximum capacity of %d members.", env.policy.Share.MaxSize))
	}
	memberID := r.MemberID
	if old != nil {
		memberID = old.id
	} else {
		memberID = strings.Clone(memberID)
	}

	// 1. The member's metadata and the group epoch.
	var meta shareMemberMeta
	if old != nil {
		meta = old.shareMemberMeta
	}
	if r.RackID != nil {
		meta.rackID = *r.RackID
	}
	if r.SubscribedTopicNames != nil {
		meta.topics = slices.Compact(slices.Sorted(slices.Values(r.SubscribedTopicNames)))
	}
	meta.clientID, meta.clientHost = r.ClientID, r.ClientHost

	var recs []shareRecord
	if old == nil || !meta.equal(&old.shareMemberMeta) {
		recs = append(recs, shareRecord{typ: shareMemberType, member: memberID, meta: cloneShareMeta(meta)})
	}
	bump := sg.epoch == 0 || old == nil || !slices.Equal(meta.topics, old.topics)

	byMember, subscribed, hash := sg.resolved.members, sg.resolved.topics, sg.metaHash
	version := env.topics.Version()
	resolved := bump || sg.resolved.version != version
	if resolved {
		byMember, subscribed, hash = sg.resolve(env.topics, memberID, &meta)
		bump = bump || hash != sg.metaHash
	}
	epoch := sg.epoch
	if bump {
		epoch++
		recs = append(recs, shareRecord{typ: shareEpochType, epoch: epoch, metaHash: hash})
	}

	// 2. The target assignment, computed for every member when the group
	// epoch moved past it, at most once per assignment interval
	// (KIP-1263): sooner, the member gets the last target (none if new)
	// and a later heartbeat computes the next.
	// With an initializer, only partitions whose share state is
	// initialized are assigned, and partitions initialized since the
	// last target make a new one at the same epoch.
	var only tpSet
	pending := false
	if env.gateShares {
		only = sg.state.initializedIn(subscribed)
		pending = !only.equal(sg.targetUnion())
	}
	targetEpoch, target := sg.assignmentEpoch, sg.target[memberID]
	if (epoch > sg.assignmentEpoch || pending) && assignable(sg.assignedAt, env.now, env.policy.Share.AssignmentInterval) {
		ids := slices.Sorted(maps.Keys(byMember))
		spec := &assignSpec{topics: subscribed, members: make([]assignMember, len(ids)), only: only}
		for i, id := range ids {
			spec.members[i] = assignMember{id: id, topics: byMember[id], current: sg.target[id]}
		}
		next := simpleAssignor{}.assign(spec)
		for _, id := range ids {
			if !next[id].equal(sg.target[id]) {
				recs = append(recs, shareRecord{typ: shareTargetMemberType, member: id, target: next[id]})
			}
		}
		recs = append(recs, shareRecord{typ: shareTargetEpochType, epoch: epoch, assignedAt: env.now})
		targetEpoch, target = epoch, next[memberID]
	}

	// 3. The member moves to its target at once: nobody else must let
	// go of a shared partition first.
	prevEpoch := int32(0)
	if old != nil {
		prevEpoch = old.current.epoch
	}
	cur := shareCurrent{epoch: targetEpoch, previousEpoch: prevEpoch, assigned: target}
	changed := old == nil || old.current.epoch != cur.epoch || !old.current.assigned.equal(cur.assigned)
	if changed {
		recs = append(recs, shareRecord{typ: shareCurrentType, member: memberID, current: cur})
	}
	res := ShareHeartbeatResult{MemberID: memberID, MemberEpoch: cur.epoch, HeartbeatInterval: env.policy.Share.HeartbeatInterval}
	if changed || r.MemberEpoch == 0 || r.SubscribedTopicNames != nil {
		res.HasAssignment = true
		res.Assignment = unnamed(cur.assigned)
	}

	// 4. With an initializer, the subscribed partitions with no share
	// state, and none being initialized here, are recorded as
	// initializing; the coordinator initializes them after answering
	// (Kafka's group coordinator does so too), then records them
	// initialized and bumps the group epoch, and the members get them
	// at a later heartbeat.
	var initialize []stateTopic
	if env.gateShares {
		initialize = sg.state.uninitialized(subscribed, sg.initializing, env.now)
		if len(initialize) > 0 {
			recs = append(recs, shareRecord{typ: shareStatePartitionType, state: sg.state.withInitializing(initialize)})
		}
	}
	return shareOutcome{
		recs: recs, res: res, member: memberID,
		sessionDeadline: env.now + int64(env.policy.Share.SessionTimeout),
		resolved:        resolved, version: version, subscribed: subscribed, byMember: byMember,
		initialize: initialize, initEpoch: epoch,
	}
}

// initializedRecords are the records that end a background
// initialization of todo's share state, of which failed's failed: the
// partitions still recorded as initializing (DeleteShareGroupOffsets may
// have dropped some meanwhile) move to initialized, or, failed, are no
// longer initializing (a later heartbeat tries them again). When some
// were initialized, the group epoch is bumped, so that the next
// heartbeat computes a target assignment with them.
func (sg *shareGroup) initializedRecords(todo []stateTopic, failed tpSet) []shareRecord {
	pending := tpBuilder{}
	for _, t := range sg.state.initializing {
		for _, p := range t.partitions {
			pending.add(t.id, p)
		}
	}
	still := pending.set()
	var done, bad []stateTopic
	for _, t := range todo {
		ok, no := t, t
		ok.partitions, no.partitions = nil, nil
		for _, p := range t.partitions {
			switch {
			case !still.has(t.id, p):
			case failed.has(t.id, p):
				no.partitions = append(no.partitions, p)
			default:
				ok.partitions = append(ok.partitions, p)
			}
		}
		if len(ok.partitions) > 0 {
			done = append(done, ok)
		}
		if len(no.partitions) > 0 {
			bad = append(bad, no)
		}
	}
	if len(done)+len(bad) == 0 {
		return nil
	}
	recs := []shareRecord{{typ: shareStatePartitionType, state: sg.state.withInitialized(done, bad)}}
	if len(done) > 0 {
		recs = append(recs, shareRecord{typ: shareEpochType, epoch: sg.epoch + 1, metaHash: sg.metaHash})
	}
	return recs
}

// leave handles a member leaving (epoch -1).
func (sg *shareGroup) leave(env *hbEnv, r *ShareHeartbeatRequest) shareOutcome {
	m := sg.members[r.MemberID]
	if m == nil {
		return shareFail(kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", r.MemberID, r.Group))
	}
	return shareOutcome{recs: sg.fenceRecords(env, m), res: ShareHeartbeatResult{MemberID: m.id, MemberEpoch: -1}}
}

// fenceRecords removes members: their assignment, target and metadata,
// then one group epoch bump with the remaining members' metadata hash.
func (sg *shareGroup) fenceRecords(env *hbEnv, gone ...*shareMember) []shareRecord {
	var recs []shareRecord
	skip := map[string]bool{}
	for _, m := range gone {
		skip[m.id] = true
		recs = append(recs,
			shareRecord{typ: shareCurrentType, member: m.id, tombstone: true},
			shareRecord{typ: shareTargetMemberType, member: m.id, tombstone: true},
			shareRecord{typ: shareMemberType, member: m.id, tombstone: true})
	}
	metas := map[string]*shareMemberMeta{}
	for id, m := range sg.members {
		if !skip[id] {
			metas[id] = &m.shareMemberMeta
		}
	}
	_, _, hash := resolveShare(env.topics, metas)
	return append(recs, shareRecord{typ: shareEpochType, epoch: sg.epoch + 1, metaHash: hash})
}

// expired lists the members whose session ended by now.
func (sg *shareGroup) expired(now int64) []*shareMember {
	var out []*shareMember
	for _, m := range sg.sortedMembers() {
		if m.sessionDeadline != 0 && m.sessionDeadline <= now {
			out = append(out, m)
		}
	}
	return out
}

// nextDeadline is the earliest session deadline; 0 none.
func (sg *shareGroup) nextDeadline() int64 {
	var next int64
	for _, m := range sg.members {
		if d := m.sessionDeadline; d != 0 && (next == 0 || d < next) {
			next = d
		}
	}
	return next
}

// restartTimers starts every member's session at now: after a load, as if
// each had just heartbeated.
func (sg *shareGroup) restartTimers(now int64, p *Policy) {
	for _, m := range sg.members {
		m.sessionDeadline = now + int64(p.Share.SessionTimeout)
	}
}

// deleteRecords are the tombstones that end a share group with no members.
func (sg *shareGroup) deleteRecords() []shareRecord {
	var recs []shareRecord
	for _, id := range slices.Sorted(maps.Keys(sg.target)) {
		recs = append(recs, shareRecord{typ: shareTargetMemberType, member: id, tombstone: true})
	}
	if len(sg.state.initializing)+len(sg.state.initialized)+len(sg.state.deleting) > 0 {
		recs = append(recs, shareRecord{typ: shareStatePartitionType, tombstone: true})
	}
	return append(recs,
		shareRecord{typ: shareTargetEpochType, tombstone: true},
		shareRecord{typ: shareEpochType, tombstone: true})
}

// resolve resolves the subscriptions of every member, the one heartbeating
// with its updated metadata.
func (sg *shareGroup) resolve(topics Topics, self string, meta *shareMemberMeta) (map[string][]topicID, map[topicID]assignTopic, int64) {
	metas := make(map[string]*shareMemberMeta, len(sg.members)+1)
	for id, m := range sg.members {
		metas[id] = &m.shareMemberMeta
	}
	metas[self] = meta
	return resolveShare(topics, metas)
}

// resolveShare maps each member's subscribed topic names that exist to
// topic ids, with the subscribed topics and a hash of their metadata (as
// consumer groups hash it).
func resolveShare(topics Topics, metas map[string]*shareMemberMeta) (map[string][]topicID, map[topicID]assignTopic, int64) {
	cm := make(map[string]*memberMeta, len(metas))
	for id, m := range metas {
		cm[id] = &memberMeta{topics: m.topics}
	}
	return (&consumerGroup{}).resolve(topics, cm)
}

// unnamed lists s by topic id, topics in id order.
func unnamed(s tpSet) []TopicPartitions {
	out := make([]TopicPartitions, 0, len(s))
	for _, id := range s.ids() {
		out = append(out, TopicPartitions{TopicID: id, Partitions: slices.Clone(s[id])})
	}
	return out
}

// equal reports whether two share members' metadata are the same.
func (a *shareMemberMeta) equal(b *shareMemberMeta) bool {
	return a.rackID == b.rackID && a.clientID == b.clientID && a.clientHost == b.clientHost && slices.Equal(a.topics, b.topics)
}

// cloneShareMeta copies m's strings out of a request's buffer.
func cloneShareMeta(m shareMemberMeta) shareMemberMeta {
	m.rackID, m.clientID, m.clientHost = strings.Clone(m.rackID), strings.Clone(m.clientID), strings.Clone(m.clientHost)
	topics := make([]string, len(m.topics))
	for i, t := range m.topics {
		topics[i] = strings.Clone(t)
	}
	m.topics = topics
	return m
}

// targetUnion is every partition of the group's target assignment.
func (sg *shareGroup) targetUnion() tpSet {
	b := tpBuilder{}
	for _, t := range sg.target {
		for id, ps := range t {
			for _, p := range ps {
				b.add(id, p)
			}
		}
	}
	return b.set()
}

// initializedIn is the initialized partitions of the subscribed topics.
func (m *shareStateMeta) initializedIn(subscribed map[topicID]assignTopic) tpSet {
	b := tpBuilder{}
	for _, t := range m.initialized {
		if st, ok := subscribed[t.id]; ok {
			for _, p := range t.partitions {
				if p < st.partitions {
					b.add(t.id, p)
				}
			}
		}
	}
	return b.set()
}

// uninitialized lists the partitions of the subscribed topics that are
// neither initialized nor being initialized (inFlight), by topic id.
func (m *shareStateMeta) uninitialized(subscribed map[topicID]assignTopic, inFlight tpBuilder, now int64) []stateTopic {
	known := tpBuilder{}
	for _, t := range m.initialized {
		for _, p := range t.partitions {
			known.add(t.id, p)
		}
	}
	for id, ps := range inFlight {
		for _, p := range ps {
			known.add(id, p)
		}
	}
	have := known.set()
	var out []stateTopic
	for _, id := range slices.SortedFunc(maps.Keys(subscribed), compareIDs) {
		st := subscribed[id]
		t := stateTopic{id: id, name: st.name, createdAt: now}
		for p := range st.partitions {
			if !have.has(id, p) {
				t.partitions = append(t.partitions, p)
			}
		}
		if len(t.partitions) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// withInitializing is m with add being initialized.
func (m *shareStateMeta) withInitializing(add []stateTopic) shareStateMeta {
	return shareStateMeta{initializing: mergeStateTopics(m.initializing, add), initialized: m.initialized, deleting: m.deleting}
}

// withInitialized is m with done moved from initializing to initialized
// and failed no longer being initialized.
func (m *shareStateMeta) withInitialized(done, failed []stateTopic) shareStateMeta {
	initializing := removeStateTopics(removeStateTopics(m.initializing, done), failed)
	return shareStateMeta{initializing: initializing, initialized: mergeStateTopics(m.initialized, done), deleting: m.deleting}
}

// withDeleting is m with the topics ids no longer initializing or
// initialized, and being deleted.
func (m *shareStateMeta) withDeleting(ids map[topicID]string) shareStateMeta {
	keep := func(list []stateTopic) []stateTopic {
		return slices.DeleteFunc(slices.Clone(list), func(t stateTopic) bool { _, ok := ids[t.id]; return ok })
	}
	var del []stateTopic
	for id, name := range ids {
		del = append(del, stateTopic{id: id, name: name})
	}
	return shareStateMeta{initializing: keep(m.initializing), initialized: keep(m.initialized), deleting: mergeStateTopics(m.deleting, del)}
}

// withoutDeleting is m with the topics ids deleted.
func (m *shareStateMeta) withoutDeleting(ids map[topicID]string) shareStateMeta {
	out := *m
	out.deleting = slices.DeleteFunc(slices.Clone(m.deleting), func(t stateTopic) bool { _, ok := ids[t.id]; return ok })
	return out
}

// mergeStateTopics is the union of two lists sorted by topic id; a topic
// in both keeps a's name and creation time.
func mergeStateTopics(a, b []stateTopic) []stateTopic {
	byID := map[topicID]stateTopic{}
	for _, t := range b {
		byID[t.id] = t
	}
	for _, t := range a {
		if o, ok := byID[t.id]; ok {
			t.partitions = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(t.partitions), o.partitions...))))
		}
		byID[t.id] = t
	}
	return slices.SortedFunc(maps.Values(byID), func(x, y stateTopic) int { return compareIDs(x.id, y.id) })
}

// setInFlight adds (on) or removes the partitions of ts from the
// partitions being initialized here.
func (sg *shareGroup) setInFlight(ts []stateTopic, on bool) {
	if sg.initializing == nil {
		sg.initializing = tpBuilder{}
	}
	for _, t := range ts {
		for _, p := range t.partitions {
			if on {
				sg.initializing.add(t.id, p)
			} else if ps := slices.DeleteFunc(sg.initializing[t.id], func(q int32) bool { return q == p }); len(ps) > 0 {
				sg.initializing[t.id] = ps
			} else {
				delete(sg.initializing, t.id)
			}
		}
	}
}

// removeStateTopics is a without the partitions of b; topics left with
// none are dropped.
func removeStateTopics(a, b []stateTopic) []stateTopic {
	var out []stateTopic
	for _, t := range a {
		for _, o := range b {
			if o.id == t.id {
				t.partitions = slices.DeleteFunc(slices.Clone(t.partitions), func(p int32) bool { return slices.Contains(o.partitions, p) })
			}
		}
		if len(t.partitions) > 0 {
			out = append(out, t)
		}
	}
	return out
}
