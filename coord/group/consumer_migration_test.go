package group

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/shards"
)

// Tests of the online migration between the protocols: classic members in
// consumer groups, upgrade and downgrade, the migration policy, and the
// purge of deleted topics' offsets.

// classicClient is a model classic consumer: eager (it revokes everything
// before it joins) or cooperative (it reports what it owns and revokes
// only what its assignment no longer has).
type classicClient struct {
	t           *testing.T
	c           *Coordinator
	group, id   string
	gen         int32
	protocol    string
	cooperative bool
	topics      []string
	owned       map[string][]int32 // by topic name
}

func newClassic(t *testing.T, c *Coordinator, group string, cooperative bool, topics ...string) *classicClient {
	protocol := "range"
	if cooperative {
		protocol = "cooperative-sticky"
	}
	return &classicClient{t: t, c: c, group: group, protocol: protocol, cooperative: cooperative, topics: topics, owned: map[string][]int32{}}
}

func (m *classicClient) metadata() []byte {
	meta := kmsg.ConsumerMemberMetadata{Topics: m.topics}
	if m.cooperative {
		meta.Version = 1
		for _, t := range slices.Sorted(maps.Keys(m.owned)) {
			meta.OwnedPartitions = append(meta.OwnedPartitions, kmsg.ConsumerMemberMetadataOwnedPartition{Topic: t, Partitions: m.owned[t]})
		}
	}
	return meta.AppendTo(nil)
}

// join sends JoinGroup (twice for a new member: MEMBER_ID_REQUIRED).
func (m *classicClient) join() JoinResult {
	m.t.Helper()
	if !m.cooperative {
		clear(m.owned)
	}
	var res JoinResult
	for range 2 {
		req := &JoinRequest{Group: m.group, MemberID: m.id, ClientID: "classic", ClientHost: "/127.0.0.1", ProtocolType: "consumer",
			Protocols: []Protocol{{Name: m.protocol, Metadata: m.metadata()}}, SessionTimeout: 30_000, RebalanceTimeout: 30_000,
			RequireKnownMemberID: true}
		m.c.JoinGroup(req, func(r JoinResult) { res = r })
		if !errors.Is(res.Err, kerr.MemberIDRequired) {
			break
		}
		m.id = res.MemberID
	}
	if res.Err == nil {
		m.gen = res.Generation
	}
	return res
}

