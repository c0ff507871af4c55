package group

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A member's heartbeat, the most frequent group request, allocates
// nothing: a map lookup, a deadline, a timer reset.
func TestHeartbeatAllocatesNothing(t *testing.T) {
	n := openNode(t, t.TempDir())
	c := n.coordinator(1, 0, 0)
	member, gen := joinSync(t, c, "g", "", consumerMetadata("t"), []byte("a"))
	req := &HeartbeatRequest{Group: "g", MemberID: member, Generation: gen}
	allocs := testing.AllocsPerRun(1000, func() {
		if code := c.Heartbeat(req); code != nil {
			t.Fatalf("heartbeat: %v", code)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per heartbeat", allocs)
	}
}

// A failed join leaves no group behind.
func TestFailedJoinLeavesNoGroup(t *testing.T) {
	n := openNode(t, t.TempDir())
	c := n.coordinator(1, 0, 0)
	var res JoinResult
	c.JoinGroup(&JoinRequest{Group: "g", ProtocolType: "consumer", Protocols: []Protocol{{Name: "r"}}, SessionTimeout: 1}, func(r JoinResult) { res = r })
	if !errors.Is(res.Err, kerr.InvalidSessionTimeout) {
		t.Fatalf("join: %+v", res)
	}
	if list, _ := c.ListGroups(); len(list) != 0 {
		t.Fatalf("groups after a failed join: %+v", list)
	}
}

func BenchmarkHeartbeat(b *testing.B) {
	n := openNode(b, b.TempDir())
	c := n.coordinator(1, 0, 0)
	member, gen := joinSync(b, c, "g", "", consumerMetadata("t"), []byte("a"))
	req := &HeartbeatRequest{Group: "g", MemberID: member, Generation: gen}
	b.ReportAllocs()
	for b.Loop() {
		c.Heartbeat(req)
	}
}

// BenchmarkCommitOffsets commits one partition per call: one record
// appended to __consumer_offsets each time.
func BenchmarkCommitOffsets(b *testing.B) {
	n := openNode(b, b.TempDir())
	c := n.coordinator(1, 0, 0)
	member, gen := joinSync(b, c, "g", "", consumerMetadata("t"), []byte("a"))
	req := &CommitRequest{Group: "g", Generation: gen, MemberID: member, RetentionMs: -1,
		Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "t", Partition: 0}, LeaderEpoch: -1}}}
	b.ReportAllocs()
	for b.Loop() {
		req.Offsets[0].Offset++
		if codes := c.CommitOffsets(req); codes[0] != nil {
			b.Fatal(codes[0])
		}
	}
}

// A consumer group member's steady heartbeat (KIP-848), nothing changed
// since the last one (kgo sends only the group, member and epoch), changes
// nothing in the group and writes nothing: it allocates nothing.
func TestConsumerHeartbeatAllocatesNothing(t *testing.T) {
	n := openNode(t, t.TempDir())
	c, _ := consumerCoordinator(t, n)
	m := newMember(t, c, "g", "m1", "a", "b")
	m.beat()
	m.beat()
	req := &ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: "m1", MemberEpoch: m.epoch, RebalanceTimeout: -1,
		ClientID: "client-m1", ClientHost: "/127.0.0.1"}
	allocs := testing.AllocsPerRun(1000, func() {
		if res := c.ConsumerGroupHeartbeat(req); res.Err != nil || res.HasAssignment {
			t.Fatalf("heartbeat: %+v", res)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per heartbeat", allocs)
	}
}

func BenchmarkConsumerHeartbeat(b *testing.B) {
	n := openNode(b, b.TempDir())
	c := n.coordinator(1, 0, 0)
	topics := &testTopics{}
	topics.add(c, "a", 6)
	req := &ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: "m1", RebalanceTimeout: 30_000,
		SubscribedTopicNames: []string{"a"}, Owned: []TopicPartitions{}}
	res := c.ConsumerGroupHeartbeat(req)
	req = &ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: "m1", MemberEpoch: res.MemberEpoch, RebalanceTimeout: -1}
	b.ReportAllocs()
	for b.Loop() {
		c.ConsumerGroupHeartbeat(req)
	}
}
