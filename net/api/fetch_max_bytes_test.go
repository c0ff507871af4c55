package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/node"
	"kzero/node/nodetest"
)

// TestFetchMaxBytes: fetch.max.bytes caps what a consumer's fetch
// answers whatever max bytes it asks for (Kafka's handleFetchRequest);
// the first batch still comes back whole (KIP-74).
func TestFetchMaxBytes(t *testing.T) {
	const capBytes = 4096
	b := startBroker(t, t.TempDir(), func(c *node.Config) { c.FetchMaxBytes = capBytes })
	t.Cleanup(func() { nodetest.Stop(t, b) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// One record per batch, so the cap cuts between batches.
	cl := nodetest.Client(t, b, kgo.DefaultProduceTopic("capped"), kgo.MaxBufferedRecords(1), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "capped"); err != nil {
		t.Fatal(err)
	}
	var total int
	for range 20 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 1000)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		total += 1000
	}

	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.SessionEpoch = -1
	req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 1<<20, 1, 500
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "capped", b.Controller().Image().Topic("capped").ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("fetch: %+v", resp)
	}
	got := len(resp.Topics[0].Partitions[0].RecordBatches)
	if got == 0 || got > capBytes {
		t.Errorf("fetch answered %d record bytes, want 1 to %d (fetch.max.bytes; %d stored)", got, capBytes, total)
	}
}
