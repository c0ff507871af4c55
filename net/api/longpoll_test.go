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
	"kzero/net/api"
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

// A panic while a parked fetch is answered fails that fetch, closing its
// connection, and not the produce that woke it: the produce is answered
// on its own connection with its offset, its records are in the log once,
// and the broker serves on. The produce answers the fetch on its own
// event loop (Parked.Inline), so without the fetch's own recovery the
// panic would fail the produce, whose records are already appended.
func TestParkedFetchPanicFailsTheFetchNotTheProduce(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b)
	kzerotest.CreateTopic(t, ctx, cl, "panic", 1, nil)
	part, ok := b.Replicas().Partition(log.TopicPartition{Topic: "panic", Partition: 0})
	if !ok {
		t.Fatal("panic-0 is not local")
	}

	fetcher := kzerotest.Dial(t, b.Addr().String())
	fetched := make(chan error, 1)
	go func() {
		_, _, err := fetcher.Fetch("panic", 0, 0, 20*time.Second)
		fetched <- err
	}()
	await.True(t, 10*time.Second, func() bool { return part.Waiting() == 1 }, "the fetch parked")

	defer api.SetParkedFault(func() { panic("injected") })()
	producer := kzerotest.Dial(t, b.Addr().String())
	p, err := producer.Produce("panic", 0, kzerotest.EncodeBatch(time.Now().UnixMilli(), []byte("v")))
	if err != nil {
		t.Fatalf("the produce failed with the fetch it woke: %v", err)
	}
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil || p.BaseOffset != 0 {
		t.Fatalf("produce: offset %d, %v", p.BaseOffset, err)
	}
	select {
	case err := <-fetched:
		if err == nil {
			t.Fatal("the fetch whose answer panicked was answered")
		}
	case <-ctx.Done():
		t.Fatal("the fetch whose answer panicked was neither answered nor closed")
	}

	// The producer's connection and the broker serve on; the record is there once.
	if p := kzerotest.ProduceOnce(t, producer, "panic", 0, kzerotest.EncodeBatch(time.Now().UnixMilli(), []byte("w"))); p.ErrorCode != 0 || p.BaseOffset != 1 {
		t.Fatalf("second produce: offset %d, code %d", p.BaseOffset, p.ErrorCode)
	}
	_, recs := kzerotest.FetchOnce(t, kzerotest.Dial(t, b.Addr().String()), "panic", 0, 0, 0)
	if len(recs) != 2 || string(recs[0].Value) != "v" || string(recs[1].Value) != "w" {
		t.Fatalf("the log holds %d records", len(recs))
	}
}
