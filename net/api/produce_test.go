package api

import (
	"crypto/rand"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/record"
)

func batchOf(t *testing.T, codec record.Codec, n, size int) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{Codec: codec, LastOffsetDelta: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1})
	for i := range n {
		v := make([]byte, size)
		rand.Read(v) // incompressible: the batch stays about n*size bytes
		b.Add(&record.Record{OffsetDelta: int32(i), Value: v})
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func produceOf(batches ...[]byte) *kmsg.ProduceRequest {
	r := kmsg.NewPtrProduceRequest()
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "t"
	for i, b := range batches {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = int32(i), b
		rt.Partitions = append(rt.Partitions, rp)
	}
	r.Topics = append(r.Topics, rt)
	return r
}

// A produce goes off the event loop, from the partition where validating
// its batches means decompressing more than offLoopCompressedBytes;
// uncompressed bytes do not count, and several partitions' batches add up.
func TestDecompressesMuch(t *testing.T) {
	small := batchOf(t, record.CodecLZ4, 10, 1024)
	big := batchOf(t, record.CodecZstd, 100, 1024)
	plain := batchOf(t, record.CodecNone, 100, 1024)
	for _, c := range []struct {
		name string
		r    *kmsg.ProduceRequest
		want bool
	}{
		{"one small compressed batch", produceOf(small), false},
		{"one large compressed batch", produceOf(big), true},
		{"a large uncompressed batch", produceOf(plain), false},
		{"seven small compressed batches", produceOf(small, small, small, small, small, small, small), true},
		{"garbage", produceOf([]byte("not a batch")), false},
	} {
		var op produceOp
		got := false
		for _, p := range c.r.Topics[0].Partitions {
			if b, _, err := record.ParseBatch(p.Records); err == nil && op.decompressesMuch(b) {
				got = true
				break
			}
		}
		if got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
