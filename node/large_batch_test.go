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
