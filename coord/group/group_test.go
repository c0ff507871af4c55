package group

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/shards"
)

// Tests of the state machine alone: no sockets, no files, no clock. The
// harness plays the coordinator: it makes the group's stores succeed (or
// fail when told), runs due timers and delivers the queued responses.

type harness struct {
	t      *testing.T
	g      *Group
	now    int64
	ids    int
	stores []storeKind
	fail   error // error of the next stores, nil to succeed
}

func newHarness(t *testing.T, delay int64) *harness {
	h := &harness{t: t, now: 1_000_000}
	policy := &Policy{InitialRebalanceDelay: delay, MinSessionTimeout: 100, MaxSessionTimeout: 100_000, MaxSize: 1000}
	policy.NewID = func() string { h.ids++; return fmt.Sprintf("uuid%d", h.ids) }
	h.g = newGroup("g", policy, h.now)
	return h
}

// settle does what the coordinator does after each call.
func (h *harness) settle() {
	for range 64 {
		stores := h.g.takeStores()
		for _, st := range stores {
			h.stores = append(h.stores, st.kind)
			h.g.stored(h.now, st, h.fail)
		}
		if d := h.g.NextDeadline(); d != 0 && d <= h.now {
			h.g.Tick(h.now)
			continue
		}
		if len(stores) == 0 {
			break
		}
	}
	for _, f := range h.g.takeReady() {
		f()
	}
}

// advance moves the clock and runs what is due.
func (h *harness) advance(ms int64) {
	h.now += ms
	h.g.Tick(h.now)
	h.settle()
}

// joinCall is a JoinGroup whose response may come later.
type joinCall struct {
	done bool
	res  JoinResult
}

func (h *harness) join(r JoinRequest) *joinCall {
	c := &joinCall{}
	if r.SessionTimeout == 0 {
		r.SessionTimeout = 1000
	}
	if r.RebalanceTimeout == 0 {
		r.RebalanceTimeout = 5000
	}
	if r.ProtocolType == "" {
		r.ProtocolType = "consumer"
	}
	if r.Protocols == nil {
		r.Protocols = []Protocol{{Name: "range", Metadata: []byte("meta-" + r.ClientID)}}
	}
	h.g.Join(h.now, &r, func(res JoinResult) {
		if c.done {
			h.t.Fatalf("join of %s answered twice", r.ClientID)
		}
		c.done, c.res = true, res
	})
	h.settle()
	return c
}

// joinDynamic joins a new dynamic member in two steps (v4+) and returns
// the second call, which waits for the rebalance.
func (h *harness) joinDynamic(client string, ps ...Protocol) *joinCall {
	h.t.Helper()
	first := h.join(JoinRequest{ClientID: client, RequireKnownMemberID: true, Protocols: ps})
	if !first.done || !errors.Is(first.res.Err, kerr.MemberIDRequired) {
		h.t.Fatalf("first join of %s: %+v", client, first)
	}
	return h.join(JoinRequest{ClientID: client, MemberID: first.res.MemberID, RequireKnownMemberID: true, Protocols: ps})
}

type syncCall struct {
	done bool
	res  SyncResult
}

func (h *harness) sync(memberID, instanceID string, gen int32, assign ...Assignment) *syncCall {
	c := &syncCall{}
	h.g.Sync(h.now, &SyncRequest{MemberID: memberID, InstanceID: instanceID, Generation: gen, Assignments: assign}, func(r SyncResult) {
		c.done, c.res = true, r
	})
	h.settle()
	return c
}

func (h *harness) heartbeat(memberID, instanceID string, gen int32) error {
	err := h.g.Heartbeat(h.now, &HeartbeatRequest{MemberID: memberID, InstanceID: instanceID, Generation: gen})
	h.settle()
	return err
}

func wantCode(t *testing.T, what string, got error, want *kerr.Error) {
	t.Helper()
	var w int16
	if want != nil {
		w = want.Code
	}
	if shards.Code(got) != w {
		t.Fatalf("%s: error %v, want %v", what, got, want)
	}
}

