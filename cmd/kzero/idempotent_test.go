package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kgo's default producer is idempotent: it gets a producer id with
// InitProducerId and the log checks its sequences.
func TestIdempotentProducer(t *testing.T) {
	dir := t.TempDir()
	b := startTestBroker(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b, kgo.DefaultProduceTopic("idem"), kgo.AllowAutoTopicCreation())
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 4, 1, nil, "idem"); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i % 17)), Value: []byte(fmt.Sprint(i))}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Error(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	descs, err := kadm.NewClient(cl).DescribeProducers(ctx, kadm.TopicsSet{"idem": {0: {}, 1: {}, 2: {}, 3: {}}})
	if err != nil {
		t.Fatal(err)
	}
	producers := map[int64]bool{}
	descs.EachProducer(func(p kadm.DescribedProducer) { producers[p.ProducerID] = true })
	if len(producers) != 1 {
		t.Fatalf("producers %v, want the one idempotent producer", producers)
	}
	var before int64
	for id := range producers {
		before = id
	}

	seen := map[string]int{}
	consumer := newClient(t, b, kgo.ConsumeTopics("idem"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < n; {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++; got++ })
	}
	for i := 0; i < n; i++ {
		if seen[fmt.Sprint(i)] != 1 {
			t.Fatalf("record %d seen %d times", i, seen[fmt.Sprint(i)])
		}
	}

	// Producer ids are never handed out twice, across restarts too.
	stopBroker(t, b)
	b = startTestBroker(t, dir)
	defer stopBroker(t, b)
	raw := newClient(t, b)
	resp, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(ctx, raw)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("init producer id: %v %d", err, resp.ErrorCode)
	}
	if resp.ProducerID <= before || resp.ProducerEpoch != 0 {
		t.Fatalf("producer id %d epoch %d after restart, first was %d", resp.ProducerID, resp.ProducerEpoch, before)
	}
	// An empty transactional id is not one (Kafka: INVALID_REQUEST).
	req := kmsg.NewPtrInitProducerIDRequest()
	txn := ""
	req.TransactionalID = &txn
	got, err := raw.Broker(1).Request(ctx, req)
	if err != nil || got.(*kmsg.InitProducerIDResponse).ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("transactional init: %v %+v", err, got)
	}
}
