package node

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest/await"
	"kzero/record"
)

// benchNode starts one combined node for a benchmark and creates topic
// with partitions partitions; it returns the node's address.
func benchNode(b *testing.B, topic string, partitions int32) string {
	return benchNodeWith(b, nil, topic, partitions, nil)
}

// benchNodeWith is benchNode with the node's config changed by mutate
// (if not nil) and the topic created with configs.
func benchNodeWith(b *testing.B, mutate func(*Config), topic string, partitions int32, configs map[string]*string) string {
	b.Helper()
	voters := map[int32]string{1: freeAddrs(b, 1)[0]}
	cfg := nodeConfig(1, b.TempDir(), voters)
	if mutate != nil {
		mutate(&cfg)
	}
	n, err := Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		n.Stop(ctx)
	})
	addr := n.Addr().String()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if res, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, configs, topic); err != nil || res.Err != nil {
		b.Fatalf("create: %v %v", err, res.Err)
	}
	await.TrueCtx(b, ctx, func() bool { return n.Controller().Image().Topic(topic) != nil }, "the topic in the image")
	return addr
}

func benchConn(b *testing.B, addr string) *rawConn {
	b.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return &rawConn{c: c, buf: make([]byte, 4<<20)}
}

// benchBatch is one uncompressed batch of n records of size bytes.
func benchBatch(b testing.TB, n, size int) []byte {
	b.Helper()
	var bb record.Builder
	bb.Reset(record.BatchHeader{LastOffsetDelta: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: time.Now().UnixMilli()})
	for i := range n {
		bb.Add(&record.Record{OffsetDelta: int32(i), Value: make([]byte, size)})
	}
	out, err := bb.AppendTo(nil)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// produceRequest is an encoded acks=1 Produce v11 of batch to partitions
// 0..partitions-1 of topic.
func produceRequest(topic string, partitions int32, batch []byte) []byte {
	parts := make([]int32, partitions)
	for i := range parts {
		parts[i] = int32(i)
	}
	return produceRequestTo(topic, batch, parts...)
}

// produceRequestTo is an encoded acks=1 Produce v11 of batch to the
// partitions of topic.
func produceRequestTo(topic string, batch []byte, partitions ...int32) []byte {
	pr := kmsg.NewPtrProduceRequest()
	pr.SetVersion(11)
	pr.Acks, pr.TimeoutMillis = 1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = topic
	for _, p := range partitions {
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Partition, pp.Records = p, batch
		pt.Partitions = append(pt.Partitions, pp)
	}
	pr.Topics = append(pr.Topics, pt)
	return encodeRequest(pr, 1)
}

// BenchmarkServeProduce is a produce (acks=1) served by an in-process
// node over loopback, one request in flight: request decode, the produce
// handler, the replica and log append, and the response.
func BenchmarkServeProduce(b *testing.B) {
	for _, c := range []struct {
		partitions    int32
		records, size int
	}{{1, 16, 1024}, {16, 4, 256}} {
		b.Run(fmt.Sprintf("partitions=%d/batch=%dB", c.partitions, c.records*c.size), func(b *testing.B) {
			addr := benchNode(b, "bench", c.partitions)
			rc := benchConn(b, addr)
			req := produceRequest("bench", c.partitions, benchBatch(b, c.records, c.size))
			for range 100 {
				rc.roundTrip(b, req)
			}
			checkProduced(b, rc.roundTrip(b, req))
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rc.roundTrip(b, req)
			}
		})
	}
}

// BenchmarkServeParkedFetch is a consumer fetch that waits for data (it
// parks in the replica purgatory) and is woken by a produce on another
// connection: the parked fetch's registration, wake-up, read and answer.
func BenchmarkServeParkedFetch(b *testing.B) {
	addr := benchNode(b, "bench", 1)
	pc, fc := benchConn(b, addr), benchConn(b, addr)
	const records = 4
	produce := produceRequest("bench", 1, benchBatch(b, records, 256))
	fr := kmsg.NewPtrFetchRequest()
	fr.SetVersion(12)
	fr.MaxWaitMillis, fr.MinBytes, fr.MaxBytes = 10000, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "bench"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	fp.CurrentLeaderEpoch = -1
	ft.Partitions = append(ft.Partitions, fp)
	fr.Topics = append(fr.Topics, ft)
	offset := int64(0)
	for range 20 {
		pc.roundTrip(b, produce)
		offset += records
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		fr.Topics[0].Partitions[0].FetchOffset = offset
		fetch := encodeRequest(fr, 2)
		if _, err := fc.c.Write(fetch); err != nil {
			b.Fatal(err)
		}
		// The fetch parks (nothing at offset yet) unless the produce
		// gets there first; either way it is answered with the batch.
		pc.roundTrip(b, produce)
		offset += records
		fc.read(b)
	}
}

// checkProduced fails b unless the produce response resp (v11: the
// correlation id and the flexible header's tags first) has every
// partition appended.
func checkProduced(b *testing.B, resp []byte) {
	b.Helper()
	r := kmsg.NewPtrProduceResponse()
	r.SetVersion(11)
	if err := r.ReadFrom(resp[5:]); err != nil {
		b.Fatal(err)
	}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				b.Fatalf("partition %d: error %d", p.Partition, p.ErrorCode)
			}
		}
	}
}
