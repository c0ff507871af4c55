package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest/await"
)

// KIP-932 share groups end to end on a real broker.

// shareHeartbeat sends a ShareGroupHeartbeat, retrying while the group's
// coordinator is loading.
func shareHeartbeat(t *testing.T, ctx context.Context, cl *kgo.Client, group, member string, epoch int32, topics []string) *kmsg.ShareGroupHeartbeatResponse {
	t.Helper()
	for {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = group, member, epoch, topics
		resp, err := req.RequestWith(ctx, cl)
		if err != nil && !coordinatorPending(err) {
			t.Fatalf("share heartbeat of %s: %v", member, err)
		}
		if err == nil && !coordinatorPending(kerr.ErrorForCode(resp.ErrorCode)) {
			return resp
		}
		select {
		case <-ctx.Done():
			t.Fatalf("share heartbeat of %s: coordinator never ready", member)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func describeShareGroup(t *testing.T, ctx context.Context, cl *kgo.Client, group string) kmsg.ShareGroupDescribeResponseGroup {
	t.Helper()
	for {
		req := kmsg.NewPtrShareGroupDescribeRequest()
		req.GroupIDs = []string{group}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil && !coordinatorPending(err) {
			t.Fatalf("describe share group: %v", err)
		}
		if err == nil && len(resp.Groups) != 1 {
			t.Fatalf("describe share group: %d groups", len(resp.Groups))
		}
		if err == nil && !coordinatorPending(kerr.ErrorForCode(resp.Groups[0].ErrorCode)) {
			return resp.Groups[0]
		}
		select {
		case <-ctx.Done():
			t.Fatal("describe share group: coordinator never ready")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func assigned(a *kmsg.ShareGroupHeartbeatResponseAssignment) int {
	n := 0
	if a != nil {
		for _, t := range a.TopicPartitions {
			n += len(t.Partitions)
		}
	}
	return n
}

// Members join a share group over the wire, share the topic's partitions
// (three members, two partitions: one is shared), are listed as a share
// group, survive a broker restart, then leave, and the empty group is
// deleted.
func TestShareGroupMembership(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	b := startGroupBroker(t, dir)
	cl := newClient(t, b)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "sq"); err != nil {
		t.Fatal(err)
	}

	const group = "sg"
	members := []string{"m1", "m2", "m3"}
	epochs := map[string]int32{}
	for i, m := range members {
		resp := shareHeartbeat(t, ctx, cl, group, m, 0, []string{"sq"})
		// The first join is answered before the share state of sq's
		// partitions is initialized (in the background, as Kafka's
		// group coordinator does): it gets none, and the partitions
		// come at a later heartbeat, after a group epoch bump (epoch
		// 2). The others join once they are initialized.
		if resp.ErrorCode != 0 || i == 0 && assigned(resp.Assignment) != 0 || i > 0 && assigned(resp.Assignment) == 0 {
			t.Fatalf("join of %s: %v %v, %d partitions", m, kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage, assigned(resp.Assignment))
		}
		if resp.HeartbeatIntervalMillis != 5000 {
			t.Errorf("heartbeat interval %d, want group.share.heartbeat.interval.ms 5000", resp.HeartbeatIntervalMillis)
		}
		epochs[m] = resp.MemberEpoch
		if i == 0 {
			await.TrueCtx(t, ctx, func() bool {
				resp = shareHeartbeat(t, ctx, cl, group, m, epochs[m], nil)
				if resp.ErrorCode != 0 {
					t.Fatalf("heartbeat of %s: %v", m, kerr.ErrorForCode(resp.ErrorCode))
				}
				epochs[m] = resp.MemberEpoch
				return assigned(resp.Assignment) == 2
			}, m+" assigned both partitions once their share state is initialized")
		}
	}
	// Everyone catches up with the last target assignment.
	for _, m := range members {
		resp := shareHeartbeat(t, ctx, cl, group, m, epochs[m], nil)
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat of %s: %v", m, kerr.ErrorForCode(resp.ErrorCode))
		}
		epochs[m] = resp.MemberEpoch
	}
	check := func() {
		t.Helper()
		g := describeShareGroup(t, ctx, cl, group)
		if g.ErrorCode != 0 || g.GroupState != "Stable" || g.Assignor != "simple" || len(g.Members) != 3 || g.GroupEpoch != 4 {
			t.Fatalf("described %+v (%v)", g, kerr.ErrorForCode(g.ErrorCode))
		}
		holders := map[int32]int{}
		for _, m := range g.Members {
			if m.MemberEpoch != 4 || !slices.Equal(m.SubscribedTopicNames, []string{"sq"}) || len(m.Assignment.TopicPartitions) != 1 || m.Assignment.TopicPartitions[0].Topic != "sq" {
				t.Fatalf("member %+v", m)
			}
			for _, p := range m.Assignment.TopicPartitions[0].Partitions {
				holders[p]++
			}
		}
		// Kafka's simple assignor: three members share each of two
		// partitions by ceil(3/2) = 2.
		if holders[0] != 2 || holders[1] != 2 {
			t.Fatalf("partitions held by %v members, want 2 each", holders)
		}
		lr := kmsg.NewPtrListGroupsRequest()
		lr.TypesFilter = []string{"share"}
		listed, err := lr.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(listed.Groups) != 1 || listed.Groups[0].Group != group || listed.Groups[0].ProtocolType != "share" ||
			listed.Groups[0].GroupType != "share" || listed.Groups[0].GroupState != "Stable" {
			t.Fatalf("ListGroups(types=share): %+v", listed.Groups)
		}
	}
	check()

	// A consumer group request for a share group is refused.
	ch := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	ch.Group, ch.MemberID, ch.RebalanceTimeoutMillis, ch.SubscribedTopicNames, ch.Topics = group, "c1", 30000, []string{"sq"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if resp, err := ch.RequestWith(ctx, cl); err != nil || resp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("consumer heartbeat to a share group: %v %+v", err, resp)
	}

	// The group is kept on __consumer_offsets: a restarted broker has it.
	cl.Close()
	stopBroker(t, b)
	b = startGroupBroker(t, dir)
	cl = newClient(t, b)
	adm = kadm.NewClient(cl)
	check()

	del := func() error {
		resp, err := adm.DeleteGroups(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		return resp[group].Err
	}
	if err := del(); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Fatalf("delete of a share group with members: %v", err)
	}
	for _, m := range members {
		if resp := shareHeartbeat(t, ctx, cl, group, m, -1, nil); resp.ErrorCode != 0 || resp.MemberEpoch != -1 {
			t.Fatalf("leave of %s: %v", m, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
	if g := describeShareGroup(t, ctx, cl, group); g.GroupState != "Empty" {
		t.Fatalf("after leaving: %+v", g)
	}
	if err := del(); err != nil {
		t.Fatalf("delete of an empty share group: %v", err)
	}
	if g := describeShareGroup(t, ctx, cl, group); g.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("after delete: %+v", g)
	}
	stopBroker(t, b)
}

// FindCoordinator with the SHARE key type (what brokers ask for a share
// partition's state) names the leader of its __share_group_state
// partition; a malformed key is INVALID_REQUEST.
func TestFindShareCoordinator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir(), "share.coordinator.state.topic.num.partitions", "3")
	defer stopBroker(t, b)
	cl := newClient(t, b)
	find := func(key string) kmsg.FindCoordinatorResponseCoordinator {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType, req.CoordinatorKeys = 6, 2, []string{key}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || len(resp.Coordinators) != 1 {
			t.Fatalf("find coordinator: %v %+v", err, resp)
		}
		return resp.Coordinators[0]
	}
	if c := find("g:not-a-topic-id:0"); c.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("malformed key: %+v", c)
	}
	key := "g:" + "AAAAAAAAAAAAAAAAAAAAAQ" + ":3"
	for {
		c := find(key)
		if c.ErrorCode == 0 {
			if c.NodeID != 1 || c.Port <= 0 {
				t.Fatalf("share coordinator %+v", c)
			}
			break
		}
		if c.ErrorCode != kerr.CoordinatorNotAvailable.Code {
			t.Fatalf("find share coordinator: %v", kerr.ErrorForCode(c.ErrorCode))
		}
		select {
		case <-ctx.Done():
			t.Fatal("share coordinator never available")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
