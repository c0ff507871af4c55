package group

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// newMemberJoinTimeout is how long a new member may wait in a rebalance
// without a JoinGroup response before it is dropped (Kafka's
// NewMemberJoinTimeoutMs): its client may be gone.
const newMemberJoinTimeout = 5 * 60 * 1000

// Policy is what the broker's configuration says about every group.
type Policy struct {
	InitialRebalanceDelay int64 // ms, group.initial.rebalance.delay.ms
	MinSessionTimeout     int32 // ms, group.min.session.timeout.ms
	MaxSessionTimeout     int32 // ms, group.max.session.timeout.ms
	MaxSize               int   // group.max.size
	// NewID returns a unique suffix for a new member id (Kafka: a UUID).
	NewID func() string

	// KIP-848 consumer groups.
	ConsumerSessionTimeout    int32    // ms, group.consumer.session.timeout.ms
	ConsumerHeartbeatInterval int32    // ms, group.consumer.heartbeat.interval.ms
	ConsumerMaxSize           int      // group.consumer.max.size
	ConsumerAssignors         []string // group.consumer.assignors; the first is the default
	// UpgradeAllowed and DowngradeAllowed: group.consumer.migration.policy
	// lets non-empty groups convert between the protocols (empty groups
	// always may).
	UpgradeAllowed, DowngradeAllowed bool
	// ConsumerAssignmentInterval (ms,
	// group.consumer.assignment.interval.ms, KIP-1263): a consumer
	// group's target assignment is computed again at most once per
	// interval; a heartbeat that bumps the group epoch sooner keeps the
	// last target, and a later heartbeat computes the next.
	ConsumerAssignmentInterval int64

	// KIP-1071 streams groups (streams_*.go).
	Streams StreamsPolicy
	Share   SharePolicy // KIP-932 share groups
}

// Group is one classic group: Kafka's state machine, with no I/O and no
// clock. Every method takes the time in ms. Responses are queued as
// callbacks (takeReady); writes are queued as stores (takeStores), which
// the owner persists and reports with stored. The Coordinator makes and
// drives groups, one call at a time per group (under its shard's lock).
type Group struct {
	id     string
	policy *Policy

	state        State
	stateTime    int64 // ms, when state last changed; -1 unknown
	protocolType string
	protocol     string // the generation's protocol; "" none
	generation   int32
	leader       string

	members      map[string]*member
	order        []*member         // join order: leader succession, response order
	static       map[string]string // instance id -> member id
	pending      map[string]int64  // member ids handed out (MEMBER_ID_REQUIRED) -> expiry
	pendingSync  map[string]bool   // members of the generation that have not synced
	awaitingJoin int               // members with a JoinGroup waiting
	votes        map[string]int    // protocol -> members supporting it

	// newMemberAdded: a member joined during the first rebalance, so the
	// initial delay is extended (group.initial.rebalance.delay.ms).
	newMemberAdded bool
	join           struct {
		deadline  int64 // ms; 0 none
		initial   bool  // the initial delayed join: completes only at the deadline
		remaining int64 // ms the initial delay may still be extended by
	}
	syncDeadline   int64 // ms; members not synced by then are removed
	syncGeneration int32

	offsets map[TopicPartition]Offset
	// txnOffsets are the offsets of transactions not ended yet, by
	// producer id (TxnOffsetCommit): invisible until committed.
	txnOffsets map[int64]map[TopicPartition]Offset

	// consumer is the group's KIP-848 state when it uses the consumer
	// protocol; then the classic fields above are those of an empty
	// group, and the classic requests find no member.
	consumer *consumerGroup
	// streams is the group's KIP-1071 state when it uses the streams
	// protocol; then, as for consumer, the classic fields are an empty
	// group's.
	streams *streamsGroup
	// share is the group's KIP-932 share group state; nil unless it is a
	// share group (share_group.go).
	share *shareGroup

	stores []store
	ready  []func()
}

// storeKind says what waits on a store.
type storeKind int8