// sync sends SyncGroup and applies the assignment.
func (m *classicClient) sync() SyncResult {
	m.t.Helper()
	var res SyncResult
	m.c.SyncGroup(&SyncRequest{Group: m.group, MemberID: m.id, Generation: m.gen, Protocol: &m.protocol}, func(r SyncResult) { res = r })
	if res.Err != nil {
		return res
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(res.Assignment); err != nil {
		m.t.Fatalf("assignment of %s: %v", m.id, err)
	}
	clear(m.owned)
	for _, t := range a.Topics {
		m.owned[t.Topic] = t.Partitions
	}
	return res
}

func (m *classicClient) heartbeat() int16 {
	return shards.Code(m.c.Heartbeat(&HeartbeatRequest{Group: m.group, MemberID: m.id, Generation: m.gen}))
}

func (m *classicClient) size() int {
	n := 0
	for _, ps := range m.owned {
		n += len(ps)
	}
	return n
}

// rebalance joins and syncs, which must succeed.
func (m *classicClient) rebalance() {
	m.t.Helper()
	if res := m.join(); res.Err != nil {
		m.t.Fatalf("classic %s join: %v", m.id, res.Err)
	}
	if res := m.sync(); res.Err != nil {
		m.t.Fatalf("classic %s sync: %v", m.id, res.Err)
	}
}

// convergeMixed runs classic and consumer members until the group is
// stable, each classic member rejoining when its heartbeat says so, and
// checks after each step that no partition is owned twice.
func convergeMixed(t *testing.T, c *Coordinator, group string, classics []*classicClient, ms []*cmember) {
	t.Helper()
	check := func() {
		seen := map[string]string{}
		own := func(who, topic string, p int32) {
			k := topic + "-" + string(rune('0'+p))
			if prev, dup := seen[k]; dup {
				t.Fatalf("partition %s owned by %s and %s", k, prev, who)
			}
			seen[k] = who
		}
		for _, m := range classics {
			for topic, ps := range m.owned {
				for _, p := range ps {
					own(m.id, topic, p)
				}
			}
		}
		for _, m := range ms {
			for id, ps := range m.owned {
				for _, p := range ps {
					name := string(id[:1])
					own(m.id, name, p)
				}
			}
		}
	}
	for range 20 {
		for _, m := range ms {
			m.beat()
			check()
		}
		for _, m := range classics {
			switch code := m.heartbeat(); code {
			case 0:
			case kerr.RebalanceInProgress.Code:
				m.rebalance()
				check()
			default:
				t.Fatalf("classic %s heartbeat: %v", m.id, kerr.ErrorForCode(code))
			}
		}
		if d := c.DescribeConsumerGroup(group); d.State == Stable {
			return
		}
	}
	t.Fatalf("group %s not stable: %+v", group, c.DescribeConsumerGroup(group))
}

func TestConsumerGroupUpgradeWithClassicMembers(t *testing.T) {
	for _, cooperative := range []bool{false, true} {
		name := "eager"
		if cooperative {
			name = "cooperative"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			n := openNode(t, dir)
			c, _ := consumerCoordinator(t, n)
			// A classic group of one consumer owning all of a.
			cl := newClassic(t, c, "g", cooperative, "a")
			if res := cl.join(); res.Err != nil || res.Leader != cl.id {
				t.Fatalf("classic join %+v", res)
			}
			all := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "a", Partitions: []int32{0, 1, 2, 3, 4, 5}}}}
			var sres SyncResult
			c.SyncGroup(&SyncRequest{Group: "g", MemberID: cl.id, Generation: cl.gen,
				Assignments: []Assignment{{MemberID: cl.id, Assignment: all.AppendTo(nil)}}}, func(r SyncResult) { sres = r })
			if sres.Err != nil {
				t.Fatalf("classic sync %+v", sres)
			}
			cl.owned["a"] = []int32{0, 1, 2, 3, 4, 5}
			gen := cl.gen

			// A consumer protocol member joins: the group is upgraded,
			// the classic member kept with its partitions.
			m := newMember(t, c, "g", "m1", "a")
			res := m.beat()
			if res.MemberEpoch != gen+1 || m.owned.size() != 0 {
				t.Fatalf("consumer member joining the classic group: %+v", res)
			}
			d := c.DescribeConsumerGroup("g")
			if d.Err != nil || len(d.Members) != 2 || d.Epoch != gen+1 {
				t.Fatalf("upgraded group %+v", d)
			}
			for _, dm := range d.Members {
				if (dm.MemberID == cl.id) != dm.Classic {
					t.Fatalf("member %s classic=%v", dm.MemberID, dm.Classic)
				}
				if dm.MemberID == cl.id && (dm.MemberEpoch != gen || len(dm.Assignment) != 1 || len(dm.Assignment[0].Partitions) != 6) {
					t.Fatalf("classic member after the upgrade %+v", dm)
				}
			}
			if list, _ := c.ListGroups(); len(list) != 1 || list[0].Type != ConsumerType {
				t.Fatalf("list %+v", list)
			}

			// The classic member is told to rebalance; it gets half.
			if code := cl.heartbeat(); code != kerr.RebalanceInProgress.Code {
				t.Fatalf("classic heartbeat after the upgrade: %v", kerr.ErrorForCode(code))
			}
			cl.rebalance()
			if cooperative {
				// It still owns what it must give up: it keeps its
				// epoch and gets only what it keeps, then joins again.
				if cl.gen != gen || cl.size() != 3 {
					t.Fatalf("cooperative member revoking: gen %d owns %v", cl.gen, cl.owned)
				}
				if code := cl.heartbeat(); code != kerr.RebalanceInProgress.Code {
					t.Fatalf("classic heartbeat while revoking: %v", kerr.ErrorForCode(code))
				}
				cl.rebalance()
			}
			if cl.gen != gen+1 || cl.size() != 3 {
				t.Fatalf("classic member after its rebalance: gen %d owns %v", cl.gen, cl.owned)
			}
			convergeMixed(t, c, "g", []*classicClient{cl}, []*cmember{m})
			if m.owned.size() != 3 {
				t.Fatalf("consumer member owns %v", m.owned)
			}

			// Offsets: a classic member commits with its generation, any
			// version.
			commit := func(c *Coordinator, gen int32) int16 {
				return shards.Code(c.CommitOffsets(&CommitRequest{Group: "g", Generation: gen, MemberID: cl.id, RetentionMs: -1,
					Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "a", Partition: cl.owned["a"][0]}, Offset: 3, LeaderEpoch: -1}}})[0])
			}
			if code := commit(c, cl.gen); code != 0 {
				t.Fatalf("classic commit: %v", kerr.ErrorForCode(code))
			}
			if code := commit(c, cl.gen-1); code != kerr.IllegalGeneration.Code {
				t.Fatalf("classic commit with an old generation: %v", kerr.ErrorForCode(code))
			}
			if dg, _, _ := c.DescribeGroup("g"); len(dg.Members) != 2 {
				t.Fatalf("describe groups %+v", dg)
			}

			// Reloaded: the classic member is still one, and goes on.
			c.Close()
			c, _ = consumerCoordinator(t, n)
			cl.c, m.c = c, c
			d = c.DescribeConsumerGroup("g")
			if len(d.Members) != 2 || d.State != Stable {
				t.Fatalf("reloaded %+v", d)
			}
			for _, dm := range d.Members {
				if (dm.MemberID == cl.id) != dm.Classic {
					t.Fatalf("reloaded member %s classic=%v", dm.MemberID, dm.Classic)
				}
			}
			if code := cl.heartbeat(); code != 0 {
				t.Fatalf("classic heartbeat after reload: %v", kerr.ErrorForCode(code))
			}
			if res := cl.sync(); res.Err != nil || cl.size() != 3 {
				t.Fatalf("classic sync after reload %+v owns %v", res, cl.owned)
			}
			m.beat()
			// The classic member leaves: the consumer member takes all.
			if codes, _ := c.LeaveGroup("g", []LeaveMember{{MemberID: cl.id}}); codes[0] != nil {
				t.Fatalf("leave %v", codes)
			}
			converge(t, c, "g", m)
			if m.owned.size() != 6 {
				t.Fatalf("after the classic member left: %v", m.owned)
			}
		})
	}
}

