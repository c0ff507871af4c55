package api_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node"
	"kzero/node/nodetest"
)

// metadataFor asks Metadata at version v about one topic by name.
func metadataFor(t *testing.T, conn *kzerotest.Conn, v int16, topic string, allowAutoCreate bool) kmsg.MetadataResponseTopic {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(v)
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = []kmsg.MetadataRequestTopic{rt}
	req.AllowAutoTopicCreation = allowAutoCreate
	resp, err := conn.Request(req)
	if err != nil {
		t.Fatalf("metadata v%d %s: %v", v, topic, err)
	}
	ts := resp.(*kmsg.MetadataResponse).Topics
	if len(ts) != 1 || ts[0].Topic == nil || *ts[0].Topic != topic {
		t.Fatalf("metadata v%d %s: topics %+v", v, topic, ts)
	}
	return ts[0]
}

// awaitTopic repeats the Metadata request, as a client retries, until the
// topic is there with its partitions, and returns it.
func awaitTopic(t *testing.T, ctx context.Context, conn *kzerotest.Conn, v int16, topic string) kmsg.MetadataResponseTopic {
	t.Helper()
	for {
		mt := metadataFor(t, conn, v, topic, true)
		if mt.ErrorCode == 0 {
			return mt
		}
		if mt.ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("metadata v%d %s while it is created: %v", v, topic, kerr.ErrorForCode(mt.ErrorCode))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("metadata v%d: %s never created", v, topic)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// wantCreating checks the answer Kafka 4.x gives the request that starts
// an auto-creation: UNKNOWN_TOPIC_OR_PARTITION, no partitions, no id.
func wantCreating(t *testing.T, v int16, mt kmsg.MetadataResponseTopic, internal bool) {
	t.Helper()
	if mt.ErrorCode != kerr.UnknownTopicOrPartition.Code || len(mt.Partitions) != 0 || mt.TopicID != [16]byte{} || mt.IsInternal != internal {
		t.Fatalf("metadata v%d, first answer for a topic being created: %v, %d partitions, id %x, internal %v",
			v, kerr.ErrorForCode(mt.ErrorCode), len(mt.Partitions), mt.TopicID, mt.IsInternal)
	}
}

// With auto.create.topics.enable, a Metadata request naming a missing
// topic starts its creation and is answered, in every version, as Kafka 4.x
// (KRaft) answers it: UNKNOWN_TOPIC_OR_PARTITION with no partitions; the
// retry finds the topic. v4+ requests that do not allow auto-creation, and
// invalid names, create nothing.
func TestMetadataAutoCreateAnswersUnknownFirst(t *testing.T) {
	b := startBroker(t, t.TempDir(), func(c *node.Config) {
		c.NumPartitions, c.StaticConfigs["num.partitions"] = 3, "3"
		c.Txns.NumPartitions, c.StaticConfigs["transaction.state.log.num.partitions"] = 2, "2"
	})
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn := kzerotest.Dial(t, b.Addr().String())

	for v := int16(0); v <= 13; v++ {
		if v >= 4 {
			// Not allowed: unknown, and not created (the allowed
			// creation below, started after, completes first).
			wantCreating(t, v, metadataFor(t, conn, v, fmt.Sprintf("manual-v%d", v), false), false)
		}
		topic := fmt.Sprintf("auto-v%d", v)
		wantCreating(t, v, metadataFor(t, conn, v, topic, true), false)
		mt := awaitTopic(t, ctx, conn, v, topic)
		if len(mt.Partitions) != 3 || (v >= 10 && mt.TopicID == [16]byte{}) {
			t.Fatalf("metadata v%d: created %s has %d partitions, id %x", v, topic, len(mt.Partitions), mt.TopicID)
		}
		for _, p := range mt.Partitions {
			if p.ErrorCode != 0 || p.Leader != 1 {
				t.Fatalf("metadata v%d: %s partition %d: %v, leader %d", v, topic, p.Partition, kerr.ErrorForCode(p.ErrorCode), p.Leader)
			}
		}
		if v >= 4 {
			if mt := metadataFor(t, conn, v, fmt.Sprintf("manual-v%d", v), false); mt.ErrorCode != kerr.UnknownTopicOrPartition.Code {
				t.Fatalf("metadata v%d: a topic the request did not allow to create exists: %+v", v, mt)
			}
		}
		if mt := metadataFor(t, conn, v, "bad/name", true); mt.ErrorCode != kerr.InvalidTopicException.Code || len(mt.Partitions) != 0 {
			t.Fatalf("metadata v%d: invalid name answered %v", v, kerr.ErrorForCode(mt.ErrorCode))
		}
	}

	// An internal topic is created with its coordinator's layout
	// (transaction.state.log.num.partitions), not num.partitions.
	wantCreating(t, 12, metadataFor(t, conn, 12, "__transaction_state", true), true)
	if mt := awaitTopic(t, ctx, conn, 12, "__transaction_state"); len(mt.Partitions) != 2 || !mt.IsInternal {
		t.Fatalf("__transaction_state created with %d partitions, internal %v", len(mt.Partitions), mt.IsInternal)
	}

	// Clients retry: producers to a new topic succeed.
	cl := nodetest.Client(t, b, kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic("kgo-new"))
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("kgo produce to a new topic: %v", err)
	}
	cfg := sarama.NewConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	p, err := sarama.NewSyncProducer([]string{b.Addr().String()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "sarama-new", Value: sarama.StringEncoder("x")}); err != nil {
		t.Fatalf("sarama produce to a new topic: %v", err)
	}
}

// With auto.create.topics.enable=false nothing is created, whatever the
// request allows.
func TestMetadataAutoCreateDisabled(t *testing.T) {
	b := startBroker(t, t.TempDir(), func(c *node.Config) {
		c.AutoCreateTopics, c.StaticConfigs["auto.create.topics.enable"] = false, "false"
	})
	defer nodetest.Stop(t, b)
	conn := kzerotest.Dial(t, b.Addr().String())
	for _, v := range []int16{0, 3, 4, 12} {
		topic := fmt.Sprintf("never-v%d", v)
		for range 2 {
			if mt := metadataFor(t, conn, v, topic, true); mt.ErrorCode != kerr.UnknownTopicOrPartition.Code || len(mt.Partitions) != 0 {
				t.Fatalf("metadata v%d: %v, %d partitions", v, kerr.ErrorForCode(mt.ErrorCode), len(mt.Partitions))
			}
		}
	}
}