func wantState(t *testing.T, g *Group, s State) {
	t.Helper()
	if g.State() != s {
		t.Fatalf("state %s, want %s", g.State(), s)
	}
}

// stable forms a Stable generation of the given members and returns
// their member ids, the leader first.
func (h *harness) stable(clients ...string) []string {
	h.t.Helper()
	calls := make([]*joinCall, len(clients))
	for i, c := range clients {
		calls[i] = h.join(JoinRequest{ClientID: c})
	}
	for range 100 {
		if h.g.State() != PreparingRebalance {
			break
		}
		for i, c := range calls {
			if c.done {
				calls[i] = h.join(JoinRequest{ClientID: clients[i], MemberID: c.res.MemberID})
			}
		}
		if h.g.State() == PreparingRebalance {
			h.advance(10)
		}
	}
	var assign []Assignment
	for _, c := range calls {
		if !c.done || c.res.Err != nil || c.res.Generation != h.g.Generation() {
			h.t.Fatalf("join: %+v", c)
		}
		id := c.res.MemberID
		assign = append(assign, Assignment{MemberID: id, Assignment: []byte("assigned-to-" + id)})
	}
	leader := h.g.Leader()
	out := []string{leader}
	for _, c := range calls {
		if id := c.res.MemberID; id != leader {
			h.sync(id, "", h.g.Generation())
			out = append(out, id)
		}
	}
	if s := h.sync(leader, "", h.g.Generation(), assign...); !s.done || s.res.Err != nil {
		h.t.Fatalf("leader sync: %+v", s)
	}
	wantState(h.t, h.g, Stable)
	return out
}

func consumerMetadata(topics ...string) []byte {
	m := kmsg.ConsumerMemberMetadata{Topics: topics}
	return m.AppendTo(nil)
}

func TestJoinRequiresMemberIDThenWaitsForInitialDelay(t *testing.T) {
	h := newHarness(t, 3000)
	first := h.join(JoinRequest{ClientID: "c1", RequireKnownMemberID: true})
	wantCode(t, "first join", first.res.Err, kerr.MemberIDRequired)
	if first.res.MemberID != "c1-uuid1" {
		t.Fatalf("member id %q", first.res.MemberID)
	}
	wantState(t, h.g, Empty)
	second := h.join(JoinRequest{ClientID: "c1", MemberID: first.res.MemberID, RequireKnownMemberID: true})
	wantState(t, h.g, PreparingRebalance)
	h.advance(2999)
	if second.done {
		t.Fatal("join answered before the initial rebalance delay")
	}
	h.advance(1)
	r := second.res
	if !second.done || r.Err != nil || r.Generation != 1 || r.Leader != "c1-uuid1" || r.Protocol != "range" || r.ProtocolType != "consumer" {
		t.Fatalf("join result %+v", r)
	}
	if len(r.Members) != 1 || r.Members[0].MemberID != "c1-uuid1" || string(r.Members[0].Metadata) != "meta-c1" {
		t.Fatalf("leader's members %+v", r.Members)
	}
	wantState(t, h.g, CompletingRebalance)
	// Before v4 a new member is added at once.
	h2 := newHarness(t, 0)
	c := h2.join(JoinRequest{ClientID: "old"})
	if !c.done || c.res.Err != nil || c.res.MemberID != "old-uuid1" {
		t.Fatalf("v0-v3 join: %+v", c)
	}
}

func TestInitialDelayExtendsWhileMembersArrive(t *testing.T) {
	h := newHarness(t, 100)
	a := h.join(JoinRequest{ClientID: "a"})
	h.advance(50)
	b := h.join(JoinRequest{ClientID: "b"})
	h.advance(50) // first delay ends: a member arrived, wait again
	c := h.join(JoinRequest{ClientID: "c"})
	h.advance(100) // second delay ends: c arrived, wait again
	if a.done || b.done || c.done {
		t.Fatal("rebalance completed while members were arriving")
	}
	h.advance(100) // nobody new: complete
	for _, j := range []*joinCall{a, b, c} {
		if !j.done || j.res.Err != nil || j.res.Generation != 1 {
			t.Fatalf("join %+v", j)
		}
	}
	if n := len(a.res.Members); n != 3 || len(b.res.Members) != 0 {
		t.Fatalf("leader saw %d members, follower %d", n, len(b.res.Members))
	}
}