const (
	storeGroup     storeKind = iota // a snapshot; nothing waits
	storeSync                       // the leader's assignment; SyncGroups wait
	storeStatic                     // a static member's new id in a stable group; its JoinGroup waits
	storeTombstone                  // the group is deleted
)

// store is a write of the group's metadata the owner must make.
type store struct {
	kind       storeKind
	generation int32
	assignment map[string][]byte // storeSync

	// storeStatic: what to restore if the write fails.
	m                        *member
	oldID, prevLeader        string
	oldProtocols             []Protocol
	oldRebalance, oldSession int32
	skipAssignment           bool
}

// newGroup returns an empty group.
func newGroup(id string, policy *Policy, now int64) *Group {
	return &Group{
		id:          id,
		policy:      policy,
		state:       Empty,
		stateTime:   now,
		members:     map[string]*member{},
		static:      map[string]string{},
		pending:     map[string]int64{},
		pendingSync: map[string]bool{},
		votes:       map[string]int{},
		offsets:     map[TopicPartition]Offset{},
		txnOffsets:  map[int64]map[TopicPartition]Offset{},
	}
}

// ID is the group id.
func (g *Group) ID() string { return g.id }

// State is the group's state.
func (g *Group) State() State {
	if g.consumer != nil && g.state != Dead {
		return g.consumer.stateOf()
	}
	if g.share != nil && g.state != Dead {
		return g.share.stateOf()
	}
	if g.streams != nil && g.state != Dead {
		return g.streams.stateOf()
	}
	return g.state
}

// Generation is the group's generation.
func (g *Group) Generation() int32 { return g.generation }

// ProtocolType is the members' protocol type ("consumer"), kept while the
// group is empty; "" for a group only used for offsets.
func (g *Group) ProtocolType() string { return g.protocolType }

// Protocol is the generation's assignment protocol ("" if none).
func (g *Group) Protocol() string { return g.protocol }

// Leader is the member id of the generation's leader ("" if none).
func (g *Group) Leader() string { return g.leader }

// Size is the number of members.
func (g *Group) Size() int { return len(g.members) }

// Listing is the group as ListGroups shows it.
func (g *Group) Listing() Listing {
	if g.share != nil {
		return Listing{Group: g.id, ProtocolType: ShareType, State: g.State(), Type: ShareType}
	}
	if g.consumer != nil {
		return Listing{Group: g.id, ProtocolType: consumerProtocolType, State: g.State(), Type: ConsumerType}
	}
	if g.streams != nil {
		return Listing{Group: g.id, ProtocolType: streamsProtocolType, State: g.State(), Type: StreamsType}
	}
	return Listing{Group: g.id, ProtocolType: g.protocolType, State: g.state, Type: ClassicType}
}

// Describe is the group as DescribeGroups shows it: members' metadata and
// assignments only once Stable.
func (g *Group) Describe() Description {
	d := Description{State: g.state, ProtocolType: g.protocolType}
	stable := g.state == Stable
	if stable {
		d.Protocol = g.protocol
	}
	d.Members = make([]MemberDescription, len(g.order))
	for i, m := range g.order {
		md := MemberDescription{MemberID: m.id, InstanceID: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost}
		if stable {
			md.Metadata, md.Assignment = m.metadataFor(g.protocol), m.assignment
		}
		d.Members[i] = md
	}
	return d
}

// takeReady returns the queued response callbacks, to run once the
// caller released its locks.
func (g *Group) takeReady() []func() {
	r := g.ready
	g.ready = nil
	return r
}

// takeStores returns the writes to make, in order; report each with
// stored.
func (g *Group) takeStores() []store {
	s := g.stores
	g.stores = nil
	return s
}

func (g *Group) transition(now int64, s State) {
	g.state = s
	g.stateTime = now
}

func (g *Group) respondJoin(done func(JoinResult), r JoinResult) {
	if done != nil {
		g.ready = append(g.ready, func() { done(r) })
	}
}

func (g *Group) respondSync(done func(SyncResult), r SyncResult) {
	if done != nil {
		g.ready = append(g.ready, func() { done(r) })
	}
}

