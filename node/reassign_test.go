package node

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/kzerotest/await"
)

// A reassignment while acks=all producers write: the new replica copies
// the log, joins the ISR, the old one leaves and the leadership moves with
// it; every acknowledged record is there once, at its offset.
func TestReassignWhileProducing(t *testing.T) {
	c := startCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl, adm := c.client(0)
	createAssigned(ctx, t, cl, "moving", []int32{1, 2}, 2)
	for i := range c.nodes {
		c.waitTopic(ctx, i, "moving")
	}

	type acked struct {
		offset int64
		value  string
	}
	var mu sync.Mutex
	var got []acked
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}
	pcl, _ := c.client(0, kgo.DefaultProduceTopic("moving"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0))
	prodCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; prodCtx.Err() == nil; i++ {
			v := strconv.Itoa(i)
			r, err := pcl.ProduceSync(prodCtx, &kgo.Record{Value: []byte(v)}).First()
			if err == nil {
				mu.Lock()
				got = append(got, acked{r.Offset, v})
				mu.Unlock()
			}
		}
	}()
	waitCount := func(n int) {
		if !await.PollCtx(ctx, func() bool { return count() >= n }) {
			t.Fatalf("only %d records acknowledged", count())
		}
	}
	waitCount(300)

	// Replicas [1 2] -> [2 3]: 3 is added, catches up, joins; 1 leaves.
	var ar kadm.AlterPartitionAssignmentsReq
	ar.Assign("moving", 0, []int32{2, 3})
	res, err := adm.AlterPartitionAssignments(ctx, ar)
	if err != nil || res["moving"][0].Err != nil {
		t.Fatalf("reassign: %v %+v", err, res)
	}
	lead := c.leader(ctx)
	c.waitImage(ctx, lead, "the reassignment completing", func(img *metadata.Image) bool {
		p := img.Topic("moving").Partitions[0]
		return !p.Reassigning() && slices.Equal(p.Replicas, []int32{2, 3}) && p.Leader != 1 && len(p.ISR) == 2
	})
	waitCount(count() + 300)
	stop()
	<-done

	mu.Lock()
	defer mu.Unlock()
	ccl, _ := c.client(1, kgo.ConsumeTopics("moving"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	at := map[int64]string{}
	last := got[len(got)-1].offset
	for {
		fs := ccl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read up to %d of %d", len(at), last)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if _, dup := at[r.Offset]; dup {
				t.Errorf("offset %d read twice", r.Offset)
			}
			at[r.Offset] = string(r.Value)
		})
		if _, ok := at[last]; ok {
			break
		}
	}
	for _, a := range got {
		if v := at[a.offset]; v != a.value {
			t.Fatalf("record %s acknowledged at %d, the log holds %q there", a.value, a.offset, v)
		}
	}
	t.Logf("%d acknowledged records, all at their offsets after the move", len(got))
}

// createAssigned creates topic with one partition on replicas (the first
// leads) and min.insync.replicas minISR.
func createAssigned(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, replicas []int32, minISR int) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, replicas
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	cfg := kmsg.NewCreateTopicsRequestTopicConfig()
	cfg.Name, cfg.Value = "min.insync.replicas", kmsg.StringPtr(strconv.Itoa(minISR))
	rt.Configs = append(rt.Configs, cfg)
	req.Topics = append(req.Topics, rt)
	if resp, err := req.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s: %v %+v", topic, err, resp)
	}
}
