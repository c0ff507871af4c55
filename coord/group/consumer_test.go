package group

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/shards"
)

// Tests of KIP-848 consumer groups through the Coordinator, on a real
// __consumer_offsets partition, with members played by a model client: it
// applies each assignment it gets at once (revoking what is not in it) and
// reports what it owns in its next heartbeat.

// testTopics is a Topics view the test changes.
type testTopics struct {
	version int64
	topics  []TopicInfo
}

func (t *testTopics) Version() int64 { return t.version }
func (t *testTopics) ByName(name string) (TopicInfo, bool) {
	for _, x := range t.topics {
		if x.Name == name {
			return x, true
		}
	}
	return TopicInfo{}, false
}
func (t *testTopics) ByID(id [16]byte) (TopicInfo, bool) {
	for _, x := range t.topics {
		if x.ID == id {
			return x, true
		}
	}
	return TopicInfo{}, false
}
func (t *testTopics) All() []TopicInfo { return t.topics }

// add creates (or grows) a topic: a new snapshot for the coordinator.
func (t *testTopics) add(c *Coordinator, name string, partitions int32) {
	next := &testTopics{version: t.version + 1}
	for _, x := range t.topics {
		if x.Name != name {
			next.topics = append(next.topics, x)
		}
	}
	next.topics = append(next.topics, TopicInfo{Name: name, ID: tidOf(name), Partitions: partitions, Internal: name == TopicName})
	*t = *next
	c.SetTopics(next)
}

// cmember is a model consumer.
type cmember struct {
	t        *testing.T
	c        *Coordinator
	group    string
	id       string
	instance *string
	epoch    int32
	owned    tpSet
	topics   []string
	regex    *string
	assignor *string
}

func newMember(t *testing.T, c *Coordinator, group, id string, topics ...string) *cmember {
	return &cmember{t: t, c: c, group: group, id: id, topics: topics, owned: tpSet{}}
}

// send sends a full heartbeat and applies the response.
func (m *cmember) send() ConsumerHeartbeatResult {
	m.t.Helper()
	r := &ConsumerHeartbeatRequest{Version: 1, Group: m.group, MemberID: m.id, MemberEpoch: m.epoch, InstanceID: m.instance,
		RebalanceTimeout: 30_000, SubscribedTopicNames: m.topics, SubscribedTopicRegex: m.regex, ServerAssignor: m.assignor,
		Owned: partitionList(m.owned), ClientID: "client-" + m.id, ClientHost: "/127.0.0.1"}
	if m.topics == nil && m.regex == nil {
		r.SubscribedTopicNames = []string{}
	}
	res := m.c.ConsumerGroupHeartbeat(r)
	if res.Err == nil {
		m.epoch = res.MemberEpoch
		if res.HasAssignment {
			m.owned = ownedSet(res.Assignment)
		}
	}
	return res
}

// beat sends a heartbeat that must succeed.
func (m *cmember) beat() ConsumerHeartbeatResult {
	m.t.Helper()
	res := m.send()
	if res.Err != nil {
		m.t.Fatalf("member %s heartbeat: %v %s", m.id, res.Err, res.ErrMessage)
	}
	return res
}

func (m *cmember) leave(epoch int32) ConsumerHeartbeatResult {
	return m.c.ConsumerGroupHeartbeat(&ConsumerHeartbeatRequest{Version: 1, Group: m.group, MemberID: m.id, MemberEpoch: epoch, InstanceID: m.instance, RebalanceTimeout: -1})
}

// converge heartbeats the members round-robin until the group is stable,
// checking after each step that no partition is owned twice.
func converge(t *testing.T, c *Coordinator, group string, ms ...*cmember) {
	t.Helper()
	for round := range 20 {
		for _, m := range ms {
			m.beat()
			seen := map[tp]string{}
			for _, o := range ms {
				for id, ps := range o.owned {
					for _, p := range ps {
						if other, dup := seen[tp{id, p}]; dup {
							t.Fatalf("round %d: partition %x-%d owned by %s and %s", round, id[:2], p, other, o.id)
						}
						seen[tp{id, p}] = o.id
					}
				}
			}
		}
		if d := c.DescribeConsumerGroup(group); d.State == Stable {
			for _, m := range ms {
				if m.epoch != d.AssignmentEpoch {
					t.Fatalf("stable group at epoch %d, member %s at %d", d.AssignmentEpoch, m.id, m.epoch)
				}
			}
			return
		}
	}
	t.Fatalf("group %s not stable: %+v", group, c.DescribeConsumerGroup(group))
}