// invokeJoin answers m's waiting JoinGroup, if any.
func (g *Group) invokeJoin(m *member, r JoinResult) {
	if m.joinDone == nil {
		return
	}
	g.respondJoin(m.joinDone, r)
	m.joinDone = nil
	g.awaitingJoin--
}

// invokeSync answers m's waiting SyncGroup, if any.
func (g *Group) invokeSync(m *member, r SyncResult) {
	if m.syncDone == nil {
		return
	}
	g.respondSync(m.syncDone, r)
	m.syncDone = nil
}

// joinError is a JoinGroup that failed with err.
func joinError(err error, memberID string) JoinResult {
	return JoinResult{Err: err, MemberID: memberID, Generation: -1}
}

// rebalanceTimeout is the longest rebalance timeout among the members.
func (g *Group) rebalanceTimeout() int64 {
	var t int32
	for _, m := range g.order {
		t = max(t, m.rebalanceTimeout)
	}
	return int64(t)
}

// supports reports whether a member with these protocols may join: any
// non-empty protocol list when the group is empty, else the group's
// protocol type and a protocol every member supports.
func (g *Group) supports(protocolType string, ps []Protocol) bool {
	if g.state == Empty {
		return protocolType != "" && len(ps) > 0
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range ps {
		if g.votes[p.Name] == len(g.members) {
			return true
		}
	}
	return false
}

// acceptJoining applies group.max.size.
func (g *Group) acceptJoining(memberID string) bool {
	m := g.members[memberID]
	switch g.state {
	case Empty, Dead:
		return true
	case PreparingRebalance:
		return (m != nil && m.joinDone != nil) || g.awaitingJoin < g.policy.MaxSize
	default:
		return m != nil || len(g.members) < g.policy.MaxSize
	}
}

// validateMember checks a request's member and instance ids.
func (g *Group) validateMember(memberID, instanceID string) error {
	if instanceID != "" {
		cur, ok := g.static[instanceID]
		if !ok {
			return kerr.UnknownMemberID
		}
		if cur != memberID {
			return kerr.FencedInstanceID
		}
	}
	if g.members[memberID] == nil {
		return kerr.UnknownMemberID
	}
	return nil
}

// Join handles a JoinGroup; done is called (through takeReady) with the
// response, now or when the rebalance completes.
func (g *Group) Join(now int64, r *JoinRequest, done func(JoinResult)) {
	if r.SessionTimeout < g.policy.MinSessionTimeout || r.SessionTimeout > g.policy.MaxSessionTimeout {
		g.respondJoin(done, joinError(kerr.InvalidSessionTimeout, r.MemberID))
		return
	}
	if !g.acceptJoining(r.MemberID) {
		if m := g.members[r.MemberID]; m != nil {
			g.removeMember(now, m)
		}
		g.respondJoin(done, joinError(kerr.GroupMaxSizeReached, ""))
	} else if r.MemberID == "" {
		g.joinNew(now, r, done)
	} else {
		g.joinKnown(now, r, done)
	}
	g.tryCompleteJoin(now)
}

func (g *Group) joinNew(now int64, r *JoinRequest, done func(JoinResult)) {
	switch {
	case g.state == Dead:
		g.respondJoin(done, joinError(kerr.CoordinatorNotAvailable, ""))
		return
	case !g.supports(r.ProtocolType, r.Protocols):
		g.respondJoin(done, joinError(kerr.InconsistentGroupProtocol, ""))
		return
	}
	prefix := r.ClientID
	if r.InstanceID != "" {
		prefix = r.InstanceID
	}
	id := prefix + "-" + g.policy.NewID()
	switch {
	case r.InstanceID != "":
		if old, ok := g.static[r.InstanceID]; ok {
			g.replaceStatic(now, old, id, r, done)
			return
		}
	case r.RequireKnownMemberID:
		g.pending[id] = now + int64(r.SessionTimeout)
		g.respondJoin(done, joinError(kerr.MemberIDRequired, id))
		return
	}
	g.addMember(now, id, r, done)
}

func (g *Group) joinKnown(now int64, r *JoinRequest, done func(JoinResult)) {
	switch {
	case g.state == Dead:
		g.respondJoin(done, joinError(kerr.CoordinatorNotAvailable, r.MemberID))
		return
	case !g.supports(r.ProtocolType, r.Protocols):
		g.respondJoin(done, joinError(kerr.InconsistentGroupProtocol, r.MemberID))
		return
	}
	if _, ok := g.pending[r.MemberID]; ok {
		if r.InstanceID != "" {
			// Only dynamic members are handed ids to come back with.
			g.respondJoin(done, joinError(kerr.UnknownMemberID, r.MemberID))
			return
		}
		delete(g.pending, r.MemberID)
		g.addMember(now, strings.Clone(r.MemberID), r, done)
		return
	}
	if r.InstanceID != "" {
		cur, ok := g.static[r.InstanceID]
		if ok && cur != r.MemberID {
			g.respondJoin(done, joinError(kerr.FencedInstanceID, r.MemberID))
			return
		}
		if !ok {
			g.respondJoin(done, joinError(kerr.UnknownMemberID, r.MemberID))
			return
		}
	}
	m := g.members[r.MemberID]
	if m == nil {
		g.respondJoin(done, joinError(kerr.UnknownMemberID, r.MemberID))
		return
	}
	switch g.state {
	case PreparingRebalance:
		g.updateMember(m, r.Protocols, r.RebalanceTimeout, r.SessionTimeout, done)
		g.maybePrepareRebalance(now)
	case CompletingRebalance:
		if m.matches(r.Protocols) {
			// The member lost its JoinGroup response: send it again.
			g.respondJoin(done, g.joinResult(m, m.id == g.leader))
			return
		}
		g.updateMember(m, r.Protocols, r.RebalanceTimeout, r.SessionTimeout, done)
		g.maybePrepareRebalance(now)
	case Stable:
		if m.id == g.leader || !m.matches(r.Protocols) {
			// The leader rejoins to rebalance on changes only it sees
			// (topic metadata); others when their subscription changed.
			g.updateMember(m, r.Protocols, r.RebalanceTimeout, r.SessionTimeout, done)
			g.maybePrepareRebalance(now)
			return
		}
		g.respondJoin(done, g.joinResult(m, false))
	default:
		g.respondJoin(done, joinError(kerr.UnknownMemberID, r.MemberID))
	}
}

// joinResult is the current generation as m's JoinGroup response tells it.
func (g *Group) joinResult(m *member, withMembers bool) JoinResult {
	r := JoinResult{
		MemberID:     m.id,
		Generation:   g.generation,
		ProtocolType: g.protocolType,
		Protocol:     g.protocol,
		Leader:       g.leader,
	}
	if withMembers {
		r.Members = g.memberList()
	}
	return r
}

// memberList is what the leader gets to assign: every member with its
// metadata for the generation's protocol.
func (g *Group) memberList() []JoinMember {
	out := make([]JoinMember, len(g.order))
	for i, m := range g.order {
		out[i] = JoinMember{MemberID: m.id, InstanceID: m.instanceID, Metadata: m.metadataFor(g.protocol)}
	}
	return out
}

// addMember adds a member that waits for the rebalance it triggers.
func (g *Group) addMember(now int64, id string, r *JoinRequest, done func(JoinResult)) {
	m := &member{
		id:               id,
		instanceID:       strings.Clone(r.InstanceID),
		clientID:         strings.Clone(r.ClientID),
		clientHost:       strings.Clone(r.ClientHost),
		rebalanceTimeout: r.RebalanceTimeout,
		sessionTimeout:   r.SessionTimeout,
		protocolType:     strings.Clone(r.ProtocolType),
		protocols:        cloneProtocols(r.Protocols),
		isNew:            true,
	}
	if g.state == PreparingRebalance && g.generation == 0 {
		g.newMemberAdded = true
	}
	g.add(m)
	m.joinDone = done
	if done != nil {
		g.awaitingJoin++
	}
	m.deadline = now + newMemberJoinTimeout
	g.maybePrepareRebalance(now)
}

// add puts m in the group's books.
func (g *Group) add(m *member) {
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	if g.leader == "" {
		g.leader = m.id
	}
	g.members[m.id] = m
	g.order = append(g.order, m)
	for _, p := range m.protocols {
		g.votes[p.Name]++
	}
	if m.instanceID != "" {
		g.static[m.instanceID] = m.id
	}
	delete(g.pending, m.id)
}

// remove takes m out of the group's books; it answers nothing.
func (g *Group) remove(m *member) {
	if g.members[m.id] != m {
		return
	}
	delete(g.members, m.id)
	if i := slices.Index(g.order, m); i >= 0 {
		g.order = slices.Delete(g.order, i, i+1)
	}
	for _, p := range m.protocols {
		if g.votes[p.Name]--; g.votes[p.Name] <= 0 {
			delete(g.votes, p.Name)
		}
	}
	if m.joinDone != nil {
		g.awaitingJoin--
		m.joinDone = nil
	}
	if m.instanceID != "" && g.static[m.instanceID] == m.id {
		delete(g.static, m.instanceID)
	}
	delete(g.pendingSync, m.id)
	if g.leader == m.id {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0].id
		}
	}
}

