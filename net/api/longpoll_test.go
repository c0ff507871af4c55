package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/kzerotest/await"
	"kzero/log"
	"kzero/node/nodetest"
	"kzero/replica"
)

// A fetch that finds nothing waits (MaxWaitMs) and is answered as soon as a
// record arrives on any partition it asked for: the record produced once
// the fetch is parked on both partitions comes back in the response,
// before the 2s wait expires.
func TestLongPollFetchWakesOnProduce(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b, kgo.DefaultProduceTopic("poll"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	kzerotest.CreateTopic(t, ctx, cl, "poll", 2, nil)
	conn := kzerotest.Dial(t, b.Addr().String())

	const maxWait = 2 * time.Second
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(maxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "poll"
	for p := int32(0); p < 2; p++ {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = p
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)

	type result struct {
		resp    kmsg.Response
		err     error
		elapsed time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		resp, err := conn.Request(req)
		done <- result{resp, err, time.Since(start)}
	}()
	parts := make([]*replica.Partition, 2)
	for i := range parts {
		p, ok := b.Replicas().Partition(log.TopicPartition{Topic: "poll", Partition: int32(i)})
		if !ok {
			t.Fatalf("poll-%d is not local", i)
		}
		parts[i] = p
	}
	await.True(t, 10*time.Second, func() bool { return parts[0].Waiting() == 1 && parts[1].Waiting() == 1 },
		"the fetch parked on both partitions")
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte("wake up")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatal("the fetch was never answered")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	fr := res.resp.(*kmsg.FetchResponse)
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 2 {
		t.Fatalf("fetch response shape: %+v", fr.Topics)
	}
	var got []*kgo.Record
	for _, p := range fr.Topics[0].Partitions {
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			t.Fatalf("partition %d: %v", p.Partition, err)
		}
		fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: "poll", Partition: p.Partition}, &p, kgo.DefaultDecompressor(), nil)
		got = append(got, fp.Records...)
	}
	if len(got) != 1 || string(got[0].Value) != "wake up" || got[0].Partition != 1 {
		t.Fatalf("the long poll returned %d records", len(got))
	}
	// The one bound the protocol sets: an answer after MaxWaitMs would
	// mean the append did not wake the fetch and the expiry answered it.
	if res.elapsed >= maxWait {
		t.Fatalf("the fetch was answered after %v, at its wait's expiry, not by the append", res.elapsed)
	}
}
