package group

import (
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
		if code := c.Heartbeat(req); code != 0 {
			t.Fatalf("heartbeat: %v", kerr.ErrorForCode(code))
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
	if res.Err != kerr.InvalidSessionTimeout.Code {
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
		Offsets: []CommitOffset{{TopicPartition: TopicPartition{"t", 0}, LeaderEpoch: -1}}}
	b.ReportAllocs()
	for b.Loop() {
		req.Offsets[0].Offset++
		if codes := c.CommitOffsets(req); codes[0] != 0 {
			b.Fatal(kerr.ErrorForCode(codes[0]))
		}
	}
}
