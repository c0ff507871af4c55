package group

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"kzero/log"
	krecord "kzero/record"
	"kzero/replica"
)

// Tests of the coordinator on real __consumer_offsets partitions in a
// temporary log dir, without sockets.

type node struct {
	t        testing.TB
	dir      string
	logs     *log.Manager
	replicas *replica.Manager
	closed   bool
}

func (n *node) close() {
	if !n.closed {
		n.closed = true
		n.logs.Close()
	}
}

func openNode(t testing.TB, dir string) *node {
	t.Helper()
	cfg := log.DefaultManagerConfig(dir)
	cfg.Defaults.SegmentIndexBytes = 1 << 16
	cfg.Logger = discard()
	logs, err := log.OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, dir: dir, logs: logs, replicas: replica.NewManager(1, logs)}
	t.Cleanup(n.close)
	return n
}

func (n *node) lead(partition int32) *replica.Partition {
	n.t.Helper()
	cfg := log.DefaultConfig()
	cfg.SegmentIndexBytes = 1 << 16
	p, err := n.replicas.MakeLeader(replica.LeaderSpec{
		TP: log.TopicPartition{Topic: TopicName, Partition: partition}, ISR: []int32{1}, MinInsyncReplicas: 1, Config: cfg})
	if err != nil {
		n.t.Fatal(err)
	}
	return p
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// coordinator returns a coordinator of partitions partitions leading
// those given, loaded.
func (n *node) coordinator(partitions int32, delay time.Duration, lead ...int32) *Coordinator {
	n.t.Helper()
	c := New(Config{NumPartitions: partitions, InitialRebalanceDelay: delay, MinSessionTimeout: 10 * time.Millisecond, Logger: discard()})
	n.t.Cleanup(c.Close)
	for _, p := range lead {
		<-c.Lead(n.lead(p))
	}
	return c
}

// joinSync makes a member join (two steps) and sync as the only member,
// assigning itself assignment; it returns the member id and generation.
func joinSync(t testing.TB, c *Coordinator, group, instance string, metadata, assignment []byte) (string, int32) {
	t.Helper()
	var res JoinResult
	req := &JoinRequest{Group: group, InstanceID: instance, ClientID: "client", ClientHost: "/127.0.0.1", ProtocolType: "consumer",
		Protocols: []Protocol{{Name: "range", Metadata: metadata}}, SessionTimeout: 30_000, RebalanceTimeout: 30_000,
		RequireKnownMemberID: true, SupportsSkipAssignment: true}
	c.JoinGroup(req, func(r JoinResult) { res = r })
	if errors.Is(res.Err, kerr.MemberIDRequired) {
		req.MemberID = res.MemberID
		res = JoinResult{}
		c.JoinGroup(req, func(r JoinResult) { res = r })
	}
	if res.Err != nil || res.MemberID == "" {
		t.Fatalf("join: %+v", res)
	}
	var sres SyncResult
	c.SyncGroup(&SyncRequest{Group: group, MemberID: res.MemberID, InstanceID: instance, Generation: res.Generation,
		Assignments: []Assignment{{MemberID: res.MemberID, Assignment: assignment}}}, func(r SyncResult) { sres = r })
	if sres.Err != nil || !bytes.Equal(sres.Assignment, assignment) {
		t.Fatalf("sync: %+v", sres)
	}
	return res.MemberID, res.Generation
}

func TestCoordinatorStoresAndReloads(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c := n.coordinator(1, 0, 0)
	meta := consumerMetadata("orders")
	member, gen := joinSync(t, c, "g1", "", meta, []byte("assignment-1"))
	static, _ := joinSync(t, c, "g2", "inst", meta, []byte("assignment-2"))
	codes := c.CommitOffsets(&CommitRequest{Group: "g1", Generation: gen, MemberID: member, RetentionMs: -1, Offsets: []CommitOffset{
		{TopicPartition: TopicPartition{Topic: "orders", Partition: 0}, Offset: 42, LeaderEpoch: 3, Metadata: "meta-0"},
		{TopicPartition: TopicPartition{Topic: "orders", Partition: 1}, Offset: 7, LeaderEpoch: -1},
		{TopicPartition: TopicPartition{Topic: "orders", Partition: 2}, Offset: 1, Metadata: string(make([]byte, 5000))},
	}})
	if !slices.Equal(codesOf(codes), []int16{0, 0, kerr.OffsetMetadataTooLarge.Code}) {
		t.Fatalf("commit codes %v", codes)
	}
	// A group outside group management: generation -1.
	if codes := c.CommitOffsets(&CommitRequest{Group: "simple", Generation: -1, RetentionMs: -1,
		Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "orders", Partition: 0}, Offset: 5, LeaderEpoch: -1}}}); codes[0] != nil {
		t.Fatalf("simple commit %v", codes)
	}
	// A commit with a generation to an unknown group.
	if codes := c.CommitOffsets(&CommitRequest{Group: "nope", Generation: 3, Offsets: make([]CommitOffset, 1)}); !errors.Is(codes[0], kerr.IllegalGeneration) {
		t.Fatalf("commit to unknown group: %v", codes)
	}
	if codes := c.CommitOffsets(&CommitRequest{Group: "nope", Generation: 3, UnknownGroupIsNotFound: true, Offsets: make([]CommitOffset, 1)}); !errors.Is(codes[0], kerr.GroupIDNotFound) {
		t.Fatalf("v9 commit to unknown group: %v", codes)
	}

	// The records are Kafka's: decode the partition with kmsg alone.
	keys := map[int16]int{}
	for _, r := range readRecords(t, n.lead(0)) {
		v := int16(binary.BigEndian.Uint16(r.key))
		keys[v]++
		switch v {
		case 1:
			var k kmsg.OffsetCommitKey
			var val kmsg.OffsetCommitValue
			if err := k.ReadFrom(r.key); err != nil {
				t.Fatal(err)
			}
			if err := val.ReadFrom(r.value); err != nil || val.Version != 3 {
				t.Fatalf("offset value v%d: %v", val.Version, err)
			}
			if k.Group == "g1" && k.Partition == 0 && (val.Offset != 42 || val.LeaderEpoch != 3 || val.Metadata != "meta-0") {
				t.Fatalf("offset record %+v", val)
			}
		case 2:
			var k kmsg.GroupMetadataKey
			var val kmsg.GroupMetadataValue
			if err := k.ReadFrom(r.key); err != nil {
				t.Fatal(err)
			}
			if err := val.ReadFrom(r.value); err != nil || val.Version != 3 {
				t.Fatalf("group value v%d: %v", val.Version, err)
			}
			if k.Group == "g1" && (len(val.Members) != 1 || string(val.Members[0].Assignment) != "assignment-1" || !bytes.Equal(val.Members[0].Subscription, meta) || *val.Protocol != "range") {
				t.Fatalf("group record %+v", val)
			}
		default:
			t.Fatalf("key version %d", v)
		}
	}
	if keys[1] != 3 || keys[2] != 2 {
		t.Fatalf("records by key version: %v", keys)
	}

	// Restart: close everything, reopen the log dir, load.
	c.Close()
	n.close()
	n = openNode(t, dir)
	c = n.coordinator(1, 0, 0)
	d, found, code := c.DescribeGroup("g1")
	if !found || code != nil || d.State != Stable || d.Protocol != "range" || len(d.Members) != 1 ||
		d.Members[0].MemberID != member || string(d.Members[0].Assignment) != "assignment-1" || d.Members[0].ClientHost != "/127.0.0.1" {
		t.Fatalf("reloaded group %+v", d)
	}
	// The member carries on without a rebalance.
	if code := c.Heartbeat(&HeartbeatRequest{Group: "g1", MemberID: member, Generation: gen}); code != nil {
		t.Fatalf("heartbeat after reload: %v", code)
	}
	if code := c.Heartbeat(&HeartbeatRequest{Group: "g2", MemberID: static, InstanceID: "inst", Generation: 1}); code != nil {
		t.Fatalf("static member heartbeat after reload: %v", code)
	}
	got, code := c.FetchOffsets("g1", nil)
	want := []FetchedTopic{{Topic: "orders", Partitions: []FetchedPartition{
		{Partition: 0, Offset: 42, LeaderEpoch: 3, Metadata: "meta-0"}, {Partition: 1, Offset: 7, LeaderEpoch: -1}}}}
	if code != nil || !slices.EqualFunc(got, want, sameTopic) {
		t.Fatalf("offsets after reload %+v", got)
	}
	got, _ = c.FetchOffsets("simple", []FetchTopic{{Topic: "orders", Partitions: []int32{0, 9}}})
	want = []FetchedTopic{{Topic: "orders", Partitions: []FetchedPartition{{Partition: 0, Offset: 5, LeaderEpoch: -1}, {Partition: 9, Offset: -1, LeaderEpoch: -1}}}}
	if !slices.EqualFunc(got, want, sameTopic) {
		t.Fatalf("simple group offsets %+v", got)
	}
	list, code := c.ListGroups()
	if code != nil || len(list) != 3 || list[0].Group != "g1" || list[2].Group != "simple" || list[2].State != Empty || list[0].ProtocolType != "consumer" {
		t.Fatalf("groups %+v", list)
	}
}