func TestInitialDelayIsBoundedByRebalanceTimeout(t *testing.T) {
	h := newHarness(t, 100)
	a := h.join(JoinRequest{ClientID: "a", RebalanceTimeout: 250})
	for i := 0; i < 10 && !a.done; i++ {
		h.join(JoinRequest{ClientID: fmt.Sprintf("m%d", i), RebalanceTimeout: 250})
		h.advance(100)
	}
	// 100 ms, then at most 150 more: done by the third delay.
	if !a.done || h.now-1_000_000 > 300 {
		t.Fatalf("initial delay ran %d ms", h.now-1_000_000)
	}
}

func TestSyncReturnsLeaderAssignmentExactly(t *testing.T) {
	h := newHarness(t, 0)
	a := h.joinDynamic("a")
	b := h.join(JoinRequest{ClientID: "b"}) // v0-v3 join: no member id round
	wantState(t, h.g, PreparingRebalance)
	// a's first generation completed alone; it rejoins for b.
	if !a.done || a.res.Generation != 1 {
		t.Fatalf("a %+v", a)
	}
	a = h.join(JoinRequest{ClientID: "a", MemberID: a.res.MemberID})
	if !a.done || !b.done || a.res.Generation != 2 || b.res.Generation != 2 || a.res.Leader != a.res.MemberID {
		t.Fatalf("a %+v b %+v", a.res, b.res)
	}
	gen := a.res.Generation
	// The follower syncs first and waits for the leader.
	bs := h.sync(b.res.MemberID, "", gen)
	if bs.done {
		t.Fatal("follower's sync answered before the leader's")
	}
	assignA, assignB := []byte{0, 1, 2, 0xff}, []byte{}
	as := h.sync(a.res.MemberID, "", gen,
		Assignment{MemberID: a.res.MemberID, Assignment: assignA},
		Assignment{MemberID: b.res.MemberID, Assignment: assignB},
		Assignment{MemberID: "not-a-member", Assignment: []byte("x")})
	if !as.done || !bytes.Equal(as.res.Assignment, assignA) || as.res.Protocol != "range" || as.res.ProtocolType != "consumer" {
		t.Fatalf("leader sync %+v", as)
	}
	if !bs.done || bs.res.Assignment == nil || len(bs.res.Assignment) != 0 {
		t.Fatalf("follower sync %+v", bs)
	}
	wantState(t, h.g, Stable)
	if h.stores[len(h.stores)-1] != storeSync {
		t.Fatalf("stores %v", h.stores)
	}
	// Once stable, a sync returns the stored assignment.
	again := h.sync(a.res.MemberID, "", gen)
	if !again.done || !bytes.Equal(again.res.Assignment, assignA) {
		t.Fatalf("sync when stable %+v", again)
	}
	// Wrong generation, unknown member.
	wantCode(t, "sync old generation", h.sync(a.res.MemberID, "", gen-1).res.Err, kerr.IllegalGeneration)
	wantCode(t, "sync unknown member", h.sync("nobody", "", gen).res.Err, kerr.UnknownMemberID)
}

func TestFailedAssignmentStoreRestartsRebalance(t *testing.T) {
	h := newHarness(t, 0)
	a := h.joinDynamic("a")
	h.fail = kerr.CoordinatorNotAvailable
	s := h.sync(a.res.MemberID, "", a.res.Generation, Assignment{MemberID: a.res.MemberID, Assignment: []byte("x")})
	wantCode(t, "sync with failed store", s.res.Err, kerr.CoordinatorNotAvailable)
	wantState(t, h.g, PreparingRebalance)
}