func consumerCoordinator(t *testing.T, n *node) (*Coordinator, *testTopics) {
	t.Helper()
	c := n.coordinator(1, 0, 0)
	topics := &testTopics{}
	topics.add(c, "a", 6)
	topics.add(c, "b", 3)
	return c, topics
}

func TestConsumerGroupJoinReconcileLeave(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c, _ := consumerCoordinator(t, n)
	m1 := newMember(t, c, "g", "m1", "a", "b")
	res := m1.beat()
	if res.MemberEpoch != 1 || !res.HasAssignment || m1.owned.size() != 9 || res.HeartbeatInterval != 5000 {
		t.Fatalf("first member: %+v", res)
	}
	m2 := newMember(t, c, "g", "m2", "a", "b")
	res = m2.beat()
	// The group epoch is 2; m2 gets nothing yet: m1 holds everything.
	if res.MemberEpoch != 2 || m2.owned.size() != 0 {
		t.Fatalf("second member: %+v owned %v", res, m2.owned)
	}
	if d := c.DescribeConsumerGroup("g"); d.State != Reconciling || d.Epoch != 2 || d.AssignmentEpoch != 2 {
		t.Fatalf("describe %+v", d)
	}
	// m1 must revoke first: it stays at epoch 1 with what it keeps.
	res = m1.beat()
	if res.MemberEpoch != 1 || m1.owned.size() != 5 {
		t.Fatalf("m1 revoking: %+v owned %d", res, m1.owned.size())
	}
	// Its next heartbeat, owning only those, moves it to epoch 2; then m2
	// gets the released partitions.
	if res = m1.beat(); res.MemberEpoch != 2 {
		t.Fatalf("m1 after revoking: %+v", res)
	}
	if res = m2.beat(); m2.owned.size() != 4 {
		t.Fatalf("m2 after release: %+v", res)
	}
	converge(t, c, "g", m1, m2)

	// A heartbeat with a wrong epoch is fenced.
	stale := *m2
	stale.epoch = 7
	if res := stale.send(); !errors.Is(res.Err, kerr.FencedMemberEpoch) {
		t.Fatalf("fenced: %+v", res)
	}
	if res := newMember(t, c, "g", "ghost").leave(-1); !errors.Is(res.Err, kerr.UnknownMemberID) {
		t.Fatalf("unknown member leaving: %+v", res)
	}

	// m1 leaves: m2 takes everything at the next epoch.
	if res := m1.leave(-1); res.Err != nil || res.MemberEpoch != -1 {
		t.Fatalf("leave %+v", res)
	}
	converge(t, c, "g", m2)
	if m2.owned.size() != 9 || m2.epoch != 3 {
		t.Fatalf("after leave: epoch %d owned %v", m2.epoch, m2.owned)
	}

	// Reloaded from the partition: same group, m2 goes on.
	c.Close()
	n.close()
	n = openNode(t, dir)
	c2, _ := consumerCoordinator(t, n)
	m2.c = c2
	d := c2.DescribeConsumerGroup("g")
	if d.Err != nil || d.State != Stable || d.Epoch != 3 || len(d.Members) != 1 || d.Members[0].MemberEpoch != 3 ||
		len(d.Members[0].Assignment) != 2 || d.Members[0].Assignment[0].Topic == "" || d.Members[0].ClientID != "client-m2" {
		t.Fatalf("reloaded %+v", d)
	}
	if res := m2.beat(); res.MemberEpoch != 3 {
		t.Fatalf("heartbeat after reload %+v", res)
	}
}

