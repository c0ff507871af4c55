package api_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node/nodetest"
)

// The group APIs at old and new versions, with raw requests: the fields
// each version has, the errors each version gets.

func TestGroupAPIVersions(t *testing.T) {
	b := startBroker(t, t.TempDir(), fastGroups)
	defer nodetest.Stop(t, b)
	conn := kzerotest.Dial(t, b.Addr().String())

	// ApiVersions lists the classic group APIs, KIP-848's, and the
	// group.version feature at 1.
	av := kzerotest.Do[*kmsg.ApiVersionsResponse](t, conn, 3, kmsg.NewPtrApiVersionsRequest())
	served := map[int16][2]int16{}
	for _, k := range av.ApiKeys {
		served[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	for key, want := range map[int16][2]int16{8: {0, 10}, 9: {0, 10}, 10: {0, 6}, 11: {0, 9}, 12: {0, 4}, 13: {0, 5}, 14: {0, 5}, 15: {0, 6}, 16: {0, 5}, 42: {0, 2}, 47: {0, 0},
		68: {0, 1}, 69: {0, 1}} {
		if served[key] != want {
			t.Errorf("%s: versions %v, want %v", kmsg.NameForKey(key), served[key], want)
		}
	}
	groupVersion := int16(-1)
	for _, f := range av.FinalizedFeatures {
		if f.Name == "group.version" {
			groupVersion = f.MaxVersionLevel
		}
	}
	if groupVersion != 1 {
		t.Errorf("group.version finalized at %d", groupVersion)
	}

	// FindCoordinator: v0 starts creating the offsets topic and answers
	// COORDINATOR_NOT_AVAILABLE at once, as Kafka does; once the topic
	// exists it names this broker.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "g0"
	if first := kzerotest.Do[*kmsg.FindCoordinatorResponse](t, conn, 0, fc); first.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("first find coordinator v0, before the offsets topic exists: %v", kerr.ErrorForCode(first.ErrorCode))
	}
	f0 := kzerotest.FindCoordinator(t, conn, 0, fc)
	kzerotest.WantCode(t, "find coordinator v0", f0.ErrorCode, nil)
	if f0.NodeID != 1 || f0.Host != "127.0.0.1" || f0.Port <= 0 {
		t.Fatalf("coordinator %d %s:%d", f0.NodeID, f0.Host, f0.Port)
	}
	fc.CoordinatorType = 1
	f1 := kzerotest.FindCoordinator(t, conn, 1, fc)
	if f1.ErrorCode != 0 || f1.NodeID != 1 {
		t.Fatalf("transaction coordinator v1: %v node %d", kerr.ErrorForCode(f1.ErrorCode), f1.NodeID)
	}
	fc = kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"a", "b"}
	f4 := kzerotest.Do[*kmsg.FindCoordinatorResponse](t, conn, 4, fc)
	if len(f4.Coordinators) != 2 || f4.Coordinators[0].Key != "a" || f4.Coordinators[1].Key != "b" ||
		f4.Coordinators[0].ErrorCode != 0 || f4.Coordinators[1].NodeID != 1 {
		t.Fatalf("batched: %+v", f4.Coordinators)
	}
	fc.CoordinatorType = 9
	f6 := kzerotest.Do[*kmsg.FindCoordinatorResponse](t, conn, 6, fc)
	if f6.Coordinators[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("unknown key type: %v", kerr.ErrorForCode(f6.Coordinators[0].ErrorCode))
	}

	// JoinGroup v0: a member id at once, the rebalance timeout is the
	// session timeout; the protocol is "" rather than null before v7.
	join := func(v int16, group, member string, instance *string, protocols ...string) *kmsg.JoinGroupResponse {
		r := kmsg.NewPtrJoinGroupRequest()
		r.Group, r.MemberID, r.InstanceID, r.ProtocolType = group, member, instance, "consumer"
		r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = 6000, 6000
		for _, p := range protocols {
			r.Protocols = append(r.Protocols, kmsg.JoinGroupRequestProtocol{Name: p, Metadata: []byte(p + "-meta")})
		}
		return kzerotest.Do[*kmsg.JoinGroupResponse](t, conn, v, r)
	}
	j0 := join(0, "g0", "", nil, "range")
	kzerotest.WantCode(t, "join v0", j0.ErrorCode, nil)
	if j0.Generation != 1 || j0.LeaderID != j0.MemberID || j0.Protocol == nil || *j0.Protocol != "range" || len(j0.Members) != 1 || string(j0.Members[0].ProtocolMetadata) != "range-meta" {
		t.Fatalf("join v0: %+v", j0)
	}
	bad := join(0, "g0", "", nil, "roundrobin")
	if bad.ErrorCode != kerr.InconsistentGroupProtocol.Code || bad.Protocol == nil || *bad.Protocol != "" {
		t.Fatalf("inconsistent join v0: %v %v", kerr.ErrorForCode(bad.ErrorCode), bad.Protocol)
	}
	// SyncGroup v0 by the leader.
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = "g0", j0.MemberID, j0.Generation
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: j0.MemberID, MemberAssignment: []byte{1, 2, 3}}}
	s0 := kzerotest.Do[*kmsg.SyncGroupResponse](t, conn, 0, sync)
	kzerotest.WantCode(t, "sync v0", s0.ErrorCode, nil)
	if !slices.Equal(s0.MemberAssignment, []byte{1, 2, 3}) {
		t.Fatalf("assignment %v", s0.MemberAssignment)
	}
	// v5 checks the protocol name.
	sync.GroupAssignment = nil
	sync.ProtocolType, sync.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("roundrobin")
	s5 := kzerotest.Do[*kmsg.SyncGroupResponse](t, conn, 5, sync)
	if s5.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("sync v5 with another protocol: %v", kerr.ErrorForCode(s5.ErrorCode))
	}
	sync.Protocol = kmsg.StringPtr("range")
	s5 = kzerotest.Do[*kmsg.SyncGroupResponse](t, conn, 5, sync)
	if s5.ErrorCode != 0 || s5.Protocol == nil || *s5.Protocol != "range" || *s5.ProtocolType != "consumer" || !slices.Equal(s5.MemberAssignment, []byte{1, 2, 3}) {
		t.Fatalf("sync v5: %+v", s5)
	}

	// Heartbeat v0.
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "g0", j0.MemberID, j0.Generation
	kzerotest.WantCode(t, "heartbeat v0", kzerotest.Do[*kmsg.HeartbeatResponse](t, conn, 0, hb).ErrorCode, nil)
	hb.MemberID = "stranger"
	if code := kzerotest.Do[*kmsg.HeartbeatResponse](t, conn, 4, hb).ErrorCode; code != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat of a stranger: %v", kerr.ErrorForCode(code))
	}

	// JoinGroup v4+: MEMBER_ID_REQUIRED first.
	j4 := join(4, "g4", "", nil, "range")
	if j4.ErrorCode != kerr.MemberIDRequired.Code || j4.MemberID == "" {
		t.Fatalf("join v4: %v %q", kerr.ErrorForCode(j4.ErrorCode), j4.MemberID)
	}
	j9 := join(9, "g4", j4.MemberID, nil, "range")
	if j9.ErrorCode != 0 || j9.MemberID != j4.MemberID || j9.ProtocolType == nil || *j9.ProtocolType != "consumer" {
		t.Fatalf("join v9 with the member id: %+v", j9)
	}
	// A static member (v5) needs no second round.
	j5 := join(5, "g5", "", kmsg.StringPtr("inst"), "range")
	if j5.ErrorCode != 0 || len(j5.MemberID) < 5 || j5.MemberID[:5] != "inst-" || j5.Members[0].InstanceID == nil {
		t.Fatalf("static join v5: %+v", j5)
	}

	// LeaveGroup v0 and v3 (batched).
	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Group, lv.MemberID = "g0", j0.MemberID
	kzerotest.WantCode(t, "leave v0", kzerotest.Do[*kmsg.LeaveGroupResponse](t, conn, 0, lv).ErrorCode, nil)
	lv = kmsg.NewPtrLeaveGroupRequest()
	lv.Group = "g5"
	lv.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "x", InstanceID: kmsg.StringPtr("inst")}, {InstanceID: kmsg.StringPtr("inst")}, {MemberID: "nobody"}}
	l3 := kzerotest.Do[*kmsg.LeaveGroupResponse](t, conn, 3, lv)
	var codes []int16
	for _, m := range l3.Members {
		codes = append(codes, m.ErrorCode)
	}
	if l3.ErrorCode != 0 || !slices.Equal(codes, []int16{kerr.FencedInstanceID.Code, 0, kerr.UnknownMemberID.Code}) {
		t.Fatalf("batched leave: %v %v", l3.ErrorCode, codes)
	}

	// OffsetCommit v2 (with a retention time) outside group management,
	// OffsetFetch v1 (partitions named) and v2 (all of the group's).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kzerotest.CreateTopic(t, ctx, nodetest.Client(t, b), "vt", 2, nil)
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation, oc.RetentionTimeMillis = "offsets", -1, 60_000
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "vt", Partitions: []kmsg.OffsetCommitRequestTopicPartition{
		{Partition: 0, Offset: 10, Metadata: kmsg.StringPtr("m0")}, {Partition: 7, Offset: 1}}}}
	c2 := kzerotest.Do[*kmsg.OffsetCommitResponse](t, conn, 2, oc)
	if p := c2.Topics[0].Partitions; p[0].ErrorCode != 0 || p[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("commit v2: %+v", p)
	}
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Group = "offsets"
	of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "vt", Partitions: []int32{0, 1}}}
	f1r := kzerotest.Do[*kmsg.OffsetFetchResponse](t, conn, 1, of)
	if p := f1r.Topics[0].Partitions; p[0].Offset != 10 || *p[0].Metadata != "m0" || p[1].Offset != -1 || *p[1].Metadata != "" {
		t.Fatalf("fetch v1: %+v", p)
	}
	of.Topics = nil
	f2r := kzerotest.Do[*kmsg.OffsetFetchResponse](t, conn, 2, of)
	if f2r.ErrorCode != 0 || len(f2r.Topics) != 1 || len(f2r.Topics[0].Partitions) != 1 || f2r.Topics[0].Partitions[0].Offset != 10 {
		t.Fatalf("fetch v2 of all: %+v", f2r)
	}
	// v8: groups batched, one of them unknown.
	of = kmsg.NewPtrOffsetFetchRequest()
	of.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "offsets"}, {Group: "unknown", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "vt", Partitions: []int32{0}}}}}
	of.RequireStable = true
	f8 := kzerotest.Do[*kmsg.OffsetFetchResponse](t, conn, 8, of)
	if len(f8.Groups) != 2 || f8.Groups[0].Topics[0].Partitions[0].Offset != 10 || f8.Groups[1].ErrorCode != 0 || f8.Groups[1].Topics[0].Partitions[0].Offset != -1 {
		t.Fatalf("fetch v8: %+v", f8.Groups)
	}

	// ListGroups v0 and with filters.
	lg := kmsg.NewPtrListGroupsRequest()
	l0 := kzerotest.Do[*kmsg.ListGroupsResponse](t, conn, 0, lg)
	var names []string
	for _, g := range l0.Groups {
		names = append(names, g.Group)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"g0", "g4", "g5", "offsets"}) {
		t.Fatalf("listed %v", names)
	}
	lg.StatesFilter = []string{"completingrebalance"}
	l4 := kzerotest.Do[*kmsg.ListGroupsResponse](t, conn, 4, lg)
	if len(l4.Groups) != 1 || l4.Groups[0].Group != "g4" || l4.Groups[0].GroupState != "CompletingRebalance" {
		t.Fatalf("listed by state %+v", l4.Groups)
	}
	lg.StatesFilter, lg.TypesFilter = nil, []string{"consumer"}
	if l5 := kzerotest.Do[*kmsg.ListGroupsResponse](t, conn, 5, lg); len(l5.Groups) != 0 {
		t.Fatalf("listed KIP-848 groups %+v", l5.Groups)
	}
	lg.TypesFilter = []string{"Classic"}
	if l5 := kzerotest.Do[*kmsg.ListGroupsResponse](t, conn, 5, lg); len(l5.Groups) != 4 || l5.Groups[0].GroupType != "classic" {
		t.Fatalf("listed classic groups %+v", l5.Groups)
	}

	// DescribeGroups: a missing group is Dead before v6, not found from v6.
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"missing", "g4"}
	d0 := kzerotest.Do[*kmsg.DescribeGroupsResponse](t, conn, 0, dg)
	if d0.Groups[0].ErrorCode != 0 || d0.Groups[0].State != "Dead" || d0.Groups[1].State != "CompletingRebalance" || len(d0.Groups[1].Members) != 1 {
		t.Fatalf("describe v0: %+v", d0.Groups)
	}
	dg.IncludeAuthorizedOperations = true
	d6 := kzerotest.Do[*kmsg.DescribeGroupsResponse](t, conn, 6, dg)
	if d6.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code || d6.Groups[1].AuthorizedOperations != 1<<3|1<<6|1<<8 {
		t.Fatalf("describe v6: %+v", d6.Groups)
	}

	// DeleteGroups v0; OffsetDelete v0.
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "offsets"
	od.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "vt", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}, {Topic: "nope", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	o0 := kzerotest.Do[*kmsg.OffsetDeleteResponse](t, conn, 0, od)
	if o0.ErrorCode != 0 || o0.Topics[0].Partitions[0].ErrorCode != 0 || o0.Topics[1].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("offset delete: %+v", o0)
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"offsets", "g4", "missing"}
	d := kzerotest.Do[*kmsg.DeleteGroupsResponse](t, conn, 0, del)
	codes = codes[:0]
	for _, g := range d.Groups {
		codes = append(codes, g.ErrorCode)
	}
	if !slices.Equal(codes, []int16{0, kerr.NonEmptyGroup.Code, kerr.GroupIDNotFound.Code}) {
		t.Fatalf("delete groups: %v", codes)
	}
}
