package node

import (
	"context"
	"crypto/rand"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/record"
)

// A produce whose second partition takes its compressed bytes past what
// the event loop validates (net/api offLoopCompressedBytes) appends the
// first partition on the loop and the rest on a goroutine: every
// partition is appended, answered in the request's order, and the
// connection's next request is answered after it.
func TestProduceContinuesOffTheLoop(t *testing.T) {
	c := startCluster(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, adm := c.client(0)
	if res, err := adm.CreateTopic(ctx, 3, 1, nil, "offloop"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	c.waitTopic(ctx, 0, "offloop")
	conn, err := net.Dial("tcp", c.nodes[0].Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rc := &rawConn{c: conn, buf: make([]byte, 1<<20)}

	batch := func(codec record.Codec, n int) []byte {
		var b record.Builder
		b.Reset(record.BatchHeader{Codec: codec, BaseTimestamp: time.Now().UnixMilli(), LastOffsetDelta: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1})
		for i := range n {
			v := make([]byte, 1024)
			rand.Read(v) // incompressible
			b.Add(&record.Record{OffsetDelta: int32(i), Value: v})
		}
		out, err := b.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	records := [][]byte{batch(record.CodecLZ4, 8), batch(record.CodecZstd, 24), batch(record.CodecNone, 4)}
	pr := kmsg.NewPtrProduceRequest()
	pr.SetVersion(11)
	pr.Acks, pr.TimeoutMillis = 1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "offloop"
	for i, r := range records {
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Partition, pp.Records = int32(i), r
		pt.Partitions = append(pt.Partitions, pp)
	}
	pr.Topics = append(pr.Topics, pt)
	produce := encodeRequest(pr, 1)
	mr := kmsg.NewPtrMetadataRequest()
	mr.SetVersion(12)
	metadata := encodeRequest(mr, 2)
	// Both requests at once: the second waits for the first's answer.
	if _, err := conn.Write(append(append([]byte(nil), produce...), metadata...)); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		resp := kmsg.NewPtrProduceResponse()
		resp.SetVersion(11)
		if err := resp.ReadFrom(rc.read(t)[5:]); err != nil {
			t.Fatal(err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 3 {
			t.Fatalf("round %d: response %+v", round, resp.Topics)
		}
		for i, p := range resp.Topics[0].Partitions {
			if p.Partition != int32(i) || p.ErrorCode != 0 || p.BaseOffset != int64(round)*int64(record.Batch(records[i]).NumRecords()) {
				t.Fatalf("round %d: partition %d answered %+v", round, i, p)
			}
		}
		if round == 0 {
			if corr := rc.read(t); len(corr) < 4 || corr[3] != 2 {
				t.Fatalf("the metadata answer came as %x", corr[:min(len(corr), 8)])
			}
			if _, err := conn.Write(produce); err != nil {
				t.Fatal(err)
			}
		}
	}
}