func TestConsumerGroupManyMembersConverge(t *testing.T) {
	for _, assignor := range []string{"uniform", "range"} {
		t.Run(assignor, func(t *testing.T) {
			n := openNode(t, t.TempDir())
			c, topics := consumerCoordinator(t, n)
			topics.add(c, "big", 100)
			var ms []*cmember
			for i := range 10 {
				m := newMember(t, c, "g", fmt.Sprintf("m%02d", i), "big")
				m.assignor = &assignor
				ms = append(ms, m)
				converge(t, c, "g", ms...)
			}
			total := 0
			for _, m := range ms {
				total += m.owned.size()
				if m.owned.size() != 10 {
					t.Fatalf("member %s owns %d", m.id, m.owned.size())
				}
			}
			if d := c.DescribeConsumerGroup("g"); d.AssignorName != assignor || total != 100 {
				t.Fatalf("assignor %s, %d owned", d.AssignorName, total)
			}
			// Half leave, the rest converge on everything.
			for _, m := range ms[5:] {
				m.leave(-1)
			}
			converge(t, c, "g", ms[:5]...)
			for _, m := range ms[:5] {
				if m.owned.size() != 20 {
					t.Fatalf("member %s owns %d", m.id, m.owned.size())
				}
			}
		})
	}
}

func TestConsumerGroupStaticMembers(t *testing.T) {
	n := openNode(t, t.TempDir())
	c, _ := consumerCoordinator(t, n)
	inst := "instance-1"
	m1 := newMember(t, c, "g", "m1", "a")
	m1.instance = &inst
	m1.beat()
	m2 := newMember(t, c, "g", "m2", "a")
	m2.beat()
	converge(t, c, "g", m1, m2)
	before := m1.owned
	epoch := c.DescribeConsumerGroup("g").Epoch

	// Another process with the same instance id while m1 is there.
	dup := newMember(t, c, "g", "m1-restarted", "a")
	dup.instance = &inst
	if res := dup.send(); !errors.Is(res.Err, kerr.UnreleasedInstanceID) {
		t.Fatalf("duplicate instance: %+v", res)
	}
	// m1 leaves as a static member and comes back under a new id: it gets
	// its partitions back, the group epoch does not move.
	if res := m1.leave(-2); res.Err != nil || res.MemberEpoch != -2 {
		t.Fatalf("static leave %+v", res)
	}
	res := dup.beat()
	if !dup.owned.equal(before) || c.DescribeConsumerGroup("g").Epoch != epoch || res.MemberEpoch != epoch {
		t.Fatalf("rejoined with %v (had %v), epoch %d -> %+v", dup.owned, before, epoch, c.DescribeConsumerGroup("g"))
	}
	converge(t, c, "g", dup, m2)
	// The old id is fenced.
	if res := m1.send(); !errors.Is(res.Err, kerr.FencedInstanceID) {
		t.Fatalf("old static member: %+v", res)
	}
}

func TestConsumerGroupSessionAndRebalanceTimeouts(t *testing.T) {
	n := openNode(t, t.TempDir())
	c, _ := consumerCoordinator(t, n)
	now := time.Now().UnixMilli()
	c.now = func() int64 { return now }
	m1 := newMember(t, c, "g", "m1", "a")
	m2 := newMember(t, c, "g", "m2", "a")
	m1.beat()
	m2.beat()
	converge(t, c, "g", m1, m2)
	// m2 stops heartbeating: after the session timeout it is removed and
	// m1 gets its partitions.
	now += 44_000
	m1.beat()
	now += 2_000
	tick(c, "g")
	if d := c.DescribeConsumerGroup("g"); len(d.Members) != 1 {
		t.Fatalf("members after m2's session expired: %+v", d)
	}
	converge(t, c, "g", m1)
	if m1.owned.size() != 6 {
		t.Fatalf("m1 owns %v", m1.owned)
	}

	// A member that does not revoke within its rebalance timeout is fenced.
	m3 := newMember(t, c, "g", "m3", "a")
	m3.beat()
	lazy := *m1
	if res := lazy.send(); res.MemberEpoch != m1.epoch || lazy.owned.size() != 3 {
		t.Fatalf("m1 asked to revoke: %+v", res)
	}
	now += 30_001
	m3.beat()
	tick(c, "g")
	d := c.DescribeConsumerGroup("g")
	if len(d.Members) != 1 || d.Members[0].MemberID != "m3" {
		t.Fatalf("members after the rebalance timeout %+v", d)
	}
	if res := m1.send(); !errors.Is(res.Err, kerr.UnknownMemberID) {
		t.Fatalf("fenced member's heartbeat: %+v", res)
	}
}

