package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"kzero/kzerotest"
)

// IBM/sarama, configured as a Kafka 4.x client, produces with acks=all in
// each compression codec through an idempotent sync producer and reads
// every record back with partition consumers, each at the offset it was
// acknowledged at.
//
// The producer is idempotent because the check is exact: a non-idempotent
// sarama producer can legitimately leave a duplicate in the log. Sarama's
// Broker.Open marks the broker opened before it takes the connection lock,
// so a second partition producer racing the first can send on the broker
// before the dial and get "broker not connected"; sarama then refreshes
// metadata, deregisters and closes that broker, cutting the connection
// under a produce the broker had already appended, and resends the batch
// (issue 11: "unexpected offset 20" was that first copy). With idempotence
// the resend is a duplicate the broker answers with the first copy's
// offsets. integration_produce_stress_test.go covers non-idempotent,
// pipelined producers.
func TestSaramaProduceConsumeEveryCodec(t *testing.T) {
	for _, version := range []sarama.KafkaVersion{sarama.V4_0_0_0, sarama.MaxVersion} {
		t.Run(version.String(), func(t *testing.T) { saramaRoundTrip(t, version) })
	}
}

func saramaRoundTrip(t *testing.T, version sarama.KafkaVersion) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, partitions = "sarama", 2
	kzerotest.CreateTopic(t, ctx, newClient(t, b), topic, partitions, nil)
	addrs := []string{b.Addr().String()}

	type sent struct{ key, value, codec string }
	want := map[int32]map[int64]sent{0: {}, 1: {}}
	codecs := []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP,
		sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD}
	for _, codec := range codecs {
		cfg := sarama.NewConfig()
		cfg.Version = version
		cfg.ClientID = "kzero-sarama-test"
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		cfg.Producer.Return.Successes = true
		cfg.Producer.Idempotent = true
		cfg.Net.MaxOpenRequests = 1 // sarama's rule for idempotence
		cfg.Producer.Compression = codec
		cfg.Producer.Partitioner = sarama.NewHashPartitioner
		cfg.Net.DialTimeout = 10 * time.Second
		p, err := sarama.NewSyncProducer(addrs, cfg)
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		var msgs []*sarama.ProducerMessage
		for i := 0; i < 40; i++ {
			msgs = append(msgs, &sarama.ProducerMessage{
				Topic:   topic,
				Key:     sarama.StringEncoder(fmt.Sprintf("key-%d", i)),
				Value:   sarama.StringEncoder(fmt.Sprintf("%s value %d %0*d", codec, i, i*20, 0)),
				Headers: []sarama.RecordHeader{{Key: []byte("codec"), Value: []byte(codec.String())}},
			})
		}
		if err := p.SendMessages(msgs); err != nil {
			p.Close()
			t.Fatalf("%s: %v", codec, err)
		}
		// One more on its own, as SendMessage sends it.
		one := &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("single"), Value: sarama.StringEncoder(codec.String() + " single")}
		if _, _, err := p.SendMessage(one); err != nil {
			p.Close()
			t.Fatalf("%s single: %v", codec, err)
		}
		msgs = append(msgs, one)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			k, _ := m.Key.Encode()
			v, _ := m.Value.Encode()
			if _, dup := want[m.Partition][m.Offset]; dup {
				t.Fatalf("offset %d of partition %d assigned twice", m.Offset, m.Partition)
			}
			want[m.Partition][m.Offset] = sent{string(k), string(v), codec.String()}
		}
	}

	cfg := sarama.NewConfig()
	cfg.Version = version
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	c, err := sarama.NewConsumer(addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for part := int32(0); part < partitions; part++ {
		pc, err := c.ConsumePartition(topic, part, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(want[part]); n++ {
			select {
			case m := <-pc.Messages():
				w, ok := want[part][m.Offset]
				if !ok {
					t.Fatalf("partition %d: unexpected offset %d", part, m.Offset)
				}
				if string(m.Key) != w.key || string(m.Value) != w.value {
					t.Fatalf("partition %d offset %d: %q=%q, want %q=%q", part, m.Offset, m.Key, m.Value, w.key, w.value)
				}
				if w.key != "single" && (len(m.Headers) != 1 || string(m.Headers[0].Value) != w.codec) {
					t.Fatalf("partition %d offset %d: headers %v", part, m.Offset, m.Headers)
				}
				if m.Offset != int64(n) {
					t.Fatalf("partition %d: record %d has offset %d", part, n, m.Offset)
				}
			case err := <-pc.Errors():
				t.Fatalf("partition %d: %v", part, err)
			case <-ctx.Done():
				t.Fatalf("partition %d: %d of %d records before the deadline", part, n, len(want[part]))
			}
		}
		if hwm := pc.HighWaterMarkOffset(); hwm != int64(len(want[part])) {
			t.Errorf("partition %d: high watermark %d, want %d", part, hwm, len(want[part]))
		}
		if err := pc.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
