package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest/await"
)

// describeShareStart is a share partition's start offset as
// DescribeShareGroupOffsets shows it; -2 on a group error.
func describeShareStart(t *testing.T, ctx context.Context, cl *kgo.Client, group, topic string) int64 {
	t.Helper()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	rg.GroupID = group
	rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("describe share group offsets: %v", err)
	}
	g := resp.Groups[0]
	if g.ErrorCode != 0 || len(g.Topics) != 1 || len(g.Topics[0].Partitions) != 1 {
		return -2
	}
	return g.Topics[0].Partitions[0].StartOffset
}

// A new share group's share partitions are initialized at the share
// coordinator before the group is first assigned them, as Kafka's group
// coordinator does (InitializeShareGroupState, start offset -1): the first
// heartbeat is answered at once with none, the state is saved in the
// background (state epoch 1), and a later heartbeat gets the partition,
// before anything is fetched. The partition leader still starts them at the
// group's share.auto.offset.reset: earliest gets what was produced
// before, latest does not, and DescribeShareGroupOffsets shows where each
// started before anything is acknowledged.
func TestShareStateInitializedAtFirstAssignment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	prod := newClient(t, b, kgo.DefaultProduceTopic("sq"), kgo.ProducerLinger(0))
	adm := kadm.NewClient(prod)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "sq"); err != nil {
		t.Fatal(err)
	}
	var id [16]byte
	await.TrueCtx(t, ctx, func() bool {
		md, err := adm.Metadata(ctx, "sq")
		if err != nil {
			t.Fatal(err)
		}
		id = md.Topics["sq"].ID
		return md.Topics["sq"].Err == nil && len(md.Topics["sq"].Partitions) == 1
	}, "the topic in Metadata")
	produceBatches(t, ctx, prod, 0, 3, 1) // offsets 0-2
	setGroupConfigs(t, ctx, prod, "early", "share.auto.offset.reset", "earliest")

	// The first heartbeat of "late" is answered at once, before the
	// partition's state is initialized: with no partition. The state is
	// initialized in the background (ReadShareGroupStateSummary finds
	// it) and the group epoch bumped; a later heartbeat gets the
	// partition.
	hb := shareHeartbeat(t, ctx, prod, "late", "probe", 0, []string{"sq"})
	if hb.ErrorCode != 0 || hb.Assignment == nil || assigned(hb.Assignment) != 0 {
		t.Fatalf("first heartbeat: %v, assignment %+v, want none yet", kerr.ErrorForCode(hb.ErrorCode), hb.Assignment)
	}
	epoch := hb.MemberEpoch
	sreq := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	sreq.GroupID = "late"
	st := kmsg.NewReadShareGroupStateSummaryRequestTopic()
	st.TopicID = id
	sp := kmsg.NewReadShareGroupStateSummaryRequestTopicPartition()
	st.Partitions = append(st.Partitions, sp)
	sreq.Topics = append(sreq.Topics, st)
	var p kmsg.ReadShareGroupStateSummaryResponseTopicPartition
	await.TrueCtx(t, ctx, func() bool {
		sresp, err := sreq.RequestWith(ctx, prod)
		if err != nil {
			t.Fatal(err)
		}
		p = sresp.Topics[0].Partitions[0]
		return p.ErrorCode == 0 && p.StateEpoch > 0
	}, "the share state initialized")
	if p.StateEpoch != 1 || p.StartOffset != -1 {
		t.Fatalf("saved state after the first heartbeat: state epoch %d start %d, want state epoch 1, start -1 (share.auto.offset.reset)",
			p.StateEpoch, p.StartOffset)
	}
	await.TrueCtx(t, ctx, func() bool {
		if assigned(hb.Assignment) == 1 {
			return true
		}
		hb = shareHeartbeat(t, ctx, prod, "late", "probe", epoch, nil)
		if hb.ErrorCode != 0 {
			t.Fatalf("heartbeat: %v", kerr.ErrorForCode(hb.ErrorCode))
		}
		if hb.MemberEpoch > epoch+1 {
			t.Fatalf("member epoch %d after %d, want the bump of the initialization's end", hb.MemberEpoch, epoch)
		}
		epoch = hb.MemberEpoch
		return assigned(hb.Assignment) == 1
	}, "the probe assigned the partition once its share state is initialized")
	if hb := shareHeartbeat(t, ctx, prod, "late", "probe", -1, nil); hb.ErrorCode != 0 {
		t.Fatalf("leave: %v", kerr.ErrorForCode(hb.ErrorCode))
	}

	early := shareClient(t, b, "early", "sq")
	late := shareClient(t, b, "late", "sq")
	// Neither has polled, so nothing is acknowledged: the start offsets
	// are where share.auto.offset.reset put them.
	for _, c := range []struct {
		cl    *kgo.Client
		group string
		want  int64
	}{{early, "early", 0}, {late, "late", 3}} {
		await.TrueCtx(t, ctx, func() bool { return describeShareStart(t, ctx, prod, c.group, "sq") == c.want },
			"the start offset of "+c.group+" in DescribeShareGroupOffsets")
	}
	produceBatches(t, ctx, prod, 3, 1, 1) // offset 3

	got := map[string]bool{}
	for len(got) < 4 {
		for _, r := range pollShare(t, ctx, early) {
			got[string(r.Value)] = true
		}
	}
	for _, r := range pollShare(t, ctx, late) {
		if string(r.Value) != "3" {
			t.Fatalf("latest got record %s produced before the group started", r.Value)
		}
	}
}
