package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest"
)

// The online migration of a group with members from the classic to the
// consumer protocol (group.consumer.migration.policy, bidirectional by
// default), and the purge of deleted topics' offsets, end to end.

// Classic kgo members (cooperative-sticky, then eager range) consume while
// records are produced; KIP-848 members join the same group, which is
// upgraded with the classic members in it; then the classic members leave.
// Every record is consumed, by one member per epoch, and the last commits
// cover everything.
func TestGroupMigrationClassicToConsumer(t *testing.T) {
	b := startConsumerProtocolBroker(t, t.TempDir())
	defer stopBroker(t, b)
	for _, bal := range []kgo.GroupBalancer{kgo.CooperativeStickyBalancer(), kgo.RangeBalancer()} {
		t.Run(bal.ProtocolName(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			topic, group := "mig-"+bal.ProtocolName(), "mig-group-"+bal.ProtocolName()
			prod := newClient(t, b, kgo.ProducerLinger(0))
			adm := kadm.NewClient(prod)
			kzerotest.CreateTopic(t, ctx, prod, topic, 6, nil)
			l := newLedger()
			const total, step = 2500, 250
			classic := []kgo.Opt{kgo.Balancers(bal)}
			consumer := serverSide(kgo.StickyBalancer())
			members := []*member{
				startMember(t, b, l, "c0", group, topic, classic...),
				startMember(t, b, l, "c1", group, topic, classic...),
			}
			waitGroup(t, ctx, adm, group, func(g kadm.DescribedGroup) bool {
				return g.State == "Stable" && len(g.Members) == 2 && ownsPartitions(g, 0) && ownsPartitions(g, 1)
			})
			add := func(name string) func() {
				return func() { members = append(members, startMember(t, b, l, name, group, topic, consumer...)) }
			}
			leave := func() { members[0].stop(); members = members[1:] }
			changes := map[int]func(){500: add("n0"), 1000: add("n1"), 1500: leave, 2000: leave}
			for produced := 0; produced < total; produced += step {
				produceKeys(t, ctx, prod, topic, produced, produced+step)
				if f := changes[produced]; f != nil {
					f()
					waitConsumerGroup(t, ctx, adm, group, settled(len(members), 6))
				}
				l.waitDistinct(t, ctx, produced+step/2)
			}
			l.waitDistinct(t, ctx, total)
			g := waitConsumerGroup(t, ctx, adm, group, settled(2, 6))
			for _, m := range g.Members {
				if m.MemberType != 1 {
					t.Fatalf("a classic member is left: %+v", g)
				}
			}
			for _, m := range members {
				m.stop()
			}
			l.check(t, total)
			wantCommittedAtEnd(t, ctx, adm, group, topic)
			if l.consumedBy("n0") == 0 || l.consumedBy("n1") == 0 || l.consumedBy("c0") == 0 {
				t.Fatalf("consumed by c0 %d, n0 %d, n1 %d", l.consumedBy("c0"), l.consumedBy("n0"), l.consumedBy("n1"))
			}
		})
	}
}

// A deleted topic's committed offsets disappear from every group
// (OffsetFetch); the group's other offsets stay.
func TestGroupDeletedTopicOffsetsArePurged(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b)
	adm := kadm.NewClient(cl)
	kzerotest.CreateTopic(t, ctx, cl, "doomed", 3, nil)
	kzerotest.CreateTopic(t, ctx, cl, "kept", 1, nil)
	offsets := kadm.Offsets{}
	for p := range int32(3) {
		offsets.AddOffset("doomed", p, 10+int64(p), -1)
	}
	offsets.AddOffset("kept", 0, 5, -1)
	for _, group := range []string{"purge-a", "purge-b"} {
		resp, err := adm.CommitOffsets(ctx, group, offsets)
		if err != nil || resp.Error() != nil {
			t.Fatalf("commit to %s: %v %v", group, err, resp.Error())
		}
	}
	if got := committed(t, ctx, adm, "purge-a", "doomed"); len(got) != 3 {
		t.Fatalf("committed %v", got)
	}
	if resp, err := adm.DeleteTopics(ctx, "doomed"); err != nil || resp.Error() != nil {
		t.Fatalf("delete topic: %v %v", err, resp.Error())
	}
	for _, group := range []string{"purge-a", "purge-b"} {
		for len(committed(t, ctx, adm, group, "doomed")) > 0 {
			select {
			case <-ctx.Done():
				t.Fatalf("offsets of the deleted topic still in %s: %v", group, committed(t, ctx, adm, group, "doomed"))
			case <-time.After(20 * time.Millisecond):
			}
		}
		if got := committed(t, ctx, adm, group, "kept"); got[0] != 5 {
			t.Fatalf("offsets of the kept topic in %s: %v", group, got)
		}
	}
}

// An unknown group.consumer.migration.policy stops the broker; the known
// ones are taken in any case.
func TestGroupMigrationPolicyConfig(t *testing.T) {
	if _, err := loadConfig(nil, map[string]string{"group.consumer.migration.policy": "sideways"}, quiet); err == nil {
		t.Fatal("accepted an unknown migration policy")
	}
	for _, p := range []string{"bidirectional", "UPGRADE", "downgrade", "disabled"} {
		if _, err := loadConfig(nil, map[string]string{"group.consumer.migration.policy": p}, quiet); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
}
