package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"kzero/kzerotest/await"
)

// KIP-1071 streams groups end to end, with raw StreamsGroupHeartbeat
// requests over loopback: a model Kafka Streams member that applies each
// assignment it gets and reports it as owned in its next heartbeat.

// streamsMember is a model Kafka Streams client of group "app".
type streamsMember struct {
	id, process string
	port        uint16
	epoch       int32
	// endpointEpoch is the last EndpointInformationEpoch seen, and
	// endpoints the partitions behind each user endpoint then.
	endpointEpoch int32
	endpoints     []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint
	active        []kmsg.TaskIDs
	standby       []kmsg.TaskIDs
	warmup        []kmsg.TaskIDs
	statuses      []int8
}

// streamsTopology is the application: subtopology 0 reads "in" and keeps
// a store whose changelog the broker must create.
func streamsTopology() *kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{"in"}
	cl := kmsg.NewTopicInfo()
	cl.Topic = "app-store-changelog"
	cl.Configs = []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}
	st.StateChangelogTopics = []kmsg.TopicInfo{cl}
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	return &t
}

// heartbeat sends one heartbeat (a join at epoch 0) and applies the
// response.
func (m *streamsMember) heartbeat(t *testing.T, conn *rawConn) *kmsg.StreamsGroupHeartbeatResponse {
	t.Helper()
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	r.Group, r.MemberID, r.MemberEpoch = "app", m.id, m.epoch
	r.RebalanceTimeoutMillis = -1
	r.EndpointInformationEpoch = m.endpointEpoch
	if m.epoch == 0 {
		r.RebalanceTimeoutMillis = 10000
		r.Topology = streamsTopology()
		r.ProcessID = &m.process
		r.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "localhost", Port: m.port}
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	} else {
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = nonNil(m.active), nonNil(m.standby), nonNil(m.warmup)
	}
	resp := rawGroupRequest[*kmsg.StreamsGroupHeartbeatResponse](t, conn, 0, r)
	if resp.ErrorCode != 0 {
		return resp
	}
	m.epoch = resp.MemberEpoch
	if resp.ActiveTasks != nil {
		m.active, m.standby, m.warmup = resp.ActiveTasks, resp.StandbyTasks, resp.WarmupTasks
	}
	if resp.PartitionsByUserEndpoint != nil {
		m.endpoints = resp.PartitionsByUserEndpoint
	}
	m.endpointEpoch = resp.EndpointInformationEpoch
	m.statuses = m.statuses[:0]
	for _, s := range resp.Status {
		m.statuses = append(m.statuses, s.StatusCode)
	}
	return resp
}

func nonNil(ts []kmsg.TaskIDs) []kmsg.TaskIDs {
	if ts == nil {
		return []kmsg.TaskIDs{}
	}
	return ts
}

func countTasks(ts []kmsg.TaskIDs) int {
	n := 0
	for _, t := range ts {
		n += len(t.Partitions)
	}
	return n
}

// heartbeatUntil heartbeats the members in turn until ok holds (the
// group's reconciliation, which moves one heartbeat at a time).
func heartbeatUntil(t *testing.T, conn *rawConn, what string, ok func() bool, ms ...*streamsMember) {
	t.Helper()
	// Each check not yet true is a round of heartbeats, a tick (a
	// heartbeat interval, shortened) apart.
	await.True(t, 30*time.Second, func() bool {
		if ok() {
			return true
		}
		for _, m := range ms {
			if resp := m.heartbeat(t, conn); resp.ErrorCode != 0 {
				t.Fatalf("%s: heartbeat of %s: %v", what, m.id, kerr.ErrorForCode(resp.ErrorCode))
			}
		}
		return false
	}, what)
}

func describeStreams(t *testing.T, conn *rawConn) kmsg.StreamsGroupDescribeResponseGroup {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{"app"}
	return rawGroupRequest[*kmsg.StreamsGroupDescribeResponse](t, conn, 0, req).Groups[0]
}