func TestHeartbeatErrors(t *testing.T) {
	h := newHarness(t, 0)
	ids := h.stable("a", "b")
	gen := h.g.Generation()
	wantCode(t, "heartbeat", h.heartbeat(ids[1], "", gen), nil)
	wantCode(t, "old generation", h.heartbeat(ids[1], "", gen-1), kerr.IllegalGeneration)
	wantCode(t, "unknown member", h.heartbeat("nobody", "", gen), kerr.UnknownMemberID)
	wantCode(t, "unknown instance", h.heartbeat(ids[1], "inst", gen), kerr.UnknownMemberID)
	// A third member joins: the others learn it from heartbeats.
	h.joinDynamic("c")
	wantState(t, h.g, PreparingRebalance)
	wantCode(t, "heartbeat during rebalance", h.heartbeat(ids[1], "", gen), kerr.RebalanceInProgress)
}

func TestProtocolSelectionByVotes(t *testing.T) {
	h := newHarness(t, 100)
	rr, rng, sticky := Protocol{Name: "roundrobin"}, Protocol{Name: "range"}, Protocol{Name: "sticky"}
	a := h.join(JoinRequest{ClientID: "a", Protocols: []Protocol{rng, rr}})
	h.join(JoinRequest{ClientID: "b", Protocols: []Protocol{rr, rng}})
	h.join(JoinRequest{ClientID: "c", Protocols: []Protocol{rr, sticky}})
	// sticky is not supported by everyone.
	d := h.join(JoinRequest{ClientID: "d", Protocols: []Protocol{sticky}})
	wantCode(t, "join without a common protocol", d.res.Err, kerr.InconsistentGroupProtocol)
	e := h.join(JoinRequest{ClientID: "e", ProtocolType: "connect", Protocols: []Protocol{rr}})
	wantCode(t, "join with another protocol type", e.res.Err, kerr.InconsistentGroupProtocol)
	h.advance(100)
	h.advance(100)
	// Common: roundrobin only (c lacks range); everyone votes for it.
	if !a.done || a.res.Protocol != "roundrobin" {
		t.Fatalf("protocol %+v", a.res)
	}
	// With two common protocols the most preferred wins.
	h2 := newHarness(t, 100)
	x := h2.join(JoinRequest{ClientID: "x", Protocols: []Protocol{rng, rr}})
	h2.join(JoinRequest{ClientID: "y", Protocols: []Protocol{rr, rng}})
	h2.join(JoinRequest{ClientID: "z", Protocols: []Protocol{rr, rng}})
	h2.advance(100)
	h2.advance(100)
	if !x.done || x.res.Protocol != "roundrobin" {
		t.Fatalf("voted protocol %+v", x.res)
	}
}

func TestSessionTimeoutEvictsSilentMember(t *testing.T) {
	h := newHarness(t, 0)
	ids := h.stable("a", "b")
	gen := h.g.Generation()
	for i := 0; i < 5; i++ {
		h.advance(500)
		h.heartbeat(ids[0], "", gen)
	}
	// b never heartbeated: gone after its 1000 ms session.
	wantState(t, h.g, PreparingRebalance)
	if h.g.Size() != 1 {
		t.Fatalf("%d members", h.g.Size())
	}
	wantCode(t, "evicted member's heartbeat", h.heartbeat(ids[1], "", gen), kerr.UnknownMemberID)
	wantCode(t, "leader heartbeat", h.heartbeat(ids[0], "", gen), kerr.RebalanceInProgress)
	a := h.join(JoinRequest{ClientID: "a", MemberID: ids[0]})
	if !a.done || a.res.Generation != gen+1 || len(a.res.Members) != 1 {
		t.Fatalf("rejoin %+v", a.res)
	}
}

func TestRebalanceTimeoutDropsMembersThatDoNotRejoin(t *testing.T) {
	h := newHarness(t, 0)
	ids := h.stable("a", "b")
	gen := h.g.Generation()
	// The leader rejoins (as on a metadata change): a rebalance.
	a := h.join(JoinRequest{ClientID: "a", MemberID: ids[0], SessionTimeout: 10_000})
	wantState(t, h.g, PreparingRebalance)
	// b keeps heartbeating but never rejoins.
	for i := 0; i < 9; i++ {
		h.advance(500)
		h.heartbeat(ids[1], "", gen)
	}
	if a.done {
		t.Fatal("rebalance completed before its timeout")
	}
	h.advance(500) // 5000 ms: the rebalance timeout
	if !a.done || a.res.Generation != gen+1 || len(a.res.Members) != 1 || h.g.Size() != 1 {
		t.Fatalf("after the rebalance timeout: %+v, %d members", a.res, h.g.Size())
	}
}