// updateMember replaces m's protocols and timeouts and, with done, makes
// it wait for the rebalance. A JoinGroup already waiting for m (a retry on
// another connection) is told to join again.
func (g *Group) updateMember(m *member, ps []Protocol, rebalanceTimeout, sessionTimeout int32, done func(JoinResult)) {
	for _, p := range m.protocols {
		if g.votes[p.Name]--; g.votes[p.Name] <= 0 {
			delete(g.votes, p.Name)
		}
	}
	m.protocols = cloneProtocols(ps)
	for _, p := range m.protocols {
		g.votes[p.Name]++
	}
	m.rebalanceTimeout, m.sessionTimeout = rebalanceTimeout, sessionTimeout
	switch {
	case done != nil && m.joinDone == nil:
		g.awaitingJoin++
	case done == nil && m.joinDone != nil:
		g.awaitingJoin--
	case done != nil && m.joinDone != nil:
		g.respondJoin(m.joinDone, joinError(kerr.RebalanceInProgress, m.id))
	}
	m.joinDone = done
}

// replaceStatic gives the static member oldID its new id: the instance
// restarted. A request still waiting under the old id is fenced.
func (g *Group) replaceStatic(now int64, oldID, newID string, r *JoinRequest, done func(JoinResult)) {
	prevLeader := g.leader
	m := g.members[oldID]
	g.invokeJoin(m, joinError(kerr.FencedInstanceID, oldID))
	g.invokeSync(m, SyncResult{Err: kerr.FencedInstanceID})
	g.rename(m, newID)
	m.deadline = now + int64(m.sessionTimeout)
	if m.isNew {
		m.deadline = now + newMemberJoinTimeout // still waiting for its first generation
	}
	st := store{
		kind: storeStatic, generation: g.generation, m: m, oldID: oldID, prevLeader: prevLeader,
		oldProtocols: m.protocols, oldRebalance: m.rebalanceTimeout, oldSession: m.sessionTimeout,
		skipAssignment: r.SupportsSkipAssignment,
	}
	g.updateMember(m, r.Protocols, r.RebalanceTimeout, r.SessionTimeout, done)
	switch g.state {
	case Stable:
		if p, ok := g.selectProtocol(); ok && p == g.protocol {
			// Nothing changes for the others: persist the new id and
			// answer without a rebalance.
			g.stores = append(g.stores, st)
			return
		}
		g.prepareRebalance(now)
	case CompletingRebalance:
		// The leader may be assigning to the old id: start over.
		g.prepareRebalance(now)
	}
}

