package node

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
)

// Eligible leader replicas (KIP-966) end to end. Five nodes keep a quorum
// while both replicas of a min.insync.replicas=2 topic stop: the follower
// stops first and becomes eligible (it left an ISR already at the
// minimum); the leader stops and the ISR empties. The follower comes back
// and leads cleanly from the ELR with every acknowledged record. A record
// the leader took with acks=1 while alone in the ISR never became visible
// (the HW stays while the ISR is below min.insync.replicas), and it is
// gone with the leader: no consumer saw it.
func TestEligibleLeaderReplicas(t *testing.T) {
	c := startCluster(t, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cl, _ := c.client(0)
	createAssigned(ctx, t, cl, "elr", []int32{4, 5}, 2)
	partition := func(img *metadata.Image) metadata.Partition { return img.Topic("elr").Partitions[0] }
	c.waitImage(ctx, 0, "the topic's ISR", func(img *metadata.Image) bool {
		return img.Topic("elr") != nil && len(partition(img).ISR) == 2 && partition(img).Leader == 4
	})

	pcl, _ := c.client(0, kgo.DefaultProduceTopic("elr"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0))
	for i := range 10 {
		if err := pcl.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}

	c.stop(4) // node 5, the follower
	c.waitImage(ctx, 0, "node 5 eligible", func(img *metadata.Image) bool {
		p := partition(img)
		return slices.Equal(p.ISR, []int32{4}) && slices.Equal(p.ELR, []int32{5})
	})
	// acks=1 with the leader alone in the ISR: taken, but the HW stays.
	one, _ := c.client(0, kgo.DefaultProduceTopic("elr"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerLinger(0))
	r, err := one.ProduceSync(ctx, &kgo.Record{Value: []byte("unseen")}).First()
	if err != nil || r.Offset != 10 {
		t.Fatalf("acks=1 produce: offset %d, %v", r.Offset, err)
	}
	if hw := listEnd(ctx, t, cl, "elr"); hw != 10 {
		t.Fatalf("high watermark %d after an acks=1 record with the ISR below min.insync.replicas; want 10", hw)
	}

	c.stop(3) // node 4, the leader
	c.waitImage(ctx, 0, "an empty ISR", func(img *metadata.Image) bool {
		p := partition(img)
		return p.Leader == metadata.NoLeader && len(p.ISR) == 0 && slices.Contains(p.ELR, 5) && slices.Contains(p.ELR, 4) &&
			slices.Equal(p.LastKnownELR, []int32{4})
	})
	d := describePartition(ctx, t, cl, "elr")
	if d.LeaderID != -1 || len(d.ISR) != 0 || len(d.EligibleLeaderReplicas) != 2 || !slices.Equal(d.LastKnownELR, []int32{4}) {
		t.Fatalf("DescribeTopicPartitions: %+v", d)
	}

	c.restart(4) // node 5 comes back: eligible, it leads cleanly
	c.waitImage(ctx, 0, "node 5 leading from the ELR", func(img *metadata.Image) bool {
		p := partition(img)
		return p.Leader == 5 && slices.Equal(p.ISR, []int32{5}) && slices.Equal(p.ELR, []int32{4}) && len(p.LastKnownELR) == 0 &&
			p.LeaderRecovery == metadata.Recovered
	})
	ccl, _ := c.client(0, kgo.ConsumeTopics("elr"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 10 {
		fs := ccl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %v", got)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, v := range got {
		if v != strconv.Itoa(i) {
			t.Fatalf("records %v: every acknowledged one, in order, and nothing else", got)
		}
	}
}

// listEnd is ListOffsets' latest offset (the HW) of partition 0.
func listEnd(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("list offsets: %v %+v", err, resp)
	}
	return resp.Topics[0].Partitions[0].Offset
}

func describePartition(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) kmsg.DescribeTopicPartitionsResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	rt.Topic = topic
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("describe topic partitions: %v %+v", err, resp)
	}
	return resp.Topics[0].Partitions[0]
}