// tick runs a group's due timers as its timer goroutine would.
func tick(c *Coordinator, group string) {
	s, _ := c.table.Get(c.PartitionFor(group))
	s.Lock()
	e := s.mu.groups[group]
	s.Unlock()
	if e != nil {
		s.fire(e)
	}
}

func TestConsumerGroupRegexSubscription(t *testing.T) {
	n := openNode(t, t.TempDir())
	c, topics := consumerCoordinator(t, n)
	re := "orders-.*"
	m := newMember(t, c, "g", "m1")
	m.regex = &re
	m.beat()
	if m.owned.size() != 0 {
		t.Fatalf("owned %v before any topic matches", m.owned)
	}
	topics.add(c, "orders-eu", 2)
	topics.add(c, "orders", 4) // does not match the whole name
	m.beat()
	if m.owned.size() != 2 || !m.owned.has(tidOf("orders-eu"), 1) {
		t.Fatalf("owned %v", m.owned)
	}
	topics.add(c, "orders-eu", 3) // grows
	m.beat()
	if m.owned.size() != 3 {
		t.Fatalf("owned %v after the topic grew", m.owned)
	}
	bad := "orders-("
	m.regex = &bad
	if res := m.send(); !errors.Is(res.Err, kerr.InvalidRegularExpression) {
		t.Fatalf("bad regex: %+v", res)
	}
}

// Kafka resolves a regex over every topic name, internal topics included:
// a member whose pattern matches __consumer_offsets is assigned it.
func TestConsumerGroupRegexMatchesInternalTopics(t *testing.T) {
	n := openNode(t, t.TempDir())
	c, topics := consumerCoordinator(t, n)
	topics.add(c, TopicName, 3)
	for _, tc := range []struct {
		regex string
		want  int // partitions of __consumer_offsets assigned
	}{
		{"__consumer_offsets", 3},
		{"__.*", 3},
		{".*", 3},
		{"consumer_offsets", 0}, // the whole name must match
	} {
		m := newMember(t, c, "g-"+tc.regex, "m1")
		m.regex = &tc.regex
		m.beat()
		if got := len(m.owned[tidOf(TopicName)]); got != tc.want {
			t.Errorf("regex %q: %d partitions of %s assigned, want %d (owned %v)", tc.regex, got, TopicName, tc.want, m.owned)
		}
	}
}

func TestConsumerGroupRequestErrors(t *testing.T) {
	n := openNode(t, t.TempDir())
	c, _ := consumerCoordinator(t, n)
	c.policy.ConsumerMaxSize = 1
	newMember(t, c, "g", "m1", "a").beat()
	for _, tc := range []struct {
		r    ConsumerHeartbeatRequest
		want int16
	}{
		{ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: "m2", RebalanceTimeout: 1, SubscribedTopicNames: []string{"a"}, Owned: []TopicPartitions{}}, kerr.GroupMaxSizeReached.Code},
		{ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: "m3", MemberEpoch: 5, RebalanceTimeout: -1}, kerr.UnknownMemberID.Code},
		{ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: "m3", RebalanceTimeout: -1, SubscribedTopicNames: []string{"a"}, Owned: []TopicPartitions{}}, kerr.InvalidRequest.Code},
		{ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: "m3", RebalanceTimeout: 1, SubscribedTopicNames: []string{"a"}}, kerr.InvalidRequest.Code},
		{ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: "", RebalanceTimeout: 1, SubscribedTopicNames: []string{"a"}, Owned: []TopicPartitions{}}, kerr.InvalidRequest.Code},
		{ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: "m3", MemberEpoch: -3}, kerr.InvalidRequest.Code},
		{ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: "m1", MemberEpoch: 1, ServerAssignor: new("sticky")}, kerr.UnsupportedAssignor.Code},
		{ConsumerHeartbeatRequest{Version: 1, Group: "nope", MemberID: "m1", MemberEpoch: 1}, kerr.GroupIDNotFound.Code},
	} {
		if res := c.ConsumerGroupHeartbeat(&tc.r); shards.Code(res.Err) != tc.want {
			t.Errorf("%+v: got %v %q, want %v", tc.r, res.Err, res.ErrMessage, kerr.ErrorForCode(tc.want))
		}
	}
	// v0: the coordinator names the member.
	c.policy.ConsumerMaxSize = 10
	res := c.ConsumerGroupHeartbeat(&ConsumerHeartbeatRequest{Group: "v0", RebalanceTimeout: 1, SubscribedTopicNames: []string{"a"}, Owned: []TopicPartitions{}})
	if res.Err != nil || len(res.MemberID) != 22 {
		t.Fatalf("v0 join %+v", res)
	}
}