// rename changes a member's id in the group's books.
func (g *Group) rename(m *member, id string) {
	old := m.id
	delete(g.members, old)
	m.id = id
	g.members[id] = m
	if g.leader == old {
		g.leader = id
	}
	if m.instanceID != "" {
		g.static[m.instanceID] = id
	}
	if g.pendingSync[old] {
		delete(g.pendingSync, old)
		g.pendingSync[id] = true
	}
}

func (g *Group) maybePrepareRebalance(now int64) {
	switch g.state {
	case Stable, CompletingRebalance, Empty:
		g.prepareRebalance(now)
	}
}

// prepareRebalance starts a rebalance: members must join again.
func (g *Group) prepareRebalance(now int64) {
	if g.state == CompletingRebalance {
		g.resetAssignments(kerr.RebalanceInProgress)
	}
	g.syncDeadline = 0
	clear(g.pendingSync)
	if g.state == Empty {
		// The first members wait for others to arrive: one rebalance
		// rather than one per member.
		d := g.policy.InitialRebalanceDelay
		g.join.deadline, g.join.initial, g.join.remaining = now+d, true, max(g.rebalanceTimeout()-d, 0)
	} else {
		g.join.deadline, g.join.initial, g.join.remaining = now+g.rebalanceTimeout(), false, 0
	}
	g.transition(now, PreparingRebalance)
}

