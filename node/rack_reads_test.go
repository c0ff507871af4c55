package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch from the closest replica (KIP-392): with
// replica.selector.class=RackAwareReplicaSelector the leader sends a
// consumer with a client.rack to the in-sync follower in its rack, and the
// follower serves it up to its HW.
func TestRackAwareReads(t *testing.T) {
	c := startCluster(t, 3) // racks: node 1 rack-1, node 2 rack-0, node 3 rack-1
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, _ := c.client(0)
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "near", -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{2, 3} // led in rack-0, followed in rack-1
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	req.Topics = append(req.Topics, rt)
	if resp, err := req.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}
	for i := range c.nodes {
		c.waitTopic(ctx, i, "near")
	}
	pcl, _ := c.client(0, kgo.DefaultProduceTopic("near"))
	const n = 50
	for i := range n {
		if err := pcl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	before := c.nodes[2].Replicas().Stats().ServedAsFollower
	rcl, _ := c.client(0, kgo.ConsumeTopics("near"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.Rack("rack-1"))
	for got := 0; got < n; {
		fs := rcl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d", got, n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != int64(got) {
				t.Fatalf("offset %d, want %d", r.Offset, got)
			}
			got++
		})
	}
	if served := c.nodes[2].Replicas().Stats().ServedAsFollower - before; served <= 0 {
		t.Fatalf("node 3, the follower in rack-1, served %d bytes to the rack-1 consumer", served)
	}
	// A consumer in the leader's rack, or with none, reads from the leader.
	leaderBefore := c.nodes[2].Replicas().Stats().ServedAsFollower
	lcl, _ := c.client(0, kgo.ConsumeTopics("near"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.Rack("rack-0"))
	for got := 0; got < n; {
		fs := lcl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("rack-0 consumer read %d of %d", got, n)
		}
		got += fs.NumRecords()
	}
	if c.nodes[2].Replicas().Stats().ServedAsFollower != leaderBefore {
		t.Fatal("the follower served a consumer in the leader's rack")
	}
	// A fetch the leader answers with a preferred read replica is answered
	// at once, however many min bytes it asks to wait for (Kafka's
	// fetchMessages: hasPreferredReadReplica).
	f := kmsg.NewPtrFetchRequest()
	f.ReplicaID, f.SessionEpoch, f.Rack = -1, -1, "rack-1"
	f.MaxBytes, f.MinBytes, f.MaxWaitMillis = 1<<20, 1<<20, 5000
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "near", c.nodes[1].Controller().Image().Topic("near").ID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset, fp.PartitionMaxBytes = n, 1<<20
	ft.Partitions = append(ft.Partitions, fp)
	f.Topics = append(f.Topics, ft)
	start := time.Now()
	resp, err := f.RequestWith(ctx, rcl.Broker(2))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a fetch to the leader, node 2, sent to node 3: answered after %v, want at once", took)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].PreferredReadReplica != 3 {
		t.Fatalf("fetch from the leader in rack-1: %+v, want preferred read replica 3", resp)
	}
}