func sameTopic(a, b FetchedTopic) bool {
	return a.Topic == b.Topic && slices.Equal(a.Partitions, b.Partitions)
}

type rawRecord struct{ key, value []byte }

// readRecords reads every record of a partition.
func readRecords(t *testing.T, p *replica.Partition) []rawRecord {
	t.Helper()
	l := p.Log()
	fr, err := l.Read(l.LogStartOffset(), 1<<30, l.LogEndOffset(), true)
	if err != nil || fr.Empty() {
		t.Fatalf("read: %v", err)
	}
	buf := make([]byte, fr.Len)
	if _, err := unix.Pread(fr.Segment.Fd(), buf, fr.Pos); err != nil {
		t.Fatal(err)
	}
	fr.Release()
	var out []rawRecord
	var rr krecord.Iter
	for len(buf) > 0 {
		b, rest, err := krecord.ParseBatch(buf)
		if err != nil {
			t.Fatal(err)
		}
		buf = rest
		if err := rr.Reset(b, 0); err != nil {
			t.Fatal(err)
		}
		for rr.Next() {
			r := rr.Record()
			out = append(out, rawRecord{bytes.Clone(r.Key), bytes.Clone(r.Value)})
		}
	}
	return out
}

func TestCoordinatorDeletesGroupsAndOffsets(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c := n.coordinator(1, 0, 0)
	member, gen := joinSync(t, c, "g", "", consumerMetadata("subscribed"), []byte("a"))
	codes := c.CommitOffsets(&CommitRequest{Group: "g", Generation: gen, MemberID: member, RetentionMs: -1, Offsets: []CommitOffset{
		{TopicPartition: TopicPartition{Topic: "subscribed", Partition: 0}, Offset: 1},
		{TopicPartition: TopicPartition{Topic: "other", Partition: 0}, Offset: 2},
		{TopicPartition: TopicPartition{Topic: "other", Partition: 1}, Offset: 3},
	}})
	if !slices.Equal(codesOf(codes), []int16{0, 0, 0}) {
		t.Fatalf("commit %v", codes)
	}
	codes, code := c.DeleteOffsets("g", []TopicPartition{{Topic: "subscribed", Partition: 0}, {Topic: "other", Partition: 0}})
	if code != nil || !slices.Equal(codesOf(codes), []int16{kerr.GroupSubscribedToTopic.Code, 0}) {
		t.Fatalf("offset delete %v %v", code, codes)
	}
	if _, code := c.DeleteOffsets("missing", nil); !errors.Is(code, kerr.GroupIDNotFound) {
		t.Fatalf("offset delete of a missing group: %v", code)
	}
	if got := c.DeleteGroups([]string{"g", "missing"}); !slices.Equal(codesOf(got), []int16{kerr.NonEmptyGroup.Code, kerr.GroupIDNotFound.Code}) {
		t.Fatalf("delete groups %v", got)
	}
	if codes, code := c.LeaveGroup("g", []LeaveMember{{MemberID: member}}); code != nil || codes[0] != nil {
		t.Fatalf("leave %v %v", code, codes)
	}
	if d, _, _ := c.DescribeGroup("g"); d.State != Empty {
		t.Fatalf("state after leave %s", d.State)
	}
	if got := c.DeleteGroups([]string{"g"}); got[0] != nil {
		t.Fatalf("delete group %v", got)
	}
	if _, found, _ := c.DescribeGroup("g"); found {
		t.Fatal("deleted group still described")
	}
	c.Close()
	// Reloaded from the tombstones: nothing left.
	c = n.coordinator(1, 0, 0)
	if _, found, _ := c.DescribeGroup("g"); found {
		t.Fatal("deleted group reloaded")
	}
	if got, _ := c.FetchOffsets("g", nil); len(got) != 0 {
		t.Fatalf("deleted group's offsets reloaded: %+v", got)
	}
}