func TestMemberThatDoesNotSyncIsRemoved(t *testing.T) {
	h := newHarness(t, 0)
	ids := h.stable("a", "b")
	a := h.join(JoinRequest{ClientID: "a", MemberID: ids[0]})
	b := h.join(JoinRequest{ClientID: "b", MemberID: ids[1]})
	if !a.done || !b.done {
		t.Fatal("rejoin did not complete")
	}
	gen := a.res.Generation
	h.sync(ids[0], "", gen, Assignment{MemberID: ids[0]}, Assignment{MemberID: ids[1]})
	wantState(t, h.g, Stable)
	for i := 0; i < 10; i++ {
		h.advance(500)
		h.heartbeat(ids[0], "", gen)
		h.heartbeat(ids[1], "", gen)
	}
	// b heartbeated but never synced within the rebalance timeout.
	if h.g.members[ids[1]] != nil {
		t.Fatal("member that never synced is still in the group")
	}
	wantState(t, h.g, PreparingRebalance)
}

func TestStaticMemberRestartsWithoutRebalance(t *testing.T) {
	for _, v9 := range []bool{false, true} {
		t.Run(fmt.Sprintf("v9=%v", v9), func(t *testing.T) {
			h := newHarness(t, 100)
			s1 := h.join(JoinRequest{ClientID: "c", InstanceID: "i1"})
			s2 := h.join(JoinRequest{ClientID: "c", InstanceID: "i2"})
			h.advance(100)
			h.advance(100)
			if !s1.done || !s2.done || s1.res.MemberID != "i1-uuid1" || s1.res.Leader != s1.res.MemberID {
				t.Fatalf("static members: %+v %+v", s1.res, s2.res)
			}
			gen := s1.res.Generation
			h.sync(s2.res.MemberID, "i2", gen)
			h.sync(s1.res.MemberID, "i1", gen,
				Assignment{MemberID: s1.res.MemberID, Assignment: []byte("p0")},
				Assignment{MemberID: s2.res.MemberID, Assignment: []byte("p1")})
			wantState(t, h.g, Stable)
			// The leader's instance restarts: a new member id, the same
			// generation, no rebalance.
			r := h.join(JoinRequest{ClientID: "c", InstanceID: "i1", SupportsSkipAssignment: v9})
			wantState(t, h.g, Stable)
			if !r.done || r.res.Err != nil || r.res.Generation != gen || r.res.MemberID == s1.res.MemberID {
				t.Fatalf("restart: %+v", r.res)
			}
			if h.stores[len(h.stores)-1] != storeStatic {
				t.Fatalf("stores %v", h.stores)
			}
			if v9 {
				if !r.res.SkipAssignment || r.res.Leader != r.res.MemberID || len(r.res.Members) != 2 {
					t.Fatalf("v9 restarted leader: %+v", r.res)
				}
			} else if r.res.SkipAssignment || r.res.Leader != s1.res.MemberID || len(r.res.Members) != 0 {
				t.Fatalf("pre-v9 restarted leader: %+v", r.res)
			}
			s := h.sync(r.res.MemberID, "i1", gen)
			if !s.done || string(s.res.Assignment) != "p0" {
				t.Fatalf("restarted member's assignment: %+v", s.res)
			}
			// The old incarnation is fenced; the other member carries on.
			wantCode(t, "old incarnation", h.heartbeat(s1.res.MemberID, "i1", gen), kerr.FencedInstanceID)
			wantCode(t, "other member", h.heartbeat(s2.res.MemberID, "i2", gen), nil)
			wantCode(t, "new incarnation", h.heartbeat(r.res.MemberID, "i1", gen), nil)
		})
	}
}

