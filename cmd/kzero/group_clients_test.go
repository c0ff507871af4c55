package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest"
)

// Consumer groups of clients other than franz-go: IBM/sarama and kcat
// (librdkafka).

// saramaMember counts what one sarama group member consumes.
type saramaMember struct {
	name string
	l    *ledger
}

func (saramaMember) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (saramaMember) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (m saramaMember) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		m.l.addOne(m.name, sess.GenerationID(), string(msg.Key), msg.Partition, msg.Offset)
		sess.MarkMessage(msg, "")
	}
	return nil
}

// Two sarama consumer group members, as a Kafka 2.1 client (the oldest
// API versions Kafka 4 serves) and as a 4.0 one, share a topic: every
// record consumed, once per generation, and committed to the end.
func TestSaramaConsumerGroup(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	for _, c := range []struct {
		version  sarama.KafkaVersion
		strategy sarama.BalanceStrategy
	}{
		{sarama.V2_1_0_0, sarama.NewBalanceStrategyRange()},
		{sarama.V4_0_0_0, sarama.NewBalanceStrategySticky()},
	} {
		t.Run(c.version.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			topic, group := "sarama-"+c.version.String(), "sarama-group-"+c.version.String()
			prod := newClient(t, b, kgo.ProducerLinger(0))
			kzerotest.CreateTopic(t, ctx, prod, topic, 4, nil)
			cfg := sarama.NewConfig()
			cfg.Version = c.version
			cfg.ClientID = "kzero-sarama-group"
			cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
			cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
			cfg.Consumer.Group.Session.Timeout = 6 * time.Second
			cfg.Consumer.Group.Heartbeat.Interval = 200 * time.Millisecond
			cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{c.strategy}
			cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
			l := newLedger()
			runCtx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			var groups []sarama.ConsumerGroup
			start := func(name string) {
				g, err := sarama.NewConsumerGroup([]string{b.Addr().String()}, group, cfg)
				if err != nil {
					t.Fatal(err)
				}
				groups = append(groups, g)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for runCtx.Err() == nil {
						if err := g.Consume(runCtx, []string{topic}, saramaMember{name, l}); err != nil && runCtx.Err() == nil {
							t.Errorf("%s: %v", name, err)
							return
						}
					}
				}()
			}
			start("a")
			produceKeys(t, ctx, prod, topic, 0, 200)
			l.waitDistinct(t, ctx, 100)
			start("b")
			adm := kadm.NewClient(prod)
			waitGroup(t, ctx, adm, group, func(g kadm.DescribedGroup) bool {
				return g.State == "Stable" && len(g.Members) == 2 && ownsPartitions(g, 0) && ownsPartitions(g, 1)
			})
			produceKeys(t, ctx, prod, topic, 200, 400)
			l.waitDistinct(t, ctx, 400)
			if n := l.consumedBy("b"); n == 0 {
				t.Fatal("the second member consumed nothing")
			}
			stop()
			wg.Wait()
			for _, g := range groups {
				if err := g.Close(); err != nil {
					t.Fatal(err)
				}
			}
			l.check(t, 400)
			wantCommittedAtEnd(t, ctx, adm, group, topic)
		})
	}
}

// kcat's balanced consumer (-G, librdkafka's KafkaConsumer) reads a topic
// to its end and commits; a second run in the same group reads only what
// was produced since.
func TestKcatBalancedConsumer(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed (.ci/run installs it)")
	}
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, group = "kcat-group-topic", "kcat-group"
	prod := newClient(t, b, kgo.ProducerLinger(0))
	kzerotest.CreateTopic(t, ctx, prod, topic, 3, nil)
	consume := func() []string {
		t.Helper()
		cmd := exec.CommandContext(ctx, kcat, "-b", b.Addr().String(), "-G", group, "-e", "-q",
			"-X", "auto.offset.reset=earliest", "-X", "session.timeout.ms=6000", "-f", "%k\n", topic)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("kcat -G: %v\n%s", err, stderr.String())
		}
		return strings.Fields(out.String())
	}
	want := func(got []string, from, to int) {
		t.Helper()
		seen := map[string]bool{}
		for _, k := range got {
			seen[k] = true
		}
		if len(got) != to-from || len(seen) != to-from {
			t.Fatalf("kcat consumed %d records (%d distinct), want %d", len(got), len(seen), to-from)
		}
		for i := from; i < to; i++ {
			if k := fmt.Sprintf("k%05d", i); !seen[k] {
				t.Fatalf("kcat did not consume %s", k)
			}
		}
	}
	produceKeys(t, ctx, prod, topic, 0, 300)
	want(consume(), 0, 300)
	adm := kadm.NewClient(prod)
	wantCommittedAtEnd(t, ctx, adm, group, topic)
	produceKeys(t, ctx, prod, topic, 300, 400)
	want(consume(), 300, 400)
	wantCommittedAtEnd(t, ctx, adm, group, topic)
}