func TestConsumerGroupOffsets(t *testing.T) {
	n := openNode(t, t.TempDir())
	c, _ := consumerCoordinator(t, n)
	m := newMember(t, c, "g", "m1", "a")
	m.beat()
	commit := func(member string, epoch int32, v9 bool) int16 {
		return shards.Code(c.CommitOffsets(&CommitRequest{Group: "g", Generation: epoch, MemberID: member, RetentionMs: -1, UnknownGroupIsNotFound: v9,
			Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "a", Partition: 0}, Offset: 5, LeaderEpoch: -1}}})[0])
	}
	for _, tc := range []struct {
		member string
		epoch  int32
		v9     bool
		want   int16
	}{
		{"m1", 1, true, 0},
		{"m1", 0, true, kerr.StaleMemberEpoch.Code},
		{"m1", 1, false, kerr.UnsupportedVersion.Code},
		{"nobody", 1, true, kerr.UnknownMemberID.Code},
		{"", -1, true, kerr.UnknownMemberID.Code},
	} {
		if got := commit(tc.member, tc.epoch, tc.v9); got != tc.want {
			t.Errorf("commit %+v: %v", tc, kerr.ErrorForCode(got))
		}
	}
	if _, code := c.FetchOffsetsFor(&FetchRequest{Group: "g", MemberID: "m1", MemberEpoch: 0}); !errors.Is(code, kerr.StaleMemberEpoch) {
		t.Fatalf("stale fetch: %v", code)
	}
	got, code := c.FetchOffsetsFor(&FetchRequest{Group: "g", MemberID: "m1", MemberEpoch: 1, Topics: []FetchTopic{{Topic: "a", Partitions: []int32{0}}}})
	if code != nil || got[0].Partitions[0].Offset != 5 {
		t.Fatalf("fetch %v %+v", code, got)
	}
	if code := c.TxnOffsetCommit(&TxnCommitRequest{Group: "g", ProducerID: 1, Generation: 0, MemberID: "m1",
		Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "a", Partition: 0}, Offset: 6}}}); !errors.Is(code[0], kerr.IllegalGeneration) {
		t.Fatalf("txn commit with a stale epoch: %v", code)
	}
	// Subscribed topics' offsets are kept from OffsetDelete.
	if codes, _ := c.DeleteOffsets("g", []TopicPartition{{Topic: "a", Partition: 0}}); !errors.Is(codes[0], kerr.GroupSubscribedToTopic) {
		t.Fatalf("offset delete: %v", codes)
	}
	list, _ := c.ListGroups()
	if len(list) != 1 || list[0].Type != ConsumerType || list[0].ProtocolType != "consumer" || list[0].State != Stable {
		t.Fatalf("list %+v", list)
	}
	if d, found, _ := c.DescribeGroup("g"); !found || d.ProtocolType != "consumer" || d.Protocol != "uniform" || len(d.Members) != 1 || len(d.Members[0].Assignment) == 0 {
		t.Fatalf("classic describe %+v", d)
	}
	if got := c.DeleteGroups([]string{"g"}); !errors.Is(got[0], kerr.NonEmptyGroup) {
		t.Fatalf("delete a group with members: %v", got)
	}
}