func TestConsumerGroupClassicMemberJoinsAndDowngrade(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c, _ := consumerCoordinator(t, n)
	m := newMember(t, c, "g", "m1", "a")
	m.beat()
	// A classic consumer joins the consumer group: it gets its part
	// through JoinGroup and SyncGroup once m1 revoked it.
	cl := newClassic(t, c, "g", false, "a")
	if res := cl.join(); res.Err != nil || res.Leader == cl.id || res.ProtocolType != "consumer" || res.Protocol != "range" {
		t.Fatalf("classic join %+v", res)
	}
	if res := cl.sync(); res.Err != nil {
		t.Fatalf("classic sync %+v", res)
	}
	convergeMixed(t, c, "g", []*classicClient{cl}, []*cmember{m})
	if cl.size() != 3 || m.owned.size() != 3 {
		t.Fatalf("classic owns %v, consumer %v", cl.owned, m.owned)
	}
	// A stale or unknown classic member.
	if code := c.Heartbeat(&HeartbeatRequest{Group: "g", MemberID: cl.id, Generation: cl.gen + 1}); !errors.Is(code, kerr.IllegalGeneration) {
		t.Fatalf("heartbeat with a wrong generation: %v", code)
	}
	if code := c.Heartbeat(&HeartbeatRequest{Group: "g", MemberID: "m1", Generation: m.epoch}); !errors.Is(code, kerr.UnknownMemberID) {
		t.Fatalf("classic heartbeat of a consumer member: %v", code)
	}

	// The last consumer protocol member leaves: the group is classic
	// again, rebalancing.
	if res := m.leave(-1); res.Err != nil {
		t.Fatalf("leave %+v", res)
	}
	d, found, _ := c.DescribeGroup("g")
	if !found || d.State != PreparingRebalance || d.ProtocolType != "consumer" || len(d.Members) != 1 || d.Members[0].MemberID != cl.id {
		t.Fatalf("downgraded %+v", d)
	}
	if list, _ := c.ListGroups(); list[0].Type != ClassicType {
		t.Fatalf("list %+v", list)
	}
	if code := cl.heartbeat(); code != kerr.RebalanceInProgress.Code && code != kerr.IllegalGeneration.Code {
		t.Fatalf("classic heartbeat after the downgrade: %v", kerr.ErrorForCode(code))
	}
	res := cl.join()
	if res.Err != nil || res.Leader != cl.id || len(res.Members) != 1 {
		t.Fatalf("rejoin the classic group %+v", res)
	}
	all := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "a", Partitions: []int32{0, 1, 2, 3, 4, 5}}}}
	var sres SyncResult
	c.SyncGroup(&SyncRequest{Group: "g", MemberID: cl.id, Generation: cl.gen,
		Assignments: []Assignment{{MemberID: cl.id, Assignment: all.AppendTo(nil)}}}, func(r SyncResult) { sres = r })
	if sres.Err != nil {
		t.Fatalf("sync %+v", sres)
	}
	c.Close()
	c, _ = consumerCoordinator(t, n)
	if d, _, _ := c.DescribeGroup("g"); d.State != Stable || len(d.Members) != 1 || d.Members[0].MemberID != cl.id {
		t.Fatalf("reloaded %+v", d)
	}
	if d := c.DescribeConsumerGroup("g"); !errors.Is(d.Err, kerr.GroupIDNotFound) {
		t.Fatalf("still a consumer group after reload: %+v", d)
	}
}

