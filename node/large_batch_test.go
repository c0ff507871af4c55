package node

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A batch larger than replica.fetch.response.max.bytes (10 MiB) still
// replicates: the leader sends the first batch whole (KIP-74) and the
// follower reads it, so acks=all completes.
func TestReplicateLargeBatch(t *testing.T) {
	c := startCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, adm := c.client(0)
	// min.insync.replicas=3: the ISR cannot shrink its way to an answer.
	configs := map[string]*string{"max.message.bytes": kmsg.StringPtr("20971520"), "min.insync.replicas": kmsg.StringPtr("3")}
	if res, err := adm.CreateTopic(ctx, 1, 3, configs, "large"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	cl, _ := c.client(0, kgo.DefaultProduceTopic("large"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchMaxBytes(20<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	value := make([]byte, 12<<20)
	rand.Read(value)
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
		t.Fatalf("acks=all produce of a 12 MiB record: %v", err)
	}
	var fetched int64
	for _, n := range c.nodes {
		fetched += n.Replicas().Stats().FetchedBytes
	}
	if fetched < 2*int64(len(value)) {
		t.Fatalf("followers fetched %d bytes of a %d-byte record", fetched, len(value))
	}
}

// num.replica.fetchers=2: each follower fetches from each leader with up
// to two fetchers, the partitions spread over them by hash (a leader's two
// partitions here, p and p+3, land on different ones); with
// min.insync.replicas=3 an acks=all produce to every partition completes
// only if every follower copies every partition.
func TestSeveralReplicaFetchers(t *testing.T) {
	c := startClusterWith(t, 3, func(cfg *Config) { cfg.Replication.NumFetchers = 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, adm := c.client(0)
	if res, err := adm.CreateTopic(ctx, 6, 3, map[string]*string{"min.insync.replicas": kmsg.StringPtr("3")}, "spread"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	cl, _ := c.client(0, kgo.DefaultProduceTopic("spread"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(6) {
		for range 10 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatalf("acks=all to partition %d: %v", p, err)
			}
		}
	}
	fetchers := 0
	for _, n := range c.nodes {
		fetchers += n.Replicas().Stats().Fetchers
	}
	if fetchers <= 6 { // 3 nodes x 2 leaders each would be 6 with one fetcher per leader
		t.Fatalf("%d fetchers over the cluster, want more than one per leader broker", fetchers)
	}
}