// Empty groups convert between the protocols both ways, keeping their
// offsets, whatever the migration policy; groups with members do not when
// it is disabled.
func TestConsumerGroupConversions(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c, _ := consumerCoordinator(t, n)
	c.policy.UpgradeAllowed, c.policy.DowngradeAllowed = false, false
	// A classic group with members.
	joinSync(t, c, "classic", "", consumerMetadata("a"), []byte("x"))
	if res := newMember(t, c, "classic", "m1", "a").send(); !errors.Is(res.Err, kerr.GroupIDNotFound) {
		t.Fatalf("consumer member joining a classic group with members: %+v", res)
	}
	// A group holding only offsets becomes a consumer group.
	if codes := c.CommitOffsets(&CommitRequest{Group: "g", Generation: -1, RetentionMs: -1,
		Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "a", Partition: 0}, Offset: 9, LeaderEpoch: -1}}}); codes[0] != nil {
		t.Fatalf("commit %v", codes)
	}
	m := newMember(t, c, "g", "m1", "a")
	m.beat()
	if list, _ := c.ListGroups(); list[1].Group != "g" || list[1].Type != ConsumerType {
		t.Fatalf("list %+v", list)
	}
	var jres JoinResult
	c.JoinGroup(&JoinRequest{Group: "g", ProtocolType: "consumer", Protocols: []Protocol{{Name: "range"}}, SessionTimeout: 30_000, RebalanceTimeout: 30_000},
		func(r JoinResult) { jres = r })
	if !errors.Is(jres.Err, kerr.InconsistentGroupProtocol) {
		t.Fatalf("classic member joining a consumer group with members: %+v", jres)
	}
	m.leave(-1)
	// Empty now: a classic member converts it back.
	member, _ := joinSync(t, c, "g", "", consumerMetadata("a"), []byte("x"))
	if d, _, _ := c.DescribeGroup("g"); d.State != Stable || d.Protocol != "range" || d.Members[0].MemberID != member {
		t.Fatalf("converted back %+v", d)
	}
	got, _ := c.FetchOffsets("g", []FetchTopic{{Topic: "a", Partitions: []int32{0}}})
	if got[0].Partitions[0].Offset != 9 {
		t.Fatalf("offsets lost by the conversions: %+v", got)
	}
	c.Close()
	c, _ = consumerCoordinator(t, n)
	if list, _ := c.ListGroups(); len(list) != 2 || list[1].Type != ClassicType || list[1].State != Stable {
		t.Fatalf("reloaded %+v", list)
	}
}

// KIP-1251: a commit with a member epoch older than the member's is
// accepted for the partitions the member has held since that epoch, and
// refused for the others; the epochs survive a reload.
func TestConsumerGroupCommitsWithOlderEpochs(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c, _ := consumerCoordinator(t, n)
	m1 := newMember(t, c, "g", "m1", "a")
	m1.beat() // epoch 1: all of a
	m2 := newMember(t, c, "g", "m2", "a")
	m2.beat()
	converge(t, c, "g", m1, m2)
	kept, moved := m1.owned[tidOf("a")][0], m2.owned[tidOf("a")][0]
	if m1.epoch < 2 {
		t.Fatalf("m1 at epoch %d", m1.epoch)
	}
	commit := func(c *Coordinator, epoch int32, p int32) int16 {
		return shards.Code(c.CommitOffsets(&CommitRequest{Group: "g", Generation: epoch, MemberID: "m1", RetentionMs: -1, UnknownGroupIsNotFound: true,
			Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "a", Partition: p}, Offset: 1, LeaderEpoch: -1}}})[0])
	}
	check := func(c *Coordinator) {
		t.Helper()
		for _, tc := range []struct {
			epoch, p int32
			want     int16
		}{
			{1, kept, 0},                           // held since epoch 1
			{1, moved, kerr.StaleMemberEpoch.Code}, // given up
			{m1.epoch, kept, 0},                    // the current epoch
			{m1.epoch + 1, kept, kerr.StaleMemberEpoch.Code},
		} {
			if got := commit(c, tc.epoch, tc.p); got != tc.want {
				t.Errorf("commit of a-%d with epoch %d: %v, want %v", tc.p, tc.epoch, kerr.ErrorForCode(got), kerr.ErrorForCode(tc.want))
			}
		}
	}
	check(c)
	c.Close()
	c, _ = consumerCoordinator(t, n)
	check(c)
}
