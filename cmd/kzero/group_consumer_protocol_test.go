package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node"
)

// KIP-848 consumer groups end to end: kgo members with the server-side
// balancer (ConsumerGroupHeartbeat) on a real broker; the same checks as
// the classic protocol's tests in group_test.go.

// startConsumerProtocolBroker starts a broker whose consumer groups
// heartbeat every 200ms and expire sessions after 3s, so tests run fast.
func startConsumerProtocolBroker(t *testing.T, dir string) *node.Node {
	t.Helper()
	return startGroupBroker(t, dir,
		"group.consumer.heartbeat.interval.ms", "200",
		"group.consumer.min.heartbeat.interval.ms", "100",
		"group.consumer.session.timeout.ms", "3000",
		"group.consumer.min.session.timeout.ms", "1000")
}

// serverSide are the kgo options of a KIP-848 member with balancer b
// (StickyBalancer asks for "uniform", RangeBalancer for "range").
func serverSide(b kgo.GroupBalancer) []kgo.Opt {
	return []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(b)}
}

// waitConsumerGroup describes a consumer group until ok holds.
func waitConsumerGroup(t *testing.T, ctx context.Context, adm *kadm.Client, group string, ok func(kadm.DescribedConsumerGroup) bool) kadm.DescribedConsumerGroup {
	t.Helper()
	for {
		gs, err := adm.DescribeConsumerGroups(ctx, group)
		if err != nil && !coordinatorPending(err) {
			t.Fatalf("describe consumer group %s: %v", group, err)
		}
		g := gs[group]
		if err == nil && g.Err == nil && ok(g) {
			return g
		}
		select {
		case <-ctx.Done():
			t.Fatalf("consumer group %s never got there: last %+v (%v, %v)", group, g, g.Err, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// settled reports a stable group of n members, each owning partitions,
// covering all partitions of the topic.
func settled(n, partitions int) func(kadm.DescribedConsumerGroup) bool {
	return func(g kadm.DescribedConsumerGroup) bool {
		if g.State != "Stable" || len(g.Members) != n {
			return false
		}
		total := 0
		for _, m := range g.Members {
			owned := 0
			for _, ps := range m.Assignment {
				owned += len(ps)
			}
			if owned == 0 {
				return false
			}
			total += owned
		}
		return total == partitions
	}
}

// Members with the server-side "uniform" and "range" assignors join and
// leave while records are produced: every record is consumed, by exactly
// one member per member epoch, and the last commits cover everything.
func TestConsumerProtocolMembersComingAndGoing(t *testing.T) {
	b := startConsumerProtocolBroker(t, t.TempDir())
	defer stopBroker(t, b)
	for _, bal := range []kgo.GroupBalancer{kgo.StickyBalancer(), kgo.RangeBalancer()} {
		t.Run(bal.ProtocolName(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			topic, group := "cp-"+bal.ProtocolName(), "cp-group-"+bal.ProtocolName()
			prod := newClient(t, b, kgo.ProducerLinger(0))
			adm := kadm.NewClient(prod)
			kzerotest.CreateTopic(t, ctx, prod, topic, 6, nil)
			l := newLedger()
			const total, step = 3000, 250
			opts := serverSide(bal)
			members := []*member{startMember(t, b, l, "m0", group, topic, opts...)}
			add := func(name string) func() {
				return func() { members = append(members, startMember(t, b, l, name, group, topic, opts...)) }
			}
			leave := func() { members[0].stop(); members = members[1:] }
			changes := map[int]func(){500: add("m1"), 1000: add("m2"), 1500: leave, 2000: add("m3"), 2500: leave}
			for produced := 0; produced < total; produced += step {
				produceKeys(t, ctx, prod, topic, produced, produced+step)
				if f := changes[produced]; f != nil {
					f()
					waitConsumerGroup(t, ctx, adm, group, settled(len(members), 6))
				}
				l.waitDistinct(t, ctx, produced+step/2)
			}
			l.waitDistinct(t, ctx, total)
			g := waitConsumerGroup(t, ctx, adm, group, settled(len(members), 6))
			want := map[string]string{"cooperative-sticky": "uniform", "sticky": "uniform", "range": "range"}[bal.ProtocolName()]
			if g.AssignorName != want || g.Epoch < 6 || g.AssignmentEpoch != g.Epoch {
				t.Fatalf("described %+v", g)
			}
			for _, m := range members {
				m.stop()
			}
			l.check(t, total)
			wantCommittedAtEnd(t, ctx, adm, group, topic)
			// The group is listed as a consumer protocol group.
			listed, err := adm.ListGroupsByType(ctx, []string{"consumer"})
			if err != nil {
				t.Fatal(err)
			}
			if lg, ok := listed[group]; !ok || lg.ProtocolType != "consumer" {
				t.Fatalf("listed consumer groups %+v", listed)
			}
		})
	}
}

// A member that dies without leaving is fenced once its session times out
// (group.consumer.session.timeout.ms); the survivor takes its partitions
// and consumes everything.
func TestConsumerProtocolEvictsDeadMember(t *testing.T) {
	b := startConsumerProtocolBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, group = "cp-evict", "cp-evict-group"
	prod := newClient(t, b, kgo.ProducerLinger(0))
	adm := kadm.NewClient(prod)
	kzerotest.CreateTopic(t, ctx, prod, topic, 4, nil)
	l := newLedger()
	ks := &killSwitch{}
	opts := serverSide(kgo.StickyBalancer())
	doomed := startMember(t, b, l, "doomed", group, topic, append(opts, kgo.Dialer(ks.dial), kgo.RetryTimeout(time.Second), kgo.RequestRetries(1))...)
	produceKeys(t, ctx, prod, topic, 0, 200)
	l.waitDistinct(t, ctx, 200)
	survivor := startMember(t, b, l, "survivor", group, topic, opts...)
	waitConsumerGroup(t, ctx, adm, group, settled(2, 4))
	ks.kill()
	produceKeys(t, ctx, prod, topic, 200, 400)
	l.waitDistinct(t, ctx, 400)
	g := waitConsumerGroup(t, ctx, adm, group, settled(1, 4))
	if id, _ := survivor.cl.GroupMetadata(); g.Members[0].MemberID != id {
		t.Fatalf("remaining member %s, want the survivor %s", g.Members[0].MemberID, id)
	}
	survivor.stop()
	l.check(t, 400)
	wantCommittedAtEnd(t, ctx, adm, group, topic)
	doomed.cancel()
	<-doomed.done
	go doomed.cl.Close() // its leave cannot get through; do not wait on it
}

// A regex subscription (RE2, resolved by the coordinator) picks up a topic
// created after the member joined.
func TestConsumerProtocolRegexPicksUpNewTopic(t *testing.T) {
	b := startConsumerProtocolBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod := newClient(t, b, kgo.ProducerLinger(0))
	adm := kadm.NewClient(prod)
	kzerotest.CreateTopic(t, ctx, prod, "rx-first", 2, nil)
	produceKeys(t, ctx, prod, "rx-first", 0, 50)
	l := newLedger()
	m := startMember(t, b, l, "m", "rx-group", "^rx-.*", append(serverSide(kgo.StickyBalancer()), kgo.ConsumeRegex())...)
	defer m.stop()
	l.waitDistinct(t, ctx, 50)
	kzerotest.CreateTopic(t, ctx, prod, "rx-second", 3, nil)
	kzerotest.CreateTopic(t, ctx, prod, "other", 1, nil)
	produceKeys(t, ctx, prod, "rx-second", 50, 100)
	produceKeys(t, ctx, prod, "other", 100, 110)
	l.waitDistinct(t, ctx, 100)
	g := waitConsumerGroup(t, ctx, adm, "rx-group", settled(1, 5))
	if g.Members[0].SubscribedTopicRegex == nil || len(g.Members[0].Assignment["rx-second"]) != 3 || len(g.Members[0].Assignment["other"]) != 0 {
		t.Fatalf("member %+v", g.Members[0])
	}
	if l.distinct() != 100 {
		t.Fatalf("consumed %d keys; the topic outside the regex was read", l.distinct())
	}
}

// The coordinator matches a regex against every topic, internal ones
// included, as Kafka does: a member whose pattern matches
// __consumer_offsets is assigned all of its partitions. (kgo matches only
// ordinary topics itself, so the pattern also names one: kgo joins once
// something matches, then adopts what the coordinator assigns.)
func TestConsumerProtocolRegexMatchesInternalTopic(t *testing.T) {
	b := startConsumerProtocolBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod := newClient(t, b)
	adm := kadm.NewClient(prod)
	kzerotest.CreateTopic(t, ctx, prod, "plain", 1, nil)
	cl := groupClient(t, b, "internal-rx", "^(__consumer_offsets|plain)$", append(serverSide(kgo.StickyBalancer()), kgo.ConsumeRegex())...)
	go func() {
		for {
			if fs := cl.PollFetches(ctx); ctx.Err() != nil || fs.IsClientClosed() {
				return
			}
		}
	}()
	// offsets.topic.num.partitions is 5 in startGroupBroker.
	g := waitConsumerGroup(t, ctx, adm, "internal-rx", settled(1, 6))
	if got := len(g.Members[0].Assignment["__consumer_offsets"]); got != 5 {
		t.Fatalf("member assigned %v, want the 5 partitions of __consumer_offsets", g.Members[0].Assignment)
	}
}

// Offsets committed by a KIP-848 member (OffsetCommit v9 with its member
// epoch) survive a broker restart, and the group resumes at them.
func TestConsumerProtocolResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	b := startConsumerProtocolBroker(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, group = "cp-resume", "cp-resume-group"
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
	cl := groupClient(t, b, group, topic, append(serverSide(kgo.StickyBalancer()), kgo.DisableAutoCommit())...)
	kzerotest.ConsumeN(t, ctx, cl, 100)
	at := map[int32]kgo.EpochOffset{0: {Epoch: -1, Offset: 30}, 1: {Epoch: -1, Offset: 20}}
	var commitErr error
	cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{topic: at}, func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		commitErr = err
		if req.Generation < 1 {
			commitErr = fmt.Errorf("committed with member epoch %d", req.Generation)
		}
		if commitErr == nil {
			commitErr = commitResponseErr(resp, nil)
		}
	})
	if commitErr != nil {
		t.Fatalf("commit: %v", commitErr)
	}
	cl.Close()
	prod.Close()
	stopBroker(t, b)

	b = startConsumerProtocolBroker(t, dir)
	defer stopBroker(t, b)
	adm := kadm.NewClient(newClient(t, b))
	if got := committed(t, ctx, adm, group, topic); got[0] != 30 || got[1] != 20 {
		t.Fatalf("committed after restart %v", got)
	}
	if gs, err := adm.DescribeConsumerGroups(ctx, group); err != nil || gs[group].Err != nil || gs[group].State != "Empty" {
		t.Fatalf("group after restart: %+v %v", gs[group], err)
	}
	cl = groupClient(t, b, group, topic, serverSide(kgo.StickyBalancer())...)
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
