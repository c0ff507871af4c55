package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/log"
	"kzero/node"
	"kzero/node/nodetest"
)

// TestFetchMinBytesCountsAvailable: whether a fetch has its min bytes is
// judged, as in Kafka, by the bytes available to it, not by the bytes one
// read returned. Kafka's ReplicaManager.fetchMessages, short of min bytes
// with what it read, hands the fetch to DelayedFetch.tryComplete at once
// (tryCompleteElseWatch), which completes it when its fetch offset lies
// in an older segment than the high watermark (Case F) or when the bytes
// from the fetch offset to the HW, each partition's counted up to its
// partition max bytes, reach min bytes (Case G).
//
// A consumer at offset 0 of a partition whose first segment holds one
// 1,000-byte record and whose second 100 records more reads only the
// first segment's record; asking for 1 MiB within 5 s, Kafka answers at
// once, where kzero waited the 5 s. Capped by fetch.max.bytes (4 KiB) a
// fetch for 1 MiB reads exactly its max bytes, which its min bytes is
// capped at: answered at once too.
func TestFetchMinBytesCountsAvailable(t *testing.T) {
	b := startBroker(t, t.TempDir(), func(c *node.Config) {
		c.FetchMaxBytes, c.StaticConfigs["fetch.max.bytes"] = 4096, "4096"
	})
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b, kgo.DefaultProduceTopic("avail"))
	kzerotest.CreateTopic(t, ctx, cl, "avail", 1, nil)
	produce := func(n int) {
		t.Helper()
		for range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 1000)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(1)
	part, ok := b.Replicas().Partition(log.TopicPartition{Topic: "avail"})
	if !ok {
		t.Fatal("avail-0 is not local")
	}
	if err := part.Log().Roll(); err != nil {
		t.Fatal(err)
	}
	produce(100)

	for _, c := range []struct {
		what   string
		offset int64
	}{
		{"behind the HW's segment", 0},
		{"cut by fetch.max.bytes", 1}, // in the second segment, 100 KB below the HW
	} {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID = 12, -1
		req.SessionEpoch = -1
		req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 1<<20, 1<<20, 5000
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "avail", b.Controller().Image().Topic("avail").ID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset, rp.PartitionMaxBytes = c.offset, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		start := time.Now()
		resp, err := req.RequestWith(ctx, cl)
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if took > 2*time.Second {
			t.Errorf("%s: answered after %v, want at once (Kafka's DelayedFetch completes it when tried)", c.what, took)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 ||
			len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
			t.Fatalf("%s: answer %+v, want records", c.what, resp)
		}
	}
}