func TestStaticMemberRestartRevertsOnFailedStore(t *testing.T) {
	h := newHarness(t, 0)
	s1 := h.join(JoinRequest{ClientID: "c", InstanceID: "i1"})
	gen := s1.res.Generation
	h.sync(s1.res.MemberID, "i1", gen, Assignment{MemberID: s1.res.MemberID, Assignment: []byte("p0")})
	h.fail = kerr.NotCoordinator
	r := h.join(JoinRequest{ClientID: "c", InstanceID: "i1"})
	wantCode(t, "restart with failed store", r.res.Err, kerr.NotCoordinator)
	h.fail = nil
	wantCode(t, "old incarnation after revert", h.heartbeat(s1.res.MemberID, "i1", gen), nil)
}

func TestDuplicateInstanceFencesWaitingMember(t *testing.T) {
	h := newHarness(t, 1000)
	first := h.join(JoinRequest{ClientID: "c", InstanceID: "i1"})
	second := h.join(JoinRequest{ClientID: "c", InstanceID: "i1"})
	if !first.done {
		t.Fatal("older member's join not answered")
	}
	wantCode(t, "older member", first.res.Err, kerr.FencedInstanceID)
	// The older member, retrying with its id, stays fenced.
	again := h.join(JoinRequest{ClientID: "c", InstanceID: "i1", MemberID: first.res.MemberID})
	wantCode(t, "older member again", again.res.Err, kerr.FencedInstanceID)
	h.advance(1000)
	if !second.done || second.res.Err != nil || h.g.Size() != 1 {
		t.Fatalf("newer member: %+v", second.res)
	}
}

func TestLeaveGroupBatch(t *testing.T) {
	h := newHarness(t, 100)
	s := h.join(JoinRequest{ClientID: "c", InstanceID: "i1"})
	d := h.join(JoinRequest{ClientID: "d"})
	h.advance(100)
	h.advance(100)
	if !s.done || !d.done {
		t.Fatal("joins")
	}
	codes, code := h.g.Leave(h.now, []LeaveMember{
		{InstanceID: "i1", MemberID: "wrong"},
		{InstanceID: "nope"},
		{MemberID: "nobody"},
		{MemberID: d.res.MemberID},
		{InstanceID: "i1"},
	})
	h.settle()
	wantCode(t, "group", code, nil)
	for i, want := range []*kerr.Error{kerr.FencedInstanceID, kerr.UnknownMemberID, kerr.UnknownMemberID, nil, nil} {
		wantCode(t, fmt.Sprintf("member %d", i), codes[i], want)
	}
	// Everyone left: the rebalance completes empty and is stored.
	wantState(t, h.g, Empty)
	if h.stores[len(h.stores)-1] != storeGroup || h.g.Generation() != 2 {
		t.Fatalf("stores %v, generation %d", h.stores, h.g.Generation())
	}
}

func TestGroupMaxSize(t *testing.T) {
	h := newHarness(t, 100)
	h.g.policy.MaxSize = 2
	h.join(JoinRequest{ClientID: "a"})
	h.join(JoinRequest{ClientID: "b"})
	c := h.join(JoinRequest{ClientID: "c"})
	wantCode(t, "third member", c.res.Err, kerr.GroupMaxSizeReached)
	wantCode(t, "session below minimum", h.join(JoinRequest{ClientID: "d", SessionTimeout: 10}).res.Err, kerr.InvalidSessionTimeout)
	wantCode(t, "session above maximum", h.join(JoinRequest{ClientID: "d", SessionTimeout: 100_001}).res.Err, kerr.InvalidSessionTimeout)
}

func TestPendingMemberExpires(t *testing.T) {
	h := newHarness(t, 0)
	ids := h.stable("a")
	// b got its id but never came back: the rebalance it started
	// completes once its pending id expires.
	first := h.join(JoinRequest{ClientID: "b", RequireKnownMemberID: true})
	wantCode(t, "first join", first.res.Err, kerr.MemberIDRequired)
	a := h.join(JoinRequest{ClientID: "a", MemberID: ids[0]})
	if a.done {
		t.Fatal("rebalance completed with a pending member")
	}
	h.advance(1000)
	if !a.done || a.res.Err != nil || len(a.res.Members) != 1 {
		t.Fatalf("after the pending member expired: %+v", a)
	}
	late := h.join(JoinRequest{ClientID: "b", MemberID: first.res.MemberID, RequireKnownMemberID: true})
	wantCode(t, "expired pending member", late.res.Err, kerr.UnknownMemberID)
}

