package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

// TestSegmentioKafkaGo: segmentio/kafka-go, a client with its own protocol
// code (not franz-go's kmsg), against the broker: CreateTopics and
// Metadata; a Writer (acks=all, hash balancer) per compression codec with
// keys and headers; a consumer group Reader that reads them all back and
// commits; OffsetFetch and ListOffsets agreeing with what was written; a
// second Reader of the group resuming after the commits; DeleteTopics.
func TestSegmentioKafkaGo(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), "group.initial.rebalance.delay.ms", "0")
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	addr := b.Addr().String()
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}
	const topic, partitions = "segmentio", 3

	cr, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1},
	}})
	if err != nil || cr.Errors[topic] != nil {
		t.Fatalf("create topic: %v %v", err, cr)
	}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(md.Topics) != 1 || len(md.Topics[0].Partitions) != partitions || len(md.Brokers) != 1 {
		t.Fatalf("metadata: %+v %v", md, err)
	}

	// 100 records per codec, uncompressed first.
	codecs := []struct {
		name  string
		codec kafka.Compression
	}{{"none", 0}, {"gzip", kafka.Gzip}, {"snappy", kafka.Snappy}, {"lz4", kafka.Lz4}, {"zstd", kafka.Zstd}}
	want := map[string]string{}
	for _, c := range codecs {
		w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
			Compression: c.codec, BatchTimeout: time.Millisecond, BatchSize: 50}
		msgs := make([]kafka.Message, 100)
		for i := range msgs {
			k := fmt.Sprintf("%s-%d", c.name, i)
			msgs[i] = kafka.Message{Key: []byte(k), Value: []byte("value of " + k),
				Headers: []kafka.Header{{Key: "codec", Value: []byte(c.name)}}}
			want[k] = "value of " + k
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			t.Fatalf("%s: write: %v", c.name, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}

	const group = "segmentio-group"
	read := func(n int) map[string]kafka.Message {
		t.Helper()
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, GroupID: group, Topic: topic,
			StartOffset: kafka.FirstOffset, MaxWait: 100 * time.Millisecond})
		defer r.Close()
		got := map[string]kafka.Message{}
		for len(got) < n {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				t.Fatalf("fetch after %d of %d: %v", len(got), n, err)
			}
			if _, dup := got[string(m.Key)]; dup {
				t.Fatalf("record %q read twice", m.Key)
			}
			got[string(m.Key)] = m
			if err := r.CommitMessages(ctx, m); err != nil {
				t.Fatalf("commit: %v", err)
			}
		}
		return got
	}
	got := read(len(want))
	for k, v := range want {
		m, ok := got[k]
		if !ok || string(m.Value) != v || len(m.Headers) != 1 || m.Headers[0].Key != "codec" {
			t.Fatalf("record %q: %+v (present %v)", k, m, ok)
		}
	}

	// The group's committed offsets are the partitions' ends.
	ends, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		topic: {kafka.LastOffsetOf(0), kafka.LastOffsetOf(1), kafka.LastOffsetOf(2)}}})
	if err != nil {
		t.Fatal(err)
	}
	end := map[int]int64{}
	var total int64
	for _, p := range ends.Topics[topic] {
		if p.Error != nil {
			t.Fatalf("list offsets: %v", p.Error)
		}
		end[p.Partition] = p.LastOffset
		total += p.LastOffset
	}
	if total != int64(len(want)) {
		t.Fatalf("partition ends %v sum to %d, want %d", end, total, len(want))
	}
	of, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1, 2}}})
	if err != nil || of.Error != nil {
		t.Fatalf("offset fetch: %v %v", err, of)
	}
	for _, p := range of.Topics[topic] {
		if p.Error != nil || p.CommittedOffset != end[p.Partition] {
			t.Fatalf("partition %d: committed %d, end %d (%v)", p.Partition, p.CommittedOffset, end[p.Partition], p.Error)
		}
	}

	// A new member of the group starts where the commits left off.
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	if err := w.WriteMessages(ctx, kafka.Message{Key: []byte("after"), Value: []byte("the commits")}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if later := read(1); string(later["after"].Value) != "the commits" {
		t.Fatalf("after the commits: %+v", later)
	}

	dr, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err != nil || dr.Errors[topic] != nil {
		t.Fatalf("delete topic: %v %v", err, dr)
	}
}