func TestCoordinatorServesOnlyItsLoadedPartitions(t *testing.T) {
	n := openNode(t, t.TempDir())
	c := n.coordinator(2, 0, 0)
	var mine, other string
	for _, g := range []string{"a", "b", "c", "d", "e", "f"} {
		if PartitionFor(g, 2) == 0 {
			mine = g
		} else {
			other = g
		}
	}
	var res JoinResult
	c.JoinGroup(&JoinRequest{Group: other, ProtocolType: "consumer", Protocols: []Protocol{{Name: "r"}}, SessionTimeout: 1000}, func(r JoinResult) { res = r })
	if !errors.Is(res.Err, kerr.NotCoordinator) {
		t.Fatalf("join to a partition led elsewhere: %+v", res)
	}
	// A partition still loading.
	gate := make(chan struct{})
	c.loadGate = func(int32) { <-gate }
	loaded := c.Lead(n.lead(1))
	defer func() { close(gate); <-loaded }()
	c.JoinGroup(&JoinRequest{Group: other, ProtocolType: "consumer", Protocols: []Protocol{{Name: "r"}}, SessionTimeout: 1000}, func(r JoinResult) { res = r })
	if !errors.Is(res.Err, kerr.CoordinatorLoadInProgress) {
		t.Fatalf("join while loading: %+v", res)
	}
	var sres SyncResult
	c.SyncGroup(&SyncRequest{Group: other}, func(r SyncResult) { sres = r })
	if !errors.Is(sres.Err, kerr.RebalanceInProgress) {
		t.Fatalf("sync while loading: %+v", sres)
	}
	if code := c.Heartbeat(&HeartbeatRequest{Group: other}); code != nil {
		t.Fatalf("heartbeat while loading: %v", code)
	}
	if _, code := c.ListGroups(); !errors.Is(code, kerr.CoordinatorLoadInProgress) {
		t.Fatalf("list while loading: %v", code)
	}
	if _, code := c.FetchOffsets(other, nil); !errors.Is(code, kerr.CoordinatorLoadInProgress) {
		t.Fatalf("offset fetch while loading: %v", code)
	}
	c.JoinGroup(&JoinRequest{Group: "", ProtocolType: "consumer"}, func(r JoinResult) { res = r })
	if !errors.Is(res.Err, kerr.InvalidGroupID) {
		t.Fatalf("empty group id: %+v", res)
	}
	if _, code := c.FetchOffsets(mine, nil); code != nil {
		t.Fatalf("offset fetch of a loaded partition: %v", code)
	}
}

