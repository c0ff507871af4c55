package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
)

// Broker configs as Kafka describes and alters them: DescribeConfigs lists
// every config the broker knows, at its default when unset (sarama's
// functional suite reads log.cleaner.backoff.ms, never set, then sets it);
// AlterConfigs takes the dynamic ones, which the broker applies (the log
// cleaner wakes at the new backoff), and refuses the others with Kafka's
// INVALID_REQUEST "Cannot update these configs dynamically".
func TestDynamicBrokerConfigs(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), "log.cleaner.backoff.ms", "3600000")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newClient(t, b, kgo.ProducerLinger(0))
	adm := kadm.NewClient(cl)
	id := strconv.Itoa(int(b.ID()))

	describe := func() kadm.ResourceConfig {
		t.Helper()
		rcs, err := adm.DescribeBrokerConfigs(ctx, b.ID())
		if err != nil || rcs[0].Err != nil {
			t.Fatalf("describe: %v %v", err, rcs)
		}
		return rcs[0]
	}
	rc := describe()
	wantConfig(t, findConfig(t, rc, "log.cleaner.backoff.ms"), "3600000", kmsg.ConfigSourceStaticBrokerConfig)
	wantConfig(t, findConfig(t, rc, "log.cleaner.dedupe.buffer.size"), "134217728", kmsg.ConfigSourceDefaultConfig)
	wantConfig(t, findConfig(t, rc, "delete.topic.enable"), "true", kmsg.ConfigSourceDefaultConfig)
	wantConfig(t, findConfig(t, rc, "num.io.threads"), "8", kmsg.ConfigSourceDefaultConfig)
	if c := findConfig(t, rc, "sasl.kerberos.service.name"); c.Value != nil || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("sasl.kerberos.service.name = %v (%v), want null default", c.Value, c.Source)
	}

	// Types and read-only flags, as a raw request sees them.
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, id
	res.ConfigNames = []string{"log.cleaner.backoff.ms", "log.cleaner.dedupe.buffer.size", "node.id", "log.retention.ms"}
	req.Resources = append(req.Resources, res)
	resp := kzerotest.BrokerRequest[*kmsg.DescribeConfigsResponse](t, ctx, cl, req)
	want := map[string]struct {
		typ      kmsg.ConfigType
		readOnly bool
	}{
		"log.cleaner.backoff.ms":         {kmsg.ConfigTypeLong, false},
		"log.cleaner.dedupe.buffer.size": {kmsg.ConfigTypeLong, true},
		"node.id":                        {kmsg.ConfigTypeInt, true},
		"log.retention.ms":               {kmsg.ConfigTypeLong, false},
	}
	if got := resp.Resources[0].Configs; len(got) != len(want) {
		t.Fatalf("configs %+v", got)
	}
	for _, c := range resp.Resources[0].Configs {
		if w := want[c.Name]; c.ConfigType != w.typ || c.ReadOnly != w.readOnly {
			t.Fatalf("%s: type %v read-only %v, want %v %v", c.Name, c.ConfigType, c.ReadOnly, w.typ, w.readOnly)
		}
	}

	// A static-only config is refused, per broker and cluster-wide.
	for _, set := range [][]int32{{b.ID()}, nil} {
		ares, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "node.id", Value: kadm.StringPtr("77")}}, set...)
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(ares[0].Err, kerr.InvalidRequest) || !strings.Contains(ares[0].ErrMessage, "Cannot update these configs dynamically") {
			t.Fatalf("alter node.id on %v: %v %q", set, ares[0].Err, ares[0].ErrMessage)
		}
	}
	wantConfig(t, findConfig(t, describe(), "node.id"), id, kmsg.ConfigSourceStaticBrokerConfig)

	// A config Kafka updates at runtime but kzero has no use for (Kerberos)
	// is stored as Kafka stores it (librdkafka's admin test sets this one).
	ares, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "sasl.kerberos.min.time.before.relogin", Value: kadm.StringPtr("58000")}}, b.ID())
	if err != nil || ares[0].Err != nil {
		t.Fatalf("alter sasl.kerberos.min.time.before.relogin: %v %v", err, ares)
	}
	wantConfig(t, findConfig(t, describe(), "sasl.kerberos.min.time.before.relogin"), "58000", kmsg.ConfigSourceDynamicBrokerConfig)

	// A compacted topic whose every produce rolls a segment: the cleaner,
	// waiting an hour, leaves its duplicates until the backoff is cut.
	topic := "dyn-compacted"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "segment.ms": kadm.StringPtr("1"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
	}, topic); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		r := &kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte(strconv.Itoa(i))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	count := func() int {
		t.Helper()
		c := newClient(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		defer c.Close()
		ends, err := kadm.NewClient(c).ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		end, _ := ends.Lookup(topic, 0)
		got := 0
		for {
			fs := c.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				t.Fatal(err)
			}
			last := int64(-1)
			fs.EachRecord(func(r *kgo.Record) { got++; last = r.Offset })
			if last+1 >= end.Offset {
				return got
			}
		}
	}
	if got := count(); got != n {
		t.Fatalf("before the backoff changed: %d records, want all %d", got, n)
	}
	ares, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.cleaner.backoff.ms", Value: kadm.StringPtr("50")}}, b.ID())
	if err != nil || ares[0].Err != nil {
		t.Fatalf("alter log.cleaner.backoff.ms: %v %v", err, ares)
	}
	wantConfig(t, findConfig(t, describe(), "log.cleaner.backoff.ms"), "50", kmsg.ConfigSourceDynamicBrokerConfig)
	for got := count(); got == n; got = count() {
		if ctx.Err() != nil {
			t.Fatal("the cleaner never ran after log.cleaner.backoff.ms changed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
