package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node"
)

// Consumer groups end to end: real brokers, real clients (franz-go kgo
// and kadm here; sarama and kcat in group_clients_test.go).

// startGroupBroker starts a broker whose groups rebalance at once (no
// initial delay, and consumer and share groups with no assignment
// interval, KIP-1263: each join is assigned at its heartbeat) and accept
// short sessions, so tests run fast.
func startGroupBroker(t *testing.T, dir string, extra ...string) *node.Node {
	t.Helper()
	return startTestBroker(t, dir, append([]string{
		"group.initial.rebalance.delay.ms", "0",
		"group.consumer.assignment.interval.ms", "0",
		"group.share.assignment.interval.ms", "0",
		"group.min.session.timeout.ms", "500",
		"offsets.topic.num.partitions", "5",
	}, extra...)...)
}

// groupClient is a kgo consumer in a group, with options for groups.
func groupClient(t *testing.T, b *node.Node, group, topic string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	base := []kgo.Opt{
		kgo.SeedBrokers(b.Addr().String()),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.SessionTimeout(6 * time.Second),
		kgo.FetchMaxWait(200 * time.Millisecond),
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// produceKeys writes one record per key, values equal to keys, keyed
// across the topic's partitions.
func produceKeys(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, from, to int) {
	t.Helper()
	var rs []*kgo.Record
	for i := from; i < to; i++ {
		k := fmt.Sprintf("k%05d", i)
		rs = append(rs, &kgo.Record{Topic: topic, Key: []byte(k), Value: []byte(k)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// consumption is one record as one member saw it.
type consumption struct {
	member     string
	generation int32
	partition  int32
	offset     int64
}

// ledger records every consumption by key.
type ledger struct {
	mu     sync.Mutex
	byKey  map[string][]consumption
	events chan struct{} // a signal per poll that consumed something
}

func newLedger() *ledger {
	return &ledger{byKey: map[string][]consumption{}, events: make(chan struct{}, 1)}
}

func (l *ledger) add(member string, gen int32, rs []*kgo.Record) {
	for _, r := range rs {
		l.addOne(member, gen, string(r.Key), r.Partition, r.Offset)
	}
}

func (l *ledger) addOne(member string, gen int32, key string, partition int32, offset int64) {
	l.mu.Lock()
	l.byKey[key] = append(l.byKey[key], consumption{member, gen, partition, offset})
	l.mu.Unlock()
	select {
	case l.events <- struct{}{}:
	default:
	}
}

// consumedBy counts the records a member consumed.
func (l *ledger) consumedBy(member string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, cs := range l.byKey {
		for _, c := range cs {
			if c.member == member {
				n++
			}
		}
	}
	return n
}

func (l *ledger) distinct() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byKey)
}

// waitDistinct waits until n distinct keys were consumed.
func (l *ledger) waitDistinct(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	for l.distinct() < n {
		select {
		case <-l.events:
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("consumed %d distinct records of %d: %v", l.distinct(), n, ctx.Err())
		}
	}
}

// check asserts that every one of n keys was consumed, and by exactly one
// member in each generation that consumed it.
func (l *ledger) check(t *testing.T, n int) (generations map[int32]bool) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	generations = map[int32]bool{}
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("k%05d", i)
		cs := l.byKey[k]
		if len(cs) == 0 {
			t.Fatalf("record %s was never consumed", k)
		}
		seen := map[int32]consumption{}
		for _, c := range cs {
			generations[c.generation] = true
			if prev, ok := seen[c.generation]; ok {
				t.Fatalf("record %s consumed twice in generation %d: %+v and %+v", k, c.generation, prev, c)
			}
			seen[c.generation] = c
		}
	}
	if len(l.byKey) != n {
		t.Fatalf("consumed %d distinct keys, produced %d", len(l.byKey), n)
	}
	return generations
}

// member is a consumer running its poll loop: each poll's records are
// recorded under the generation they were polled in (rebalances are
// blocked while a poll's records are processed) and committed before
// the next poll.
type member struct {
	name   string
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
}

func startMember(t *testing.T, b *node.Node, l *ledger, name, group, topic string, opts ...kgo.Opt) *member {
	if testing.Verbose() {
		opts = append(opts, kgo.WithLogger(kgo.BasicLogger(testWriter{t, name}, kgo.LogLevelInfo, nil)))
	}
	t.Helper()
	cl := groupClient(t, b, group, topic, append([]kgo.Opt{kgo.BlockRebalanceOnPoll(), kgo.DisableAutoCommit()}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{name: name, cl: cl, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil || fs.IsClientClosed() {
				cl.AllowRebalance()
				return
			}
			_, gen := cl.GroupMetadata()
			rs := fs.Records()
			l.add(name, gen, rs)
			if len(rs) > 0 {
				// Not cancelled by stop: what was consumed is committed
				// before the member leaves. It may fail when the group
				// moved on; the next owner then reads from the previous
				// commit, in a later generation.
				_ = cl.CommitRecords(context.Background(), rs...)
			}
			cl.AllowRebalance()
		}
	}()
	return m
}

// stop ends the poll loop and closes the client, which leaves the group
// (a dynamic member) after its final commit.
func (m *member) stop() {
	m.cancel()
	<-m.done
	m.cl.CloseAllowingRebalance()
}

// committed is the group's committed offsets for topic, by partition.
func committed(t *testing.T, ctx context.Context, adm *kadm.Client, group, topic string) map[int32]int64 {
	t.Helper()
	resp, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	out := map[int32]int64{}
	for p, o := range resp[topic] {
		if o.Err != nil {
			t.Fatalf("offset of %s[%d]: %v", topic, p, o.Err)
		}
		out[p] = o.At
	}
	return out
}

// wantCommittedAtEnd asserts the group committed every partition of
// topic up to its end: nothing is left to re-read or skipped.
func wantCommittedAtEnd(t *testing.T, ctx context.Context, adm *kadm.Client, group, topic string) {
	t.Helper()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	got := committed(t, ctx, adm, group, topic)
	ends.Each(func(o kadm.ListedOffset) {
		if got[o.Partition] != o.Offset {
			t.Fatalf("group %s committed %s[%d] at %d, end is %d", group, topic, o.Partition, got[o.Partition], o.Offset)
		}
	})
}

// Every balancer kgo ships (eager range, round-robin and sticky, and the
// incremental cooperative-sticky): members join and leave while records
// are produced; every record is consumed, by exactly one member in each
// generation, and the last commits cover everything.
func TestGroupBalancersWithMembersComingAndGoing(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	for _, bal := range []kgo.GroupBalancer{kgo.RangeBalancer(), kgo.RoundRobinBalancer(), kgo.StickyBalancer(), kgo.CooperativeStickyBalancer()} {
		t.Run(bal.ProtocolName(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			topic, group := "bal-"+bal.ProtocolName(), "group-"+bal.ProtocolName()
			prod := newClient(t, b, kgo.ProducerLinger(0))
			kzerotest.CreateTopic(t, ctx, prod, topic, 6, nil)
			l := newLedger()
			const total, step = 3000, 250
			opt := kgo.Balancers(bal)
			members := []*member{startMember(t, b, l, "m0", group, topic, opt)}
			add := func(name string) func() {
				return func() { members = append(members, startMember(t, b, l, name, group, topic, opt)) }
			}
			leave := func() { members[0].stop(); members = members[1:] }
			// Membership changes between produced steps, with the step's
			// records not consumed yet.
			changes := map[int]func(){500: add("m1"), 1000: add("m2"), 1500: leave, 2000: add("m3"), 2500: leave}
			adm := kadm.NewClient(prod)
			for produced := 0; produced < total; produced += step {
				produceKeys(t, ctx, prod, topic, produced, produced+step)
				if f := changes[produced]; f != nil {
					f()
					// Wait for the rebalance to finish: every member in
					// the group with partitions of its own.
					waitGroup(t, ctx, adm, group, func(g kadm.DescribedGroup) bool {
						if g.State != "Stable" || len(g.Members) != len(members) {
							return false
						}
						for i := range g.Members {
							if !ownsPartitions(g, i) {
								return false
							}
						}
						return true
					})
				}
				l.waitDistinct(t, ctx, produced+step/2)
			}
			l.waitDistinct(t, ctx, total)
			var last int32
			for _, m := range members {
				_, gen := m.cl.GroupMetadata()
				last = max(last, gen)
			}
			for _, m := range members {
				m.stop()
			}
			gens := l.check(t, total)
			// Five membership changes, each a rebalance (or two, for
			// the cooperative protocol) after the first generation.
			if last < 6 {
				t.Fatalf("generation %d after five membership changes (records consumed in %v)", last, gens)
			}
			wantCommittedAtEnd(t, ctx, kadm.NewClient(prod), group, topic)
		})
	}
}

// killSwitch is a kgo dialer whose connections can all be cut at once:
// the member then stops heartbeating without leaving, as a crashed
// process would.
type killSwitch struct {
	mu    sync.Mutex
	conns []net.Conn
	dead  bool
}

func (k *killSwitch) dial(ctx context.Context, network, host string) (net.Conn, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dead {
		return nil, errors.New("killed")
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err == nil {
		k.conns = append(k.conns, c)
	}
	return c, err
}

func (k *killSwitch) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dead = true
	for _, c := range k.conns {
		c.Close()
	}
}

// A member that dies without leaving is evicted once its session times
// out; the survivor takes over its partitions and consumes everything,
// from the dead member's last commit on.
func TestGroupEvictsMemberAfterSessionTimeout(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, group = "evict", "evict-group"
	prod := newClient(t, b, kgo.ProducerLinger(0))
	adm := kadm.NewClient(prod)
	kzerotest.CreateTopic(t, ctx, prod, topic, 4, nil)
	l := newLedger()
	ks := &killSwitch{}
	doomed := startMember(t, b, l, "doomed", group, topic, kgo.Dialer(ks.dial),
		kgo.SessionTimeout(1500*time.Millisecond), kgo.RetryTimeout(time.Second), kgo.RequestRetries(1))
	produceKeys(t, ctx, prod, topic, 0, 200)
	l.waitDistinct(t, ctx, 200)
	survivor := startMember(t, b, l, "survivor", group, topic)
	// Wait for a generation with both members, each owning partitions.
	waitGroup(t, ctx, adm, group, func(g kadm.DescribedGroup) bool {
		return g.State == "Stable" && len(g.Members) == 2 && ownsPartitions(g, 0) && ownsPartitions(g, 1)
	})
	ks.kill()
	produceKeys(t, ctx, prod, topic, 200, 400)
	l.waitDistinct(t, ctx, 400)
	g := waitGroup(t, ctx, adm, group, func(g kadm.DescribedGroup) bool { return g.State == "Stable" && len(g.Members) == 1 })
	survivorID, _ := survivor.cl.GroupMetadata()
	if g.Members[0].MemberID != survivorID {
		t.Fatalf("remaining member %s, want the survivor %s", g.Members[0].MemberID, survivorID)
	}
	survivor.stop()
	l.check(t, 400)
	wantCommittedAtEnd(t, ctx, adm, group, topic)
	doomed.cancel()
	<-doomed.done
	go doomed.cl.Close() // its leave cannot get through; do not wait on it
}

// waitGroup describes the group until ok holds.
func waitGroup(t *testing.T, ctx context.Context, adm *kadm.Client, group string, ok func(kadm.DescribedGroup) bool) kadm.DescribedGroup {
	t.Helper()
	for {
		gs, err := adm.DescribeGroups(ctx, group)
		if err != nil && !coordinatorPending(err) {
			t.Fatalf("describe %s: %v", group, err)
		}
		g := gs[group]
		if err == nil && g.Err == nil && ok(g) {
			return g
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s never got there: last %+v (%v, %v)", group, g, g.Err, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// coordinatorPending reports an error a client retries while the group's
// coordinator is not there yet: the first FindCoordinator starts creating
// __consumer_offsets and answers COORDINATOR_NOT_AVAILABLE, as Kafka does,
// and a coordinator loading its partition answers
// COORDINATOR_LOAD_IN_PROGRESS.
func coordinatorPending(err error) bool {
	return errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.CoordinatorLoadInProgress) || errors.Is(err, kerr.NotCoordinator)
}

// ownsPartitions reports whether member i of g has partitions assigned.
func ownsPartitions(g kadm.DescribedGroup, i int) bool {
	if i >= len(g.Members) {
		return false
	}
	a, ok := g.Members[i].Assigned.AsConsumer()
	if !ok {
		return false
	}
	n := 0
	for _, t := range a.Topics {
		n += len(t.Partitions)
	}
	return n > 0
}

// assignment is a member's partitions of topic, from the group's
// description.
func assignment(g kadm.DescribedGroup, instance string) []int32 {
	for _, m := range g.Members {
		if m.InstanceID == nil || *m.InstanceID != instance {
			continue
		}
		a, _ := m.Assigned.AsConsumer()
		var out []int32
		for _, t := range a.Topics {
			out = append(out, t.Partitions...)
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	return nil
}

// A static member (group.instance.id, KIP-345) restarts without a
// rebalance: same generation, same partitions, the other member never
// loses its own; then a second process with the same instance id fences
// the running one.
func TestGroupStaticMemberRestartsWithoutRebalance(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, group = "static", "static-group"
	prod := newClient(t, b, kgo.ProducerLinger(0))
	adm := kadm.NewClient(prod)
	kzerotest.CreateTopic(t, ctx, prod, topic, 4, nil)

	var mu sync.Mutex
	revoked := map[string]int{}
	onRevoked := func(name string) kgo.Opt {
		return kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			if len(m[topic]) > 0 {
				mu.Lock()
				revoked[name]++
				mu.Unlock()
			}
		})
	}
	l := newLedger()
	// Range: a restarted static leader (KIP-814) computes the plan the
	// group already has, so the client has no reason to rebalance either.
	static := func(name string) []kgo.Opt {
		return []kgo.Opt{kgo.InstanceID(name), kgo.SessionTimeout(20 * time.Second), onRevoked(name), kgo.Balancers(kgo.RangeBalancer())}
	}
	s1 := startMember(t, b, l, "s1", group, topic, static("s1")...)
	s2 := startMember(t, b, l, "s2", group, topic, static("s2")...)
	before := waitGroup(t, ctx, adm, group, func(g kadm.DescribedGroup) bool {
		return g.State == "Stable" && len(g.Members) == 2 && len(assignment(g, "s1")) > 0 && len(assignment(g, "s2")) > 0
	})
	produceKeys(t, ctx, prod, topic, 0, 100)
	l.waitDistinct(t, ctx, 100)
	_, gen := s2.cl.GroupMetadata()
	if _, g1 := s1.cl.GroupMetadata(); g1 != gen {
		t.Fatalf("members in generations %d and %d", g1, gen)
	}
	mu.Lock()
	base := revoked["s2"]
	mu.Unlock()

	// s1 restarts: a static member's close does not leave the group.
	s1.stop()
	s1 = startMember(t, b, l, "s1", group, topic, static("s1")...)
	produceKeys(t, ctx, prod, topic, 100, 200)
	l.waitDistinct(t, ctx, 200)
	after := waitGroup(t, ctx, adm, group, func(g kadm.DescribedGroup) bool { return g.State == "Stable" })
	newID, newGen := s1.cl.GroupMetadata()
	if newGen != gen {
		t.Fatalf("generation %d after the static restart, was %d: the group rebalanced", newGen, gen)
	}
	if fmt.Sprint(assignment(after, "s1")) != fmt.Sprint(assignment(before, "s1")) ||
		fmt.Sprint(assignment(after, "s2")) != fmt.Sprint(assignment(before, "s2")) {
		t.Fatalf("assignments changed across the restart: %v/%v, then %v/%v",
			assignment(before, "s1"), assignment(before, "s2"), assignment(after, "s1"), assignment(after, "s2"))
	}
	for _, m := range after.Members {
		if *m.InstanceID == "s1" && m.MemberID != newID {
			t.Fatalf("s1's member id %s, the restarted client has %s", m.MemberID, newID)
		}
	}
	mu.Lock()
	if revoked["s2"] != base {
		t.Fatalf("s2 had partitions revoked during s1's restart")
	}
	mu.Unlock()

	// Another process joining as s1 fences the running one.
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.InstanceID, join.ProtocolType = group, kmsg.StringPtr("s1"), "consumer"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 20000, 20000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: (&kmsg.ConsumerMemberMetadata{Topics: []string{topic}}).AppendTo(nil)}}
	jr := kzerotest.BrokerRequest[*kmsg.JoinGroupResponse](t, ctx, prod, join)
	if jr.ErrorCode != 0 || jr.MemberID == newID || jr.Generation != gen {
		t.Fatalf("duplicate join: %v, member %s, generation %d", kerr.ErrorForCode(jr.ErrorCode), jr.MemberID, jr.Generation)
	}
	old := kmsg.NewPtrHeartbeatRequest()
	old.Group, old.MemberID, old.Generation, old.InstanceID = group, newID, newGen, kmsg.StringPtr("s1")
	resp := kzerotest.BrokerRequest[*kmsg.HeartbeatResponse](t, ctx, prod, old)
	if resp.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("heartbeat of the fenced incarnation: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	s1.cancel()
	<-s1.done
	s1.cl.Close()
	s2.stop()
	l.check(t, 200)
}

// Offsets committed before a broker restart are where the group resumes
// after it: nothing before them is read again, nothing after skipped.
func TestGroupResumesAtCommittedOffsetsAfterRestart(t *testing.T) {
	dir := t.TempDir()
	b := startGroupBroker(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, group = "resume", "resume-group"
	prod := newClient(t, b, kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	kzerotest.CreateTopic(t, ctx, prod, topic, 2, nil)
	var rs []*kgo.Record
	for p := int32(0); p < 2; p++ {
		for i := 0; i < 50; i++ {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("p%d-%d", p, i))})
		}
	}
	if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl := groupClient(t, b, group, topic, kgo.DisableAutoCommit())
	kzerotest.ConsumeN(t, ctx, cl, 100)
	at := map[int32]kgo.EpochOffset{0: {Epoch: -1, Offset: 30}, 1: {Epoch: -1, Offset: 20}}
	var commitErr error
	cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{topic: at}, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		commitErr = commitResponseErr(resp, err)
	})
	if commitErr != nil {
		t.Fatalf("commit: %v", commitErr)
	}
	cl.Close()
	prod.Close()
	stopBroker(t, b)

	b = startGroupBroker(t, dir)
	defer stopBroker(t, b)
	adm := kadm.NewClient(newClient(t, b))
	if got := committed(t, ctx, adm, group, topic); got[0] != 30 || got[1] != 20 {
		t.Fatalf("committed after restart %v", got)
	}
	cl = groupClient(t, b, group, topic)
	defer cl.Close()
	first := map[int32]int64{0: -1, 1: -1}
	for _, r := range kzerotest.ConsumeN(t, ctx, cl, 50) {
		if first[r.Partition] < 0 {
			first[r.Partition] = r.Offset
		}
	}
	if first[0] != 30 || first[1] != 20 {
		t.Fatalf("resumed at %v, committed 30 and 20", first)
	}
}

// kadm's group administration: commits and fetches outside group
// management, list with state filters, describe, delete offsets of a
// subscribed and an unsubscribed topic, delete groups; and
// __consumer_offsets is created on first use as Kafka creates it.
func TestGroupAdmin(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), "group.initial.rebalance.delay.ms", "0")
	defer stopBroker(t, b)
	ctx := adminContext(t)
	cl := newClient(t, b, kgo.ProducerLinger(0))
	adm := kadm.NewClient(cl)
	kzerotest.CreateTopic(t, ctx, cl, "watched", 2, nil)
	kzerotest.CreateTopic(t, ctx, cl, "other", 1, nil)

	// Commit outside group management; fetch with metadata.
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "other", Partition: 0, At: 12, LeaderEpoch: -1, Metadata: "note"})
	resp, err := adm.CommitOffsets(ctx, "admin-group", offs)
	if err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	fetched, err := adm.FetchOffsets(ctx, "admin-group")
	if err != nil {
		t.Fatal(err)
	}
	if o := fetched["other"][0]; o.At != 12 || o.Metadata != "note" || o.Err != nil {
		t.Fatalf("fetched %+v", o)
	}
	// Unknown topic in a commit.
	bad := kadm.Offsets{}
	bad.Add(kadm.Offset{Topic: "missing", Partition: 0, At: 1, LeaderEpoch: -1})
	resp, err = adm.CommitOffsets(ctx, "admin-group", bad)
	if err != nil {
		t.Fatal(err)
	}
	kzerotest.WantErr(t, "commit to a missing topic", resp.Error(), kerr.UnknownTopicOrPartition)

	// __consumer_offsets: 50 partitions, compacted, internal.
	td, err := adm.ListTopicsWithInternal(ctx, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	if d := td["__consumer_offsets"]; len(d.Partitions) != 50 || !d.IsInternal || d.Partitions.NumReplicas() != 1 {
		t.Fatalf("offsets topic %+v", d)
	}
	rc := describeTopic(t, ctx, adm, "__consumer_offsets")
	for k, v := range map[string]string{"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"} {
		if c := findConfig(t, rc, k); c.MaybeValue() != v {
			t.Fatalf("%s = %q, want %q", k, c.MaybeValue(), v)
		}
	}

	// An active consumer group on "watched".
	consumer := groupClient(t, b, "active", "watched")
	defer consumer.Close()
	if _, err := cl.ProduceSync(ctx, &kgo.Record{Topic: "watched", Value: []byte("v")}).First(); err != nil {
		t.Fatal(err)
	}
	kzerotest.ConsumeN(t, ctx, consumer, 1)
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	g := waitGroup(t, ctx, adm, "active", func(g kadm.DescribedGroup) bool { return g.State == "Stable" })
	if g.ProtocolType != "consumer" || g.Protocol == "" || len(g.Members) != 1 || !ownsPartitions(g, 0) {
		t.Fatalf("described %+v", g)
	}
	if m := g.Members[0]; m.ClientID != "kgo" || m.ClientHost != "/127.0.0.1" {
		t.Fatalf("member %+v", m)
	}
	gs, err := adm.DescribeGroups(ctx, "no-such-group")
	if err != nil {
		t.Fatal(err)
	}
	kzerotest.WantErr(t, "describe a missing group", gs["no-such-group"].Err, kerr.GroupIDNotFound)

	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := listed.Sorted(); len(s) != 2 || s[0].Group != "active" || s[0].State != "Stable" || s[1].Group != "admin-group" || s[1].State != "Empty" {
		t.Fatalf("listed %+v", s)
	}
	listed, err = adm.ListGroups(ctx, "empty")
	if err != nil {
		t.Fatal(err)
	}
	if s := listed.Sorted(); len(s) != 1 || s[0].Group != "admin-group" {
		t.Fatalf("listed empty groups %+v", s)
	}

	// Offsets of a subscribed topic stay; others go.
	commit := kadm.Offsets{}
	commit.Add(kadm.Offset{Topic: "other", Partition: 0, At: 3, LeaderEpoch: -1})
	// A commit outside group management to a group with members fails.
	resp, err = adm.CommitOffsets(ctx, "active", commit)
	if err != nil {
		t.Fatal(err)
	}
	kzerotest.WantErr(t, "simple commit to an active group", resp.Error(), kerr.UnknownMemberID)
	del, err := adm.DeleteOffsets(ctx, "active", kadm.TopicsSet{"watched": {0: {}}, "other": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	kzerotest.WantErr(t, "delete offsets of a subscribed topic", del["watched"][0], kerr.GroupSubscribedToTopic)
	kzerotest.WantErr(t, "delete offsets of another topic", del["other"][0], nil)

	// Groups with members are not deleted.
	dg, err := adm.DeleteGroups(ctx, "active", "admin-group", "no-such-group")
	if err != nil {
		t.Fatal(err)
	}
	kzerotest.WantErr(t, "delete an active group", dg["active"].Err, kerr.NonEmptyGroup)
	kzerotest.WantErr(t, "delete an empty group", dg["admin-group"].Err, nil)
	kzerotest.WantErr(t, "delete a missing group", dg["no-such-group"].Err, kerr.GroupIDNotFound)
	consumer.Close()
	waitGroup(t, ctx, adm, "active", func(g kadm.DescribedGroup) bool { return g.State == "Empty" })
	dg, err = adm.DeleteGroups(ctx, "active")
	if err != nil {
		t.Fatal(err)
	}
	kzerotest.WantErr(t, "delete a group after its members left", dg["active"].Err, nil)
	if fetched, err := adm.FetchOffsets(ctx, "active"); err != nil || len(fetched) != 0 {
		t.Fatalf("offsets of a deleted group: %v %v", fetched, err)
	}
	listed, err = adm.ListGroups(ctx)
	if err != nil || len(listed) != 0 {
		t.Fatalf("groups after deletion: %v %v", listed, err)
	}
}

// testWriter logs a client's lines in the test log (go test -v).
type testWriter struct {
	t    *testing.T
	name string
}

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(w.name, string(p)); return len(p), nil }

// commitResponseErr is a commit's error: the request's, else the first
// partition's.
func commitResponseErr(resp *kmsg.OffsetCommitResponse, err error) error {
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return err
			}
		}
	}
	return nil
}