func TestCoordinatorAnswersWaitingJoinsFromTimersAndOnResign(t *testing.T) {
	n := openNode(t, t.TempDir())
	// The initial rebalance delay ends on a timer goroutine.
	c := n.coordinator(1, 20*time.Millisecond, 0)
	done := make(chan JoinResult, 1)
	c.JoinGroup(&JoinRequest{Group: "g", ClientID: "c", ProtocolType: "consumer", Protocols: []Protocol{{Name: "r"}},
		SessionTimeout: 1000, RebalanceTimeout: 1000}, func(r JoinResult) { done <- r })
	select {
	case r := <-done:
		if r.Err != nil || r.Generation != 1 {
			t.Fatalf("join %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("join never answered")
	}
	c.Close()
	// A join waiting when the partition is resigned is told to find the
	// new coordinator.
	c = n.coordinator(1, time.Hour, 0)
	c.JoinGroup(&JoinRequest{Group: "h", ClientID: "c", ProtocolType: "consumer", Protocols: []Protocol{{Name: "r"}},
		SessionTimeout: 1000, RebalanceTimeout: 1000}, func(r JoinResult) { done <- r })
	select {
	case r := <-done:
		t.Fatalf("join answered early: %+v", r)
	default:
	}
	c.Resign(0)
	if r := <-done; !errors.Is(r.Err, kerr.NotCoordinator) {
		t.Fatalf("join after resign: %+v", r)
	}
	if _, code := c.FetchOffsets("h", nil); !errors.Is(code, kerr.NotCoordinator) {
		t.Fatalf("fetch after resign: %v", code)
	}
}

func TestCoordinatorExpiresOffsetsAndEmptyGroups(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir)
	c := n.coordinator(1, 0, 0)
	now := time.Now().UnixMilli()
	c.now = func() int64 { return now }
	commit := func(group string) {
		if codes := c.CommitOffsets(&CommitRequest{Group: group, Generation: -1, RetentionMs: -1,
			Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "t", Partition: 0}, Offset: 1}}}); codes[0] != nil {
			t.Fatalf("commit %v", codes)
		}
	}
	commit("old")
	now += 1000
	commit("new")
	// An OffsetCommit v1 commit time counts instead of the clock: dated
	// a second before "old", it expires with it.
	if codes := c.CommitOffsets(&CommitRequest{Group: "v1-dated", Generation: -1, RetentionMs: -1,
		Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "t", Partition: 0}, Offset: 1, CommitTime: now - 2000}}}); codes[0] != nil {
		t.Fatalf("commit %v", codes)
	}
	// v2-v4 commits may set their own retention.
	if codes := c.CommitOffsets(&CommitRequest{Group: "short", Generation: -1, RetentionMs: 10,
		Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "t", Partition: 0}, Offset: 1}}}); codes[0] != nil {
		t.Fatalf("commit %v", codes)
	}
	now += 20
	retention := c.cfg.OffsetsRetention.Milliseconds()
	for _, s := range c.table.All() {
		s.expire(now+retention-1000, retention)
	}
	list, _ := c.ListGroups()
	if len(list) != 1 || list[0].Group != "new" {
		t.Fatalf("groups after expiry %+v", list)
	}
	c.Close()
	c = n.coordinator(1, 0, 0)
	if list, _ := c.ListGroups(); len(list) != 1 || list[0].Group != "new" {
		t.Fatalf("groups reloaded after expiry %+v", list)
	}
}