// A classic member that does not come back after REBALANCE_IN_PROGRESS
// is fenced after its rebalance timeout.
func TestConsumerGroupClassicMemberJoinTimeout(t *testing.T) {
	n := openNode(t, t.TempDir())
	c, _ := consumerCoordinator(t, n)
	now := int64(1_000_000)
	c.now = func() int64 { return now }
	m := newMember(t, c, "g", "m1", "a")
	m.beat()
	cl := newClassic(t, c, "g", false, "a")
	cl.rebalance()
	convergeMixed(t, c, "g", []*classicClient{cl}, []*cmember{m})
	m2 := newMember(t, c, "g", "m2", "a")
	m2.beat()
	if code := cl.heartbeat(); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat %v", kerr.ErrorForCode(code))
	}
	now += 29_000
	m.beat()
	m2.beat()
	cl.heartbeat()
	now += 2_000
	m.beat()
	m2.beat()
	tick(c, "g")
	if d := c.DescribeConsumerGroup("g"); len(d.Members) != 2 {
		t.Fatalf("classic member not fenced: %+v", d)
	}
}

func TestConsumerGroupMigrationPolicyDisabled(t *testing.T) {
	n := openNode(t, t.TempDir())
	c, _ := consumerCoordinator(t, n)
	c.policy.UpgradeAllowed, c.policy.DowngradeAllowed = false, false
	joinSync(t, c, "classic", "", consumerMetadata("a"), []byte{})
	if res := newMember(t, c, "classic", "m1", "a").send(); !errors.Is(res.Err, kerr.GroupIDNotFound) {
		t.Fatalf("consumer member joining a classic group with members: %+v", res)
	}
	newMember(t, c, "g", "m1", "a").beat()
	if res := newClassic(t, c, "g", false, "a").join(); !errors.Is(res.Err, kerr.InconsistentGroupProtocol) {
		t.Fatalf("classic member joining a consumer group with members: %+v", res)
	}

	// Upgrade only: classic members join consumer groups, but a group
	// does not downgrade when its last consumer member leaves.
	c.policy.UpgradeAllowed = true
	m := newMember(t, c, "g2", "m1", "a")
	m.beat()
	cl := newClassic(t, c, "g2", false, "a")
	cl.rebalance()
	m.leave(-1)
	if d := c.DescribeConsumerGroup("g2"); d.Err != nil || len(d.Members) != 1 || !d.Members[0].Classic {
		t.Fatalf("downgraded against the policy: %+v", d)
	}
	// Not a consumer group, not classic members: a classic group whose
	// protocol type is not "consumer" never upgrades.
	var res JoinResult
	c.JoinGroup(&JoinRequest{Group: "connect", ProtocolType: "connect", Protocols: []Protocol{{Name: "default", Metadata: []byte{1}}},
		SessionTimeout: 30_000, RebalanceTimeout: 30_000}, func(r JoinResult) { res = r })
	if res.Err != nil {
		t.Fatalf("connect join %+v", res)
	}
	if res := newMember(t, c, "connect", "m1", "a").send(); !errors.Is(res.Err, kerr.GroupIDNotFound) {
		t.Fatalf("consumer member joining a connect group: %+v", res)
	}
}