func TestStreamsGroup(t *testing.T) {
	dir := t.TempDir()
	opts := []string{
		"group.streams.session.timeout.ms", "1000", "group.streams.min.session.timeout.ms", "1000",
		"group.streams.heartbeat.interval.ms", "100", "group.streams.min.heartbeat.interval.ms", "100",
		"group.streams.initial.rebalance.delay.ms", "200",
	}
	b := startGroupBroker(t, dir, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b))
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "in"); err != nil {
		t.Fatal(err)
	}
	conn := dialRaw(t, b.Addr().String())

	// ApiVersions lists the streams APIs at v0 and streams.version 1.
	av := rawGroupRequest[*kmsg.ApiVersionsResponse](t, conn, 3, kmsg.NewPtrApiVersionsRequest())
	for _, k := range av.ApiKeys {
		if (k.ApiKey == 88 || k.ApiKey == 89) && (k.MinVersion != 0 || k.MaxVersion != 0) {
			t.Errorf("%s: versions %d-%d", kmsg.NameForKey(k.ApiKey), k.MinVersion, k.MaxVersion)
		}
	}
	if !slices.ContainsFunc(av.FinalizedFeatures, func(f kmsg.ApiVersionsResponseFinalizedFeature) bool {
		return f.Name == "streams.version" && f.MaxVersionLevel == 1
	}) {
		t.Errorf("streams.version not finalized at 1: %+v", av.FinalizedFeatures)
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "app"
	wantNoErr(t, "find coordinator", findCoordinator(t, conn, 3, fc).ErrorCode)

	// m1 joins: the changelog topic is missing, so the broker creates it
	// (4 partitions, one per task) and m1 gets every task once it exists.
	m1 := &streamsMember{id: "m1", process: "p1", port: 8080}
	resp := m1.heartbeat(t, conn)
	wantNoErr(t, "join", resp.ErrorCode)
	if resp.HeartbeatIntervalMillis != 100 || resp.MemberEpoch <= 0 || !slices.Contains(m1.statuses, 5) {
		t.Fatalf("join: interval %d epoch %d statuses %v (want ASSIGNMENT_DELAYED)", resp.HeartbeatIntervalMillis, resp.MemberEpoch, m1.statuses)
	}
	heartbeatUntil(t, conn, "m1 gets all tasks", func() bool { return countTasks(m1.active) == 4 && len(m1.statuses) == 0 }, m1)
	topics, err := adm.ListTopics(ctx, "app-store-changelog")
	if err != nil {
		t.Fatal(err)
	}
	if d := topics["app-store-changelog"]; d.Err != nil || len(d.Partitions) != 4 {
		t.Fatalf("changelog topic: %v, %d partitions", d.Err, len(d.Partitions))
	}

	// m2 joins: tasks move to it only after m1 revoked them; then two each.
	m2 := &streamsMember{id: "m2", process: "p2", port: 8081}
	heartbeatUntil(t, conn, "two tasks each", func() bool {
		return countTasks(m1.active) == 2 && countTasks(m2.active) == 2 && m1.epoch == m2.epoch
	}, m1, m2)
	d := describeStreams(t, conn)
	if d.ErrorCode != 0 || d.State != "Stable" || len(d.Members) != 2 || d.Topology == nil || len(d.Topology.Subtopologies) != 1 {
		t.Fatalf("describe: %+v", d)
	}
	if cl := d.Topology.Subtopologies[0].StateChangelogTopics; len(cl) != 1 || cl[0].NumPartitions != 4 {
		t.Fatalf("described changelog topics: %+v (want 4 partitions, as configured)", cl)
	}
	if d.Members[0].ProcessID != "p1" || d.Members[0].UserEndpoint == nil || d.Members[0].UserEndpoint.Port != 8080 {
		t.Fatalf("member: %+v", d.Members[0])
	}
	// Interactive queries: each endpoint with the partitions of "in" its
	// active tasks read, two each.
	m1.heartbeat(t, conn)
	if len(m1.endpoints) != 2 {
		t.Fatalf("partitions by endpoint: %+v", m1.endpoints)
	}
	for _, e := range m1.endpoints {
		if len(e.ActivePartitions) != 1 || e.ActivePartitions[0].Topic != "in" || len(e.ActivePartitions[0].Partitions) != 2 {
			t.Fatalf("partitions of endpoint %+v: %+v", e.UserEndpoint, e.ActivePartitions)
		}
	}
	if resp := m1.heartbeat(t, conn); resp.PartitionsByUserEndpoint != nil {
		t.Fatalf("endpoints sent again at the same epoch: %+v", resp.PartitionsByUserEndpoint)
	}

	// The group is a streams group to the other protocols' APIs.
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "app", "consumer", 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{}}}
	if code := rawGroupRequest[*kmsg.JoinGroupResponse](t, conn, 9, join).ErrorCode; code != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("classic join: %v", kerr.ErrorForCode(code))
	}
	chb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	chb.Group, chb.MemberID, chb.RebalanceTimeoutMillis, chb.SubscribedTopicNames = "app", "c1", 10000, []string{"in"}
	chb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if code := rawGroupRequest[*kmsg.ConsumerGroupHeartbeatResponse](t, conn, 1, chb).ErrorCode; code != kerr.GroupIDNotFound.Code {
		t.Fatalf("consumer heartbeat: %v", kerr.ErrorForCode(code))
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"app"}
	if g := rawGroupRequest[*kmsg.DescribeGroupsResponse](t, conn, 6, dg).Groups[0]; g.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("describe groups v6: %v", kerr.ErrorForCode(g.ErrorCode))
	}
	if g := rawGroupRequest[*kmsg.DescribeGroupsResponse](t, conn, 5, dg).Groups[0]; g.ErrorCode != 0 || g.State != "Dead" {
		t.Fatalf("describe groups v5: %v %s", kerr.ErrorForCode(g.ErrorCode), g.State)
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"app"}
	if code := rawGroupRequest[*kmsg.DeleteGroupsResponse](t, conn, 2, del).Groups[0].ErrorCode; code != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete a group with members: %v", kerr.ErrorForCode(code))
	}

	// ListGroups knows the type; DescribeGroups does not describe it.
	lg := kmsg.NewPtrListGroupsRequest()
	lg.TypesFilter = []string{"streams"}
	groups := rawGroupRequest[*kmsg.ListGroupsResponse](t, conn, 5, lg).Groups
	if len(groups) != 1 || groups[0].Group != "app" || groups[0].GroupType != "streams" || groups[0].GroupState != "Stable" {
		t.Fatalf("list groups: %+v", groups)
	}

	// Offsets are committed with the member's epoch.
	commit := func(epoch int32) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.MemberID, req.Generation = "app", "m1", epoch
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "in"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 0, 42
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return rawGroupRequest[*kmsg.OffsetCommitResponse](t, conn, 9, req).Topics[0].Partitions[0].ErrorCode
	}
	wantNoErr(t, "commit", commit(m1.epoch))
	if code := commit(m1.epoch + 1); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit with a wrong epoch: %v", kerr.ErrorForCode(code))
	}
	fetch := func(epoch int32) kmsg.OffsetFetchResponseGroup {
		req := kmsg.NewPtrOffsetFetchRequest()
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group, rg.MemberID, rg.MemberEpoch = "app", kmsg.StringPtr("m1"), epoch
		rt := kmsg.NewOffsetFetchRequestGroupTopic()
		rt.Topic, rt.Partitions = "in", []int32{0}
		rg.Topics = append(rg.Topics, rt)
		req.Groups = append(req.Groups, rg)
		return rawGroupRequest[*kmsg.OffsetFetchResponse](t, conn, 9, req).Groups[0]
	}
	if g := fetch(m1.epoch); g.ErrorCode != 0 || g.Topics[0].Partitions[0].Offset != 42 {
		t.Fatalf("fetch: %v %+v", kerr.ErrorForCode(g.ErrorCode), g.Topics)
	}
	if g := fetch(m1.epoch + 1); g.ErrorCode != kerr.StaleMemberEpoch.Code {
		t.Fatalf("fetch with a wrong epoch: %v", kerr.ErrorForCode(g.ErrorCode))
	}

	// m2 leaves: m1 gets its tasks back.
	leave := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	leave.Group, leave.MemberID, leave.MemberEpoch, leave.RebalanceTimeoutMillis = "app", "m2", -1, -1
	if r := rawGroupRequest[*kmsg.StreamsGroupHeartbeatResponse](t, conn, 0, leave); r.ErrorCode != 0 || r.MemberEpoch != -1 {
		t.Fatalf("leave: %v epoch %d", kerr.ErrorForCode(r.ErrorCode), r.MemberEpoch)
	}
	heartbeatUntil(t, conn, "m1 gets all tasks back", func() bool { return countTasks(m1.active) == 4 }, m1)
	epoch := m1.epoch

	// A restart keeps the group: its epoch, member and tasks.
	stopBroker(t, b)
	b = startGroupBroker(t, dir, opts...)
	defer stopBroker(t, b)
	conn = dialRaw(t, b.Addr().String())
	wantNoErr(t, "find coordinator after restart", findCoordinator(t, conn, 3, fc).ErrorCode)
	d = describeStreams(t, conn)
	if d.ErrorCode != 0 || d.Epoch != epoch || len(d.Members) != 1 || d.Members[0].MemberID != "m1" ||
		d.Members[0].MemberEpoch != epoch || countTasks(d.Members[0].Assignment.ActiveTasks) != 4 {
		t.Fatalf("after restart: %+v", d)
	}
	if resp := m1.heartbeat(t, conn); resp.ErrorCode != 0 || resp.MemberEpoch != epoch {
		t.Fatalf("heartbeat after restart: %v epoch %d", kerr.ErrorForCode(resp.ErrorCode), resp.MemberEpoch)
	}

	// m1 stops heartbeating: its session expires and it is fenced.
	if !await.Poll(30*time.Second, func() bool { d = describeStreams(t, conn); return d.State == "Empty" }) {
		t.Fatalf("m1 never expired: %+v", d)
	}
	if resp := m1.heartbeat(t, conn); resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat of an expired member: %v", kerr.ErrorForCode(resp.ErrorCode))
	}

	// Empty, it can be deleted, offsets and all.
	if code := rawGroupRequest[*kmsg.DeleteGroupsResponse](t, conn, 2, del).Groups[0].ErrorCode; code != 0 {
		t.Fatalf("delete: %v", kerr.ErrorForCode(code))
	}
	if d = describeStreams(t, conn); d.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("describe after delete: %+v", d)
	}
}