// resetAssignments drops the assignments of a generation that will not
// be, answering waiting SyncGroups with err.
func (g *Group) resetAssignments(err error) {
	for _, m := range g.order {
		m.assignment = nil
		g.invokeSync(m, SyncResult{Err: err, ProtocolType: g.protocolType, Protocol: g.protocol})
	}
}

// tryCompleteJoin completes the rebalance once every member joined.
func (g *Group) tryCompleteJoin(now int64) {
	if g.state == PreparingRebalance && !g.join.initial && g.awaitingJoin == len(g.members) && len(g.pending) == 0 {
		g.completeJoin(now)
	}
}

// completeJoin forms the next generation from the members that joined.
func (g *Group) completeJoin(now int64) {
	g.join.deadline, g.join.initial = 0, false
	for _, m := range slices.Clone(g.order) {
		// Static members keep their place until their session expires.
		if m.joinDone == nil && m.instanceID == "" {
			g.remove(m)
		}
	}
	if len(g.members) > 0 && !g.electJoinedLeader() {
		// Nobody rejoined: wait another rebalance timeout for the
		// session timeouts to clear the group.
		g.join.deadline = now + g.rebalanceTimeout()
		return
	}
	g.generation++
	clear(g.pendingSync)
	g.newMemberAdded = false
	if len(g.members) == 0 {
		g.protocol = ""
		g.transition(now, Empty)
		g.stores = append(g.stores, store{kind: storeGroup, generation: g.generation})
		return
	}
	g.protocol, _ = g.selectProtocol()
	g.transition(now, CompletingRebalance)
	for _, m := range g.order {
		g.invokeJoin(m, g.joinResult(m, m.id == g.leader))
		m.deadline = now + int64(m.sessionTimeout)
		m.isNew = false
		g.pendingSync[m.id] = true
	}
	g.syncDeadline, g.syncGeneration = now+g.rebalanceTimeout(), g.generation
}

// electJoinedLeader keeps the leader if it joined, else picks the first
// member that did; false if none did.
func (g *Group) electJoinedLeader() bool {
	if m := g.members[g.leader]; m != nil && m.joinDone != nil {
		return true
	}
	for _, m := range g.order {
		if m.joinDone != nil {
			g.leader = m.id
			return true
		}
	}
	return false
}

// selectProtocol picks, among the protocols every member supports, the
// one most members prefer; ties go to the leader's preference.
func (g *Group) selectProtocol() (string, bool) {
	if len(g.order) == 0 {
		return "", false
	}
	n := len(g.members)
	tally := map[string]int{}
	for _, m := range g.order {
		for _, p := range m.protocols {
			if g.votes[p.Name] == n {
				tally[p.Name]++
				break
			}
		}
	}
	ref := g.order[0]
	if l := g.members[g.leader]; l != nil {
		ref = l
	}
	best, votes := "", -1
	for _, p := range ref.protocols {
		if g.votes[p.Name] == n && tally[p.Name] > votes {
			best, votes = p.Name, tally[p.Name]
		}
	}
	return best, votes >= 0
}