func TestCommitValidation(t *testing.T) {
	h := newHarness(t, 0)
	commit := func(gen int32, member, instance string) error {
		return h.g.validateCommit(&CommitRequest{Generation: gen, MemberID: member, InstanceID: instance})
	}
	wantCode(t, "simple commit to empty group", commit(-1, "", ""), nil)
	a := h.joinDynamic("a")
	gen := a.res.Generation
	wantCode(t, "commit while completing", commit(gen, a.res.MemberID, ""), kerr.RebalanceInProgress)
	h.sync(a.res.MemberID, "", gen, Assignment{MemberID: a.res.MemberID})
	wantCode(t, "member commit", commit(gen, a.res.MemberID, ""), nil)
	wantCode(t, "old generation", commit(gen-1, a.res.MemberID, ""), kerr.IllegalGeneration)
	wantCode(t, "unknown member", commit(gen, "x", ""), kerr.UnknownMemberID)
	wantCode(t, "simple commit to active group", commit(-1, "", ""), kerr.UnknownMemberID)
	h.joinDynamic("b")
	wantCode(t, "commit while preparing", commit(gen, a.res.MemberID, ""), nil)
}

func TestOffsetExpiry(t *testing.T) {
	h := newHarness(t, 0)
	tp := func(topic string) TopicPartition { return TopicPartition{Topic: topic} }
	// A group used only for offsets: each offset by its commit time.
	h.g.setOffset(tp("old"), Offset{Offset: 1, CommitTime: h.now - 2000, ExpireTime: -1})
	h.g.setOffset(tp("new"), Offset{Offset: 2, CommitTime: h.now, ExpireTime: -1})
	h.g.setOffset(tp("expiring"), Offset{Offset: 3, CommitTime: h.now, ExpireTime: h.now + 10})
	if got := h.g.expireOffsets(h.now, 1000); len(got) != 1 || got[0].Topic != "old" {
		t.Fatalf("expired %v", got)
	}
	if got := h.g.expireOffsets(h.now+10, 1000); len(got) != 1 || got[0].Topic != "expiring" {
		t.Fatalf("expired %v", got)
	}
	// A stable consumer group keeps the offsets of subscribed topics.
	h2 := newHarness(t, 0)
	meta := consumerMetadata("sub")
	a := h2.join(JoinRequest{ClientID: "a", Protocols: []Protocol{{Name: "range", Metadata: meta}}})
	h2.sync(a.res.MemberID, "", a.res.Generation, Assignment{MemberID: a.res.MemberID})
	h2.g.setOffset(tp("sub"), Offset{CommitTime: h2.now - 5000, ExpireTime: -1})
	h2.g.setOffset(tp("unsub"), Offset{CommitTime: h2.now - 5000, ExpireTime: -1})
	if got := h2.g.expireOffsets(h2.now, 1000); len(got) != 1 || got[0].Topic != "unsub" {
		t.Fatalf("stable group expired %v", got)
	}
	if !h2.g.subscribedTo("sub") || h2.g.subscribedTo("unsub") {
		t.Fatal("subscription")
	}
	// Once empty, retention counts from when it became empty.
	h2.g.Leave(h2.now, []LeaveMember{{MemberID: a.res.MemberID}})
	h2.settle()
	wantState(t, h2.g, Empty)
	if got := h2.g.expireOffsets(h2.now+999, 1000); len(got) != 0 {
		t.Fatalf("expired %v before retention", got)
	}
	if got := h2.g.expireOffsets(h2.now+1000, 1000); len(got) != 1 || !h2.g.deletable() {
		t.Fatalf("expired %v; deletable %v", got, h2.g.deletable())
	}
}
