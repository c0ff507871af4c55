package node

// Share partitions whose state partition another broker leads: the share
// partition leader saves and reads their state with WriteShareGroupState
// and ReadShareGroupState on the share coordinator (shareRemote), so a
// new leader serves from it.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/coord/share"
	"kzero/kzerotest/await"
)

// pollShareRecords polls a share consumer until it gets records.
func pollShareRecords(t *testing.T, ctx context.Context, cl *kgo.Client) []*kgo.Record {
	t.Helper()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("no records: %v", ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("poll %s-%d: %v", topic, p, err) })
		if rs := fs.Records(); len(rs) > 0 {
			return rs
		}
	}
}

// shareRig is a share group on a topic partition whose leader is not the
// leader of the group's __share_group_state partition, after a consumer
// acknowledged records 0-4 and released 5-9 of 0-9 there.
type shareRig struct {
	c                              *testCluster
	cl                             *kgo.Client
	adm                            *kadm.Client
	lead                           int
	topicID                        [16]byte
	group                          string
	key                            share.Key
	partLeader, coordinator, third int32
	epoch                          int32 // the partition's leader epoch the state was saved under
}

func shareAcrossBrokers(t *testing.T, ctx context.Context) shareRig {
	c := startCluster(t, 3)
	lead := c.leader(ctx)
	cl, adm := c.client(lead, kgo.DefaultProduceTopic("sq"), kgo.ProducerLinger(0))
	if res, err := adm.CreateTopic(ctx, 1, 3, nil, "sq"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	var img *metadata.Image
	for i := range c.nodes {
		img = c.waitImage(ctx, i, "topic sq led", func(img *metadata.Image) bool {
			tm := img.Topic("sq")
			return tm != nil && tm.Partitions[0].Leader > 0 && len(tm.Partitions[0].ISR) == 3
		})
	}
	topicID := img.Topic("sq").ID
	partLeader := img.Topic("sq").Partitions[0].Leader

	// A first share fetch on the partition's leader creates
	// __share_group_state; its partitions load meanwhile
	// (COORDINATOR_LOAD_IN_PROGRESS, retriable).
	if _, err := adm.Metadata(ctx); err != nil {
		t.Fatal(err)
	}
	warm := func(group string) {
		await.TrueCtx(t, ctx, func() bool {
			req := kmsg.NewPtrShareFetchRequest()
			req.Version = 2
			req.GroupID, req.MemberID = kmsg.StringPtr(group), kmsg.StringPtr("warm-member")
			req.MaxRecords, req.BatchSize = 1, 1
			rt := kmsg.NewShareFetchRequestTopic()
			rt.TopicID = topicID
			rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, cl.Broker(int(partLeader)))
			if err != nil {
				t.Fatal(err)
			}
			ready := resp.ErrorCode == 0 // partitions without records or errors are left out
			for _, rt := range resp.Topics {
				for _, rp := range rt.Partitions {
					if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
						if !kerr.IsRetriable(err) {
							t.Fatalf("warm-up share fetch: %v", err)
						}
						ready = false
					}
				}
			}
			closeReq := kmsg.NewPtrShareFetchRequest()
			closeReq.Version = 2
			closeReq.GroupID, closeReq.MemberID, closeReq.ShareSessionEpoch = req.GroupID, req.MemberID, -1
			if _, err := closeReq.RequestWith(ctx, cl.Broker(int(partLeader))); err != nil {
				t.Fatal(err)
			}
			return ready
		}, "a share fetch on "+group+" without a retriable error")
	}
	warm("warm")
	for i := range c.nodes {
		img = c.waitImage(ctx, i, "__share_group_state led", func(img *metadata.Image) bool {
			tm := img.Topic(share.StateTopic)
			return tm != nil && !slices.ContainsFunc(tm.Partitions, func(p metadata.Partition) bool { return p.Leader <= 0 })
		})
	}

	// A group whose state partition another broker leads than the share
	// partition; the third broker will lead the share partition next.
	var group string
	var key share.Key
	var coordinator int32
	for i := 0; ; i++ {
		group = fmt.Sprintf("g%d", i)
		key = share.Key{Group: group, Topic: topicID, Partition: 0}
		coordinator = img.Topic(share.StateTopic).Partitions[c.nodes[0].shareState.PartitionFor(key)].Leader
		if coordinator == partLeader {
			continue
		}
		// and whose group coordinator is the third broker, so that the
		// share group offsets APIs ask the share coordinator too and the
		// share partition's leader is another broker.
		var fc kadm.FindCoordinatorResponse
		if !await.PollCtx(ctx, func() bool {
			fc = adm.FindGroupCoordinators(ctx, group)[group]
			if fc.Err != nil && !kerr.IsRetriable(fc.Err) {
				t.Fatalf("find the coordinator of %s: %v", group, fc.Err)
			}
			return fc.Err == nil // retriable while __consumer_offsets is being created
		}) {
			t.Fatalf("find the coordinator of %s: %v", group, fc.Err)
		}
		groupCoordinator := fc.NodeID
		if groupCoordinator != coordinator && groupCoordinator != partLeader {
			break
		}
	}
	third := int32(6) - partLeader - coordinator
	statePart := c.nodes[0].shareState.PartitionFor(key)
	await.TrueCtx(t, ctx, func() bool { return slices.Contains(c.nodes[coordinator-1].shareState.Leading(), statePart) },
		"the share coordinator to load its partition")
	t.Logf("share partition led by %d, its state by %d; next leader %d", partLeader, coordinator, third)
	warm(group) // the share partition starts here (share.auto.offset.reset latest)

	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons, _ := c.client(lead, kgo.ShareGroup(group), kgo.ConsumeTopics("sq"), kgo.FetchMaxWait(500*time.Millisecond))
	seen := map[string]bool{}
	for len(seen) < 10 {
		for _, r := range pollShareRecords(t, ctx, cons) {
			seen[string(r.Value)] = true
			if v := string(r.Value); len(v) == 1 && v < "5" {
				r.Ack(kgo.AckAccept) // 0-4
			} else {
				r.Ack(kgo.AckRelease) // 5-9: not done
			}
		}
		if err := cons.FlushAcks(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cons.Close()

	// The state is on the coordinator, not on the share partition's
	// leader: records 0-4 are done.
	snap, found, err := c.nodes[coordinator-1].shareState.Read(key)
	if err != nil || !found || snap.StartOffset != 5 {
		t.Fatalf("state on the coordinator %d: %+v %v %v, want start offset 5", coordinator, snap, found, err)
	}
	return shareRig{c, cl, adm, lead, topicID, group, key, partLeader, coordinator, third, snap.LeaderEpoch}
}

// consumeSaved consumes group's records through node after the share
// partition's leader changed: records 0-4, acknowledged on the old
// leader, are not delivered again; 5-11 are, and are acknowledged.
func consumeSaved(t *testing.T, ctx context.Context, c *testCluster, node int, group string) {
	t.Helper()
	cons, _ := c.client(node, kgo.ShareGroup(group), kgo.ConsumeTopics("sq"), kgo.FetchMaxWait(500*time.Millisecond))
	got := map[string]bool{}
	for len(got) < 7 {
		for _, r := range pollShareRecords(t, ctx, cons) {
			v := string(r.Value)
			if len(v) == 1 && v < "5" {
				t.Fatalf("record %s, acknowledged on the old leader, delivered again (count %d)", v, r.DeliveryCount())
			}
			got[v] = true
			r.Ack(kgo.AckAccept)
		}
		if err := cons.FlushAcks(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"5", "6", "7", "8", "9", "10", "11"} {
		if !got[v] {
			t.Fatalf("on the new leader got %v, want 5-11", got)
		}
	}
	cons.Close()
}

func TestShareStateOnAnotherBroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	rig := shareAcrossBrokers(t, ctx)
	c, cl, adm, lead, topicID, group, key := rig.c, rig.cl, rig.adm, rig.lead, rig.topicID, rig.group, rig.key
	partLeader, coordinator, third, oldEpoch := rig.partLeader, rig.coordinator, rig.third, rig.epoch

	// The third broker leads the partition now; it reads the state from
	// the coordinator.
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("sq", 0, []int32{third, coordinator, partLeader})
	if ares, err := adm.AlterPartitionAssignments(ctx, req); err != nil || ares["sq"][0].Err != nil {
		t.Fatalf("reorder: %v %+v", err, ares)
	}
	c.waitImage(ctx, lead, "the reorder", func(img *metadata.Image) bool {
		return slices.Equal(img.Topic("sq").Partitions[0].Replicas, []int32{third, coordinator, partLeader})
	})
	if el, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"sq": {0: {}}}); err != nil || el["sq"][0].Err != nil {
		t.Fatalf("preferred election: %v %+v", err, el)
	}
	for i := range c.nodes {
		c.waitImage(ctx, i, "the new leader", func(img *metadata.Image) bool { return img.Topic("sq").Partitions[0].Leader == third })
	}
	for i := 10; i < 12; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	consumeSaved(t, ctx, c, lead, group)
	snap, _, err := c.nodes[coordinator-1].shareState.Read(key)
	if err != nil || snap.StartOffset != 12 || snap.LeaderEpoch <= oldEpoch {
		t.Fatalf("state after the new leader acknowledged: %+v %v, want start offset 12 past leader epoch %d", snap, err, oldEpoch)
	}

	// The group's coordinator describes the saved start offset (from
	// the share coordinator when another broker leads the state
	// partition), and deletes it there.
	desc := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	dg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	dg.GroupID = group
	dt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
	dt.Topic, dt.Partitions = "sq", []int32{0}
	dg.Topics = append(dg.Topics, dt)
	desc.Groups = append(desc.Groups, dg)
	dresp, err := desc.RequestWith(ctx, cl)
	if err != nil || len(dresp.Groups) != 1 || dresp.Groups[0].ErrorCode != 0 || dresp.Groups[0].Topics[0].Partitions[0].StartOffset != 12 {
		t.Fatalf("describe share group offsets: %v %+v", err, dresp)
	}

	// The old leader's epoch is fenced now, for writes and reads.
	w := kmsg.NewPtrWriteShareGroupStateRequest()
	w.GroupID = group
	wt := kmsg.NewWriteShareGroupStateRequestTopic()
	wt.TopicID = topicID
	wp := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	wp.StateEpoch, wp.LeaderEpoch, wp.StartOffset = snap.StateEpoch, oldEpoch, 0
	wt.Partitions = append(wt.Partitions, wp)
	w.Topics = append(w.Topics, wt)
	wresp, err := w.RequestWith(ctx, cl.Broker(int(coordinator)))
	if err != nil || wresp.Topics[0].Partitions[0].ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("write with the old leader epoch: %v %+v", err, wresp)
	}
	w.Topics[0].Partitions[0].LeaderEpoch, w.Topics[0].Partitions[0].StateEpoch = snap.LeaderEpoch, snap.StateEpoch-1
	wresp, err = w.RequestWith(ctx, cl.Broker(int(coordinator)))
	if err != nil || wresp.Topics[0].Partitions[0].ErrorCode != kerr.FencedStateEpoch.Code {
		t.Fatalf("write with an old state epoch: %v %+v", err, wresp)
	}
	r := kmsg.NewPtrReadShareGroupStateRequest()
	r.GroupID = group
	rt := kmsg.NewReadShareGroupStateRequestTopic()
	rt.TopicID = topicID
	rp := kmsg.NewReadShareGroupStateRequestTopicPartition()
	rp.LeaderEpoch = oldEpoch
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	rresp, err := r.RequestWith(ctx, cl.Broker(int(coordinator)))
	if err != nil || rresp.Topics[0].Partitions[0].ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("read with the old leader epoch: %v %+v", err, rresp)
	}
	// A broker that does not lead the state partition is not its
	// coordinator.
	rp.LeaderEpoch = snap.LeaderEpoch
	r.Topics[0].Partitions[0] = rp
	rresp, err = r.RequestWith(ctx, cl.Broker(int(partLeader)))
	if err != nil || rresp.Topics[0].Partitions[0].ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("read on broker %d: %v %+v", partLeader, err, rresp)
	}

	// Deleting the group's offsets deletes the saved state on the share
	// coordinator (DeleteShareGroupState when another broker coordinates
	// the group).
	await.TrueCtx(t, ctx, func() bool {
		del := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
		del.GroupID = group
		del.Topics = append(del.Topics, kmsg.DeleteShareGroupOffsetsRequestTopic{Topic: "sq"})
		delResp, err := del.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if delResp.ErrorCode == kerr.NonEmptyGroup.Code { // the closed member's leave is on its way
			return false
		}
		if delResp.ErrorCode != 0 || len(delResp.Topics) != 1 || delResp.Topics[0].ErrorCode != 0 {
			t.Fatalf("delete share group offsets: %+v", delResp)
		}
		return true
	}, "the group empty, its share offsets deleted")
	if _, found, err := c.nodes[coordinator-1].shareState.Read(key); err != nil || found {
		t.Fatalf("state on the coordinator after the deletion: %v %v", found, err)
	}
}

// The share partition's leader stops: the broker elected in its place
// serves from the state it saved on the share coordinator.
func TestShareStateSurvivesLeaderStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	r := shareAcrossBrokers(t, ctx)
	c := r.c
	c.stop(int(r.partLeader - 1))
	alive := int(r.coordinator - 1)
	img := c.waitImage(ctx, alive, "a new leader", func(img *metadata.Image) bool {
		l := img.Topic("sq").Partitions[0].Leader
		return l > 0 && l != r.partLeader
	})
	t.Logf("broker %d stopped, broker %d leads the share partition", r.partLeader, img.Topic("sq").Partitions[0].Leader)
	cl, _ := c.client(alive, kgo.DefaultProduceTopic("sq"), kgo.ProducerLinger(0))
	for i := 10; i < 12; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	consumeSaved(t, ctx, c, alive, r.group)
}