// TestStreamsGroupConfigsAndWarmups: Kafka 4.3's streams groups on the
// wire. The group configs streams.* (IncrementalAlterConfigs on the GROUP
// resource) override the broker's group.streams.* for their group, within
// the broker's bounds (else INVALID_CONFIG, as Kafka's
// GroupConfig.validate); no warm-up task is ever assigned, and a member
// that reports one, or its task offsets, is refused (INVALID_REQUEST).
func TestStreamsGroupConfigsAndWarmups(t *testing.T) {
	b := startGroupBroker(t, t.TempDir(), "group.streams.initial.rebalance.delay.ms", "0")
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "in"); err != nil {
		t.Fatal(err)
	}

	for _, bad := range []struct{ key, value, msg string }{
		{"streams.session.timeout.ms", "1000", "streams.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms"},
		{"streams.heartbeat.interval.ms", "20000", "streams.heartbeat.interval.ms must be less than or equal to group.streams.max.heartbeat.interval.ms"},
		{"streams.num.standby.replicas", "3", "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"},
		{"streams.num.standby.replicas", "-1", "Invalid value -1 for configuration streams.num.standby.replicas: Value must be at least 0"},
	} {
		r := alterGroupConfigs(t, ctx, cl, "app", bad.key, bad.value)
		if r.ErrorCode != kerr.InvalidConfig.Code || r.ErrorMessage == nil || *r.ErrorMessage != bad.msg {
			t.Errorf("%s=%s: %v %v, want INVALID_CONFIG %q", bad.key, bad.value, kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage, bad.msg)
		}
	}
	setGroupConfigs(t, ctx, cl, "app", "streams.heartbeat.interval.ms", "7000", "streams.num.standby.replicas", "1")

	conn := dialRaw(t, b.Addr().String())
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "app"
	wantNoErr(t, "find coordinator", findCoordinator(t, conn, 3, fc).ErrorCode)

	// Two members on two processes: a task each, and a standby of the
	// other's (the group's streams.num.standby.replicas); the heartbeat
	// interval is the group's.
	m1 := &streamsMember{id: "m1", process: "p1", port: 8080}
	m2 := &streamsMember{id: "m2", process: "p2", port: 8081}
	resp := m1.heartbeat(t, conn)
	wantNoErr(t, "join", resp.ErrorCode)
	if resp.HeartbeatIntervalMillis != 7000 {
		t.Fatalf("heartbeat interval %d, want the group's 7000", resp.HeartbeatIntervalMillis)
	}
	heartbeatUntil(t, conn, "a task and a standby each", func() bool {
		return countTasks(m1.active) == 1 && countTasks(m2.active) == 1 && countTasks(m1.standby) == 1 && countTasks(m2.standby) == 1 &&
			m1.epoch == m2.epoch
	}, m1, m2)
	d := describeStreams(t, conn)
	if d.ErrorCode != 0 || len(d.Members) != 2 {
		t.Fatalf("describe: %+v", d)
	}
	for _, m := range d.Members {
		if len(m.Assignment.WarmupTasks) != 0 || len(m.TargetAssignment.WarmupTasks) != 0 || len(m.TaskOffsets) != 0 || len(m.TaskEndOffsets) != 0 {
			t.Fatalf("member %s: warm-up tasks %v/%v, task offsets %v/%v: Kafka 4.3 has none", m.MemberID,
				m.Assignment.WarmupTasks, m.TargetAssignment.WarmupTasks, m.TaskOffsets, m.TaskEndOffsets)
		}
	}

	// A member that reports a warm-up task, or task offsets, is refused.
	refused := func(what, msg string, edit func(*kmsg.StreamsGroupHeartbeatRequest)) {
		t.Helper()
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = "app", m1.id, m1.epoch, -1
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = nonNil(m1.active), nonNil(m1.standby), []kmsg.TaskIDs{}
		edit(r)
		resp := rawGroupRequest[*kmsg.StreamsGroupHeartbeatResponse](t, conn, 0, r)
		if resp.ErrorCode != kerr.InvalidRequest.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != msg {
			t.Fatalf("%s: %v %v, want INVALID_REQUEST %q", what, kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage, msg)
		}
	}
	refused("a warm-up task", "WarmupTasks are not supported yet.", func(r *kmsg.StreamsGroupHeartbeatRequest) {
		r.WarmupTasks = []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: []int32{0}}}
	})
	refused("task offsets", "TaskOffsets are not supported yet.", func(r *kmsg.StreamsGroupHeartbeatRequest) {
		r.TaskOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 0, Offset: 10}}
	})
	refused("task end offsets", "TaskEndOffsets are not supported yet.", func(r *kmsg.StreamsGroupHeartbeatRequest) {
		r.TaskEndOffsets = []kmsg.TaskOffset{}
	})
	if resp := m1.heartbeat(t, conn); resp.ErrorCode != 0 {
		t.Fatalf("heartbeat after the refusals: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}

// TestStreamsGroupACLs: a streams member needs READ on the group,
// DESCRIBE on its topology's topics, and CREATE for the broker to create
// its internal topics (else a status says so), as Kafka checks.
func TestStreamsGroupACLs(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), aclProps()...)
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	user := func(name string) *kgo.Client {
		return newSASLClient(t, b, plain.Auth{User: name, Pass: name + "-pw"}.AsMechanism(), kgo.RequestRetries(1))
	}
	admin := kadm.NewClient(user("admin"))
	if _, err := admin.CreateTopic(ctx, 2, 1, nil, "in"); err != nil {
		t.Fatal(err)
	}
	allow := func(acl *kadm.ACLBuilder) {
		t.Helper()
		res, err := admin.CreateACLs(ctx, acl)
		if err != nil || len(res) == 0 || res[0].Err != nil {
			t.Fatalf("create acl: %v %+v", err, res)
		}
	}
	allow(kadm.NewACLs().Allow("User:alice").Groups("app").Operations(kadm.OpRead))
	allow(kadm.NewACLs().Allow("User:alice").Topics("in").Operations(kadm.OpDescribe))

	// Through the group's coordinator, as a client's heartbeats go.
	join := func(cl *kgo.Client) *kmsg.StreamsGroupHeartbeatResponse {
		t.Helper()
		var c kadm.FindCoordinatorResponse
		if !await.PollCtx(ctx, func() bool {
			c = kadm.NewClient(user("admin")).FindGroupCoordinators(ctx, "app")["app"]
			return c.Err == nil
		}) {
			t.Fatal(c.Err)
		}
		coord := c.NodeID
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID, r.RebalanceTimeoutMillis = "app", "m1", 10000
		r.Topology = streamsTopology()
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		p := "p1"
		r.ProcessID = &p
		resp, err := r.RequestWith(ctx, cl.Broker(int(coord)))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if code := join(user("bob")).ErrorCode; code != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("bob, no group ACL: %v", kerr.ErrorForCode(code))
	}
	alice := user("alice")
	resp := join(alice)
	if resp.ErrorCode != kerr.TopicAuthorizationFailed.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != "Unauthorized to DESCRIBE on topics app-store-changelog." {
		t.Fatalf("alice, changelog topic not describable: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	allow(kadm.NewACLs().Allow("User:alice").Topics("app-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpDescribe))
	resp = join(alice)
	if resp.ErrorCode != 0 || !slices.ContainsFunc(resp.Status, func(s kmsg.StreamsGroupHeartbeatResponseStatus) bool {
		return s.StatusCode == 3 && s.StatusDetail == "Unauthorized to CREATE on topics app-store-changelog."
	}) {
		t.Fatalf("alice, no CREATE: %v %+v", kerr.ErrorForCode(resp.ErrorCode), resp.Status)
	}
	if topics, err := admin.ListTopics(ctx, "app-store-changelog"); err != nil || topics["app-store-changelog"].Err == nil {
		t.Fatalf("the changelog topic was created without CREATE: %v %+v", err, topics)
	}
}