// Sync handles a SyncGroup; done is called (through takeReady) with the
// member's assignment once the leader's is stored.
func (g *Group) Sync(now int64, r *SyncRequest, done func(SyncResult)) {
	fail := func(err error) { g.respondSync(done, SyncResult{Err: err}) }
	if g.state == Dead {
		fail(kerr.CoordinatorNotAvailable)
		return
	}
	if err := g.validateMember(r.MemberID, r.InstanceID); err != nil {
		fail(err)
		return
	}
	switch {
	case r.Generation != g.generation:
		fail(kerr.IllegalGeneration)
		return
	case r.ProtocolType != nil && *r.ProtocolType != g.protocolType,
		r.Protocol != nil && *r.Protocol != g.protocol:
		fail(kerr.InconsistentGroupProtocol)
		return
	}
	m := g.members[r.MemberID]
	switch g.state {
	case Empty:
		fail(kerr.UnknownMemberID)
	case PreparingRebalance:
		fail(kerr.RebalanceInProgress)
	case CompletingRebalance:
		if m.syncDone != nil {
			g.respondSync(m.syncDone, SyncResult{Err: kerr.RebalanceInProgress})
		}
		m.syncDone = done
		delete(g.pendingSync, m.id)
		if m.id != g.leader {
			return
		}
		assignment := make(map[string][]byte, len(g.members))
		for _, a := range r.Assignments {
			if am := g.members[a.MemberID]; am != nil {
				assignment[am.id] = bytes0(a.Assignment)
			}
		}
		for id := range g.members {
			if _, ok := assignment[id]; !ok {
				assignment[id] = []byte{}
			}
		}
		g.stores = append(g.stores, store{kind: storeSync, generation: g.generation, assignment: assignment})
	case Stable:
		delete(g.pendingSync, m.id)
		g.respondSync(done, SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: m.assignment})
		m.deadline = now + int64(m.sessionTimeout)
	}
}

// bytes0 copies b, never returning nil: an assignment is never null.
func bytes0(b []byte) []byte { return append([]byte{}, b...) }

// stored reports the outcome of a store taken from takeStores: nil on
// success, else the error for the members waiting on it.
func (g *Group) stored(now int64, st store, err error) {
	switch st.kind {
	case storeSync:
		if g.state != CompletingRebalance || g.generation != st.generation {
			return // the group moved on while the write was made
		}
		if err != nil {
			g.resetAssignments(err)
			g.maybePrepareRebalance(now)
			return
		}
		for _, m := range g.order {
			m.assignment = st.assignment[m.id]
			if m.syncDone != nil {
				g.invokeSync(m, SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: m.assignment})
				m.deadline = now + int64(m.sessionTimeout)
			}
		}
		g.transition(now, Stable)
	case storeStatic:
		m := st.m
		if g.members[m.id] != m {
			return
		}
		if err != nil {
			done := m.joinDone
			g.updateMember(m, st.oldProtocols, st.oldRebalance, st.oldSession, nil)
			g.rename(m, st.oldID)
			m.deadline = now + int64(m.sessionTimeout)
			g.respondJoin(done, JoinResult{Err: err, Generation: g.generation,
				ProtocolType: g.protocolType, Protocol: g.protocol, Leader: st.prevLeader})
			return
		}
		leads := g.leader == m.id
		if st.skipAssignment {
			r := g.joinResult(m, leads)
			r.SkipAssignment = leads
			g.invokeJoin(m, r)
			return
		}
		// Before v9 the old leader id is returned, so a restarted leader
		// does not assign a stable group (its assignment would be lost).
		r := g.joinResult(m, false)
		r.Leader = st.prevLeader
		g.invokeJoin(m, r)
	}
}

// Heartbeat handles a Heartbeat and returns its error (nil for none).
func (g *Group) Heartbeat(now int64, r *HeartbeatRequest) error {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	if err := g.validateMember(r.MemberID, r.InstanceID); err != nil {
		return err
	}
	if r.Generation != g.generation {
		return kerr.IllegalGeneration
	}
	m := g.members[r.MemberID]
	switch g.state {
	case PreparingRebalance:
		m.deadline = now + int64(m.sessionTimeout)
		return kerr.RebalanceInProgress
	case CompletingRebalance, Stable:
		m.deadline = now + int64(m.sessionTimeout)
		return nil
	}
	return kerr.UnknownMemberID
}

