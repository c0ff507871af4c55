package node

// The cluster admin requests on three nodes in one process, with kadm and
// raw requests: ElectLeaders (preferred and unclean),
// AlterPartitionReassignments and ListPartitionReassignments (a
// reassignment that waits for its new replica to join the ISR, its
// cancellation, a reorder that completes at once, the replication factor
// guard of v1), UnregisterBroker. Requests sent to a node that is not the
// quorum leader work as on the leader: the decision goes to the leader
// through raft.

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
)

// waitImage waits until node i's metadata satisfies cond.
func (c *testCluster) waitImage(ctx context.Context, i int, what string, cond func(*metadata.Image) bool) *metadata.Image {
	c.t.Helper()
	var img *metadata.Image
	if !c.awaitImages(ctx, func() bool {
		img = c.nodes[i].Controller().Image()
		return cond(img)
	}) {
		c.t.Fatalf("node %d never saw %s", i+1, what)
	}
	return img
}

func TestClusterAdmin(t *testing.T) {
	c := startCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	lead := c.leader(ctx)
	follower, other := (lead+1)%3, (lead+2)%3
	cl, adm := c.client(follower)
	if res, err := adm.CreateTopic(ctx, 3, 3, nil, "admin"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	img := c.waitImage(ctx, lead, "topic admin", func(img *metadata.Image) bool { return img.Topic("admin") != nil })
	replicas := func(img *metadata.Image, p int32) []int32 {
		return slices.Clone(img.Topic("admin").Partitions[p].Replicas)
	}
	r0, r1, r2 := replicas(img, 0), replicas(img, 1), replicas(img, 2)

	// Every partition is led by its preferred replica: no election needed;
	// asked for every partition, no partition is listed.
	el, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"admin": {0: {}, 1: {}, 2: {}}})
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		if r := el["admin"][p]; !errors.Is(r.Err, kerr.ElectionNotNeeded) {
			t.Fatalf("preferred election of admin-%d: %+v", p, r)
		}
	}
	el, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
	if ps, ok := el["admin"]; err != nil || !ok || len(ps) != 0 {
		t.Fatalf("preferred election of every partition: %v %+v", err, el)
	}

	// A reassignment sent to a node that does not lead the quorum: admin-0
	// drops its last replica. The two it keeps are in the ISR (they
	// replicate), so it completes at once: nothing is left to list, and a
	// cancellation finds none.
	alter := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	at := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	at.Topic = "admin"
	ap := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	ap.Partition, ap.Replicas = 0, r0[:2]
	at.Partitions = append(at.Partitions, ap)
	alter.Topics = append(alter.Topics, at)
	aresp, err := alter.RequestWith(ctx, cl.Broker(follower+1))
	if err != nil {
		t.Fatal(err)
	}
	if len(aresp.Topics) != 1 || len(aresp.Topics[0].Partitions) != 1 || aresp.Topics[0].Partitions[0].ErrorCode != 0 || !aresp.AllowReplicationFactorChange {
		t.Fatalf("reassign on node %d: %+v", follower+1, aresp)
	}
	c.waitImage(ctx, follower, "the reassignment", func(img *metadata.Image) bool {
		p := img.Topic("admin").Partitions[0]
		return !p.Reassigning() && slices.Equal(p.Replicas, r0[:2])
	})
	list := kmsg.NewPtrListPartitionReassignmentsRequest()
	lresp, err := list.RequestWith(ctx, cl.Broker(follower+1))
	if err != nil || len(lresp.Topics) != 0 {
		t.Fatalf("reassignments on node %d: %v %+v", follower+1, err, lresp)
	}
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("admin", 0, nil)
	ares, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil || !errors.Is(ares["admin"][0].Err, kerr.NoReassignmentInProgress) {
		t.Fatalf("cancel: %v %+v", err, ares)
	}

	// Back to three replicas: the new one copies the log, joins the ISR
	// (its leader asks, AlterPartition), and that completes it.
	req = nil
	req.Assign("admin", 0, r0)
	if ares, err = adm.AlterPartitionAssignments(ctx, req); err != nil || ares["admin"][0].Err != nil {
		t.Fatalf("reassign back: %v %+v", err, ares)
	}
	c.waitImage(ctx, lead, "the new replica joining", func(img *metadata.Image) bool {
		p := img.Topic("admin").Partitions[0]
		return !p.Reassigning() && slices.Equal(p.Replicas, r0) && len(p.ISR) == 3
	})

	// The replication factor guard (v1): a smaller target is refused.
	req = nil
	req.Assign("admin", 1, r1[:2])
	ares, err = adm.AlterPartitionAssignments(kadm.ForbidAlterRf(ctx), req)
	if err != nil || !errors.Is(ares["admin"][1].Err, kerr.InvalidReplicationFactor) {
		t.Fatalf("guarded reassignment: %v %+v", err, ares)
	}

	// A reorder completes at once; its new preferred replica is in the
	// ISR, so a preferred election moves the leadership to it.
	req = nil
	req.Assign("admin", 2, []int32{r2[1], r2[0], r2[2]})
	if ares, err = adm.AlterPartitionAssignments(ctx, req); err != nil || ares["admin"][2].Err != nil {
		t.Fatalf("reorder: %v %+v", err, ares)
	}
	c.waitImage(ctx, lead, "the reorder", func(img *metadata.Image) bool {
		return slices.Equal(img.Topic("admin").Partitions[2].Replicas, []int32{r2[1], r2[0], r2[2]})
	})
	el, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"admin": {2: {}}})
	if err != nil || el["admin"][2].Err != nil {
		t.Fatalf("preferred election after the reorder: %v %+v", err, el)
	}
	c.waitImage(ctx, lead, "the preferred leader", func(img *metadata.Image) bool {
		return img.Topic("admin").Partitions[2].Leader == r2[1]
	})

	// A node stops: its leaderships move to other ISR members first
	// (controlled shutdown), so an unclean election, sent to a node that
	// does not lead the quorum, finds nothing to do.
	gone := int32(other + 1)
	c.stop(other)
	img = c.waitImage(ctx, lead, "no partition led by the stopped node", func(img *metadata.Image) bool {
		for _, p := range img.Topic("admin").Partitions {
			if p.Leader == gone || p.Leader == metadata.NoLeader {
				return false
			}
		}
		return true
	})
	elect := kmsg.NewPtrElectLeadersRequest()
	elect.ElectionType = 1
	et := kmsg.NewElectLeadersRequestTopic()
	et.Topic, et.Partitions = "admin", []int32{0, 1, 2}
	elect.Topics = append(elect.Topics, et)
	eresp, err := elect.RequestWith(ctx, cl.Broker(follower+1))
	if err != nil {
		t.Fatal(err)
	}
	if eresp.ErrorCode != 0 || len(eresp.Topics) != 1 || len(eresp.Topics[0].Partitions) != 3 {
		t.Fatalf("unclean election: %+v", eresp)
	}
	for _, p := range eresp.Topics[0].Partitions {
		if p.ErrorCode != kerr.ElectionNotNeeded.Code {
			t.Fatalf("unclean election of admin-%d: %s, want ELECTION_NOT_NEEDED", p.Partition, kerr.ErrorForCode(p.ErrorCode))
		}
	}

	// The stopped node is unregistered, through a node that does not lead
	// the quorum: DescribeCluster no longer lists it, fenced or not.
	unreg := kmsg.NewPtrUnregisterBrokerRequest()
	unreg.BrokerID = gone
	uresp, err := unreg.RequestWith(ctx, cl.Broker(follower+1))
	if err != nil || uresp.ErrorCode != 0 {
		t.Fatalf("unregister %d: %v %+v", gone, err, uresp)
	}
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeFencedBrokers = true
	dresp, err := dc.RequestWith(ctx, cl.Broker(follower+1))
	if err != nil {
		t.Fatal(err)
	}
	if len(dresp.Brokers) != 2 || slices.ContainsFunc(dresp.Brokers, func(b kmsg.DescribeClusterResponseBroker) bool { return b.NodeID == gone }) {
		t.Fatalf("brokers after unregistering %d: %+v", gone, dresp.Brokers)
	}
	for _, id := range []int32{gone, 99} {
		unreg.BrokerID = id
		uresp, err := unreg.RequestWith(ctx, cl.Broker(follower+1))
		if err != nil || uresp.ErrorCode != kerr.BrokerIDNotRegistered.Code || uresp.ErrorMessage == nil {
			t.Fatalf("unregister %d again: %v %+v", id, err, uresp)
		}
	}
}