func TestClassicMemberMetadataRecord(t *testing.T) {
	meta := memberMeta{clientID: "c", clientHost: "h", topics: []string{"a"}, rebalanceTimeout: 5,
		classic: &classicMeta{sessionTimeout: 45_000, protocols: []Protocol{{Name: "range", Metadata: []byte{0, 1, 2}}, {Name: "x", Metadata: []byte{}}}}}
	r := consumerRecord{typ: consumerMemberType, member: "m", meta: meta}
	key := appendConsumerKey(nil, r.typ, "g", "m")
	value := appendConsumerValue(nil, &r)
	_, got, err := decodeConsumerRecord(r.typ, key, value)
	if err != nil || !got.meta.equal(&meta) {
		t.Fatalf("decoded %+v %v", got.meta, err)
	}
	// Without the nullable struct's presence byte, as another writer may.
	body := appendClassicMeta(nil, meta.classic)[1:]
	c, err := decodeClassicMeta(body)
	if err != nil || !c.equal(meta.classic) {
		t.Fatalf("without the presence byte: %+v %v", c, err)
	}
	if c, err := decodeClassicMeta([]byte{0xff}); c != nil || err != nil {
		t.Fatalf("null: %+v %v", c, err)
	}
	if _, err := decodeClassicMeta([]byte{1, 0, 0}); err == nil {
		t.Fatal("short classic metadata decoded")
	}
}

// When a topic is deleted, every group's offsets of it are deleted; a
// group left with none and no members goes.
func TestDeletedTopicsOffsetsArePurged(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c, topics := consumerCoordinator(t, n)
	commit := func(group, topic string, p int32) {
		if codes := c.CommitOffsets(&CommitRequest{Group: group, Generation: -1, RetentionMs: -1,
			Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: topic, Partition: p}, Offset: 7, LeaderEpoch: -1}}}); codes[0] != nil {
			t.Fatalf("commit %v", codes)
		}
	}
	commit("both", "a", 0)
	commit("both", "a", 1)
	commit("both", "b", 0)
	commit("only-a", "a", 2)
	m := newMember(t, c, "consumer", "m1", "a", "b")
	m.beat()
	if codes := c.CommitOffsets(&CommitRequest{Group: "consumer", Generation: m.epoch, MemberID: "m1", RetentionMs: -1, UnknownGroupIsNotFound: true,
		Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "a", Partition: 3}, Offset: 7, LeaderEpoch: -1}}}); codes[0] != nil {
		t.Fatalf("consumer commit %v", codes)
	}
	// Topic a is deleted.
	next := &testTopics{version: topics.version + 1}
	for _, x := range topics.topics {
		if x.Name != "a" {
			next.topics = append(next.topics, x)
		}
	}
	*topics = *next
	c.SetTopics(next)
	c.purges.Wait()
	check := func(c *Coordinator) {
		t.Helper()
		got, _ := c.FetchOffsets("both", nil)
		if len(got) != 1 || got[0].Topic != "b" {
			t.Fatalf("offsets of both %+v", got)
		}
		if got, _ := c.FetchOffsets("consumer", nil); len(got) != 0 {
			t.Fatalf("offsets of consumer %+v", got)
		}
		list, _ := c.ListGroups()
		var names []string
		for _, l := range list {
			names = append(names, l.Group)
		}
		if !slices.Equal(names, []string{"both", "consumer"}) {
			t.Fatalf("groups %v", names)
		}
	}
	check(c)
	c.Close()
	c, _ = consumerCoordinator(t, n)
	check(c)
	// Nothing to purge when nothing was deleted.
	if gone := deletedTopics(topics, topics); gone != nil {
		t.Fatalf("deleted %v", gone)
	}
}