// Leave handles a LeaveGroup: an error per member (nil for one that
// left), or a group-level error.
func (g *Group) Leave(now int64, leaving []LeaveMember) ([]error, error) {
	if g.state == Dead {
		return nil, kerr.CoordinatorNotAvailable
	}
	errs := make([]error, len(leaving))
	for i, l := range leaving {
		switch {
		case l.InstanceID != "":
			cur, ok := g.static[l.InstanceID]
			switch {
			case !ok:
				errs[i] = kerr.UnknownMemberID
			case l.MemberID != "" && l.MemberID != cur:
				errs[i] = kerr.FencedInstanceID
			default:
				g.removeMember(now, g.members[cur])
			}
		default:
			if _, ok := g.pending[l.MemberID]; ok {
				delete(g.pending, l.MemberID)
				g.tryCompleteJoin(now)
				continue
			}
			m := g.members[l.MemberID]
			if m == nil {
				errs[i] = kerr.UnknownMemberID
				continue
			}
			g.removeMember(now, m)
		}
	}
	return errs, nil
}

// removeMember drops a member that left or expired and rebalances the
// others.
func (g *Group) removeMember(now int64, m *member) {
	g.invokeJoin(m, joinError(kerr.UnknownMemberID, m.id))
	g.invokeSync(m, SyncResult{Err: kerr.UnknownMemberID})
	g.remove(m)
	switch g.state {
	case Stable, CompletingRebalance:
		g.maybePrepareRebalance(now)
	case PreparingRebalance:
		g.tryCompleteJoin(now)
	}
}

// NextDeadline is the earliest time (ms) Tick has something to do; 0 if
// nothing is scheduled.
func (g *Group) NextDeadline() int64 {
	if g.consumer != nil {
		return g.consumer.nextDeadline()
	}
	if g.share != nil {
		return g.share.nextDeadline()
	}
	if g.streams != nil {
		return g.streams.nextDeadline()
	}
	var next int64
	at := func(t int64) {
		if t != 0 && (next == 0 || t < next) {
			next = t
		}
	}
	for _, m := range g.order {
		at(m.deadline)
	}
	for _, t := range g.pending {
		at(t)
	}
	if g.state == PreparingRebalance {
		at(g.join.deadline)
	}
	at(g.syncDeadline)
	return next
}

// Tick runs what is due at now: session and join timeouts of members,
// the end of a rebalance's join phase, the sync deadline.
func (g *Group) Tick(now int64) {
	for _, m := range slices.Clone(g.order) {
		if m.deadline == 0 || now < m.deadline || g.members[m.id] != m {
			continue
		}
		if m.isNew || (m.joinDone == nil && m.syncDone == nil) {
			g.removeMember(now, m)
		} else {
			m.deadline = 0 // waiting on the group keeps it alive
		}
	}
	for id, t := range g.pending {
		if now >= t {
			delete(g.pending, id)
			g.tryCompleteJoin(now)
		}
	}
	if g.state == PreparingRebalance && g.join.deadline != 0 && now >= g.join.deadline {
		if g.join.initial && g.newMemberAdded && g.join.remaining > 0 {
			g.newMemberAdded = false
			d := min(g.policy.InitialRebalanceDelay, g.join.remaining)
			g.join.deadline, g.join.remaining = now+d, max(g.join.remaining-d, 0)
		} else {
			g.completeJoin(now)
		}
	}
	if g.syncDeadline != 0 && now >= g.syncDeadline {
		g.syncDeadline = 0
		if (g.state == CompletingRebalance || g.state == Stable) && g.generation == g.syncGeneration {
			for _, m := range slices.Clone(g.order) {
				if g.pendingSync[m.id] {
					g.removeMember(now, m)
				}
			}
		}
	}
}
