package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestProduceKeysHeadersPartitions(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"prod"}, Partitions: 3, ReplicationFactor: 1}))

	// Keys pick partitions by murmur2, as Kafka's default partitioner:
	// the same every run, so the summary is golden.
	jenv, jout := testEnv(t, JSON)
	must(t, Produce(ctx, jenv, ProduceOptions{Topic: "prod", Partition: -1, KeySeparator: ":",
		Input: strings.NewReader("alpha:1\nbeta:2\ngamma:3\ndelta:4\nepsilon:5\nalpha:6\n")}))
	golden(t, "produce_keys.json", jout.String())

	// Every codec and acks level, to a chosen partition, with headers.
	out.Reset()
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		for _, acks := range []string{"all", "1"} {
			must(t, Produce(ctx, env, ProduceOptions{Topic: "prod", Partition: 0, Compression: codec, Acks: acks,
				Headers: []kgo.RecordHeader{{Key: "codec", Value: []byte(codec)}},
				Input:   strings.NewReader(fmt.Sprintf("%s-a\n%s-b\n\n", codec, codec))}))
		}
	}
	golden(t, "produce_codecs.txt", out.String())

	// acks 0 gets no offsets back, but the records arrive.
	out.Reset()
	must(t, Produce(ctx, env, ProduceOptions{Topic: "prod", Partition: 1, Acks: "0", Input: strings.NewReader("fire\nforget\n")}))
	if !strings.HasPrefix(out.String(), "Produced 2 records to prod.\n") {
		t.Fatalf("acks 0: %q", out.String())
	}

	// What arrived on partition 0 (no key hashed to it): 3 lines (one empty) x 5 codecs x 2 acks,
	// each with its codec header.
	jout.Reset()
	must(t, Consume(ctx, jenv, ConsumeOptions{Topic: "prod", Partitions: []int32{0}, FromBeginning: true, Timestamp: -1, ToEnd: true}))
	recs := decodeRecords(t, jout.String())
	if len(recs) != 30 {
		t.Fatalf("partition 0 holds %d records, want 30", len(recs))
	}
	for i, r := range recs {
		codec := []string{"none", "gzip", "snappy", "lz4", "zstd"}[i/6]
		want := []string{codec + "-a", codec + "-b", ""}[i%3]
		if r.Value == nil || *r.Value != want || r.Key != nil || len(r.Headers) != 1 || *r.Headers[0].Value != codec {
			t.Fatalf("record %d: %+v, want value %q with header codec=%s", i, r, want, codec)
		}
	}
}

func TestProduceErrors(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"prod-err"}, Partitions: 1, ReplicationFactor: 1}))

	for name, opts := range map[string]ProduceOptions{
		"codec":           {Compression: "brotli"},
		"acks":            {Acks: "2"},
		"acks 1 idem":     {Acks: "1", Idempotent: true},
		"partition":       {Partition: -2},
		"acks 0 with txn": {Acks: "0", TransactionalID: "t"},
	} {
		opts.Topic, opts.Input = "prod-err", strings.NewReader("x\n")
		if opts.Partition == 0 {
			opts.Partition = -1
		}
		if err := Produce(ctx, env, opts); !errors.Is(err, ErrUsage) {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}

	// A line without the separator stops the input there; what came
	// before it is sent.
	out.Reset()
	err := Produce(ctx, env, ProduceOptions{Topic: "prod-err", Partition: -1, KeySeparator: "=",
		Input: strings.NewReader("a=1\nb=2\nno separator\nc=3\n")})
	if err == nil || !strings.Contains(err.Error(), `line 3 has no key separator "="`) {
		t.Fatalf("missing separator: %v", err)
	}
	if !strings.HasPrefix(out.String(), "Produced 2 records to prod-err.\n") {
		t.Fatalf("missing separator printed %q", out.String())
	}

	err = Produce(ctx, env, ProduceOptions{Topic: "prod-err", Partition: -1, MaxLineBytes: 8,
		Input: strings.NewReader("short\nmuch too long a line\n")})
	if err == nil || !strings.Contains(err.Error(), "line 2 is longer than 8 bytes") {
		t.Fatalf("long line: %v", err)
	}

	err = Produce(ctx, env, ProduceOptions{Topic: "prod-err", Partition: 7, Input: strings.NewReader("x\n")})
	if err == nil {
		t.Fatal("produce to a partition that does not exist succeeded")
	}

	// Compacted topics refuse records without keys: the broker's error
	// comes back by name.
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"prod-compact"}, Partitions: 1, ReplicationFactor: 1,
		Configs: map[string]string{"cleanup.policy": "compact"}}))
	err = Produce(ctx, env, ProduceOptions{Topic: "prod-compact", Partition: -1, Input: strings.NewReader("no key\n")})
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("keyless record to a compacted topic: %v, want INVALID_RECORD", err)
	}
}

// decodeRecords parses consume's JSON lines.
func decodeRecords(t *testing.T, s string) []consumedRecord {
	t.Helper()
	var recs []consumedRecord
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if l == "" {
			continue
		}
		var r consumedRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// A transactional produce commits all its lines at once: a read_committed
// consumer sees them, after the commit marker.
func TestProduceTransactional(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"prod-txn"}, Partitions: 1, ReplicationFactor: 1}))
	must(t, Produce(ctx, env, ProduceOptions{Topic: "prod-txn", Partition: -1, TransactionalID: "kzctl-test",
		Input: strings.NewReader("a\nb\nc\n")}))
	out.Reset()
	must(t, Consume(ctx, env, ConsumeOptions{Topic: "prod-txn", FromBeginning: true, Timestamp: -1, ToEnd: true,
		ValueOnly: true, Isolation: "read_committed"}))
	if got := out.String(); got != "a\nb\nc\n" {
		t.Fatalf("read_committed output %q", got)
	}
}

// Like kafka-console-producer, producing to a missing topic creates it
// when the broker allows auto-creation (kzero's default does).
func TestProduceCreatesMissingTopic(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	must(t, Produce(ctx, env, ProduceOptions{Topic: "prod-auto", Partition: -1, Input: strings.NewReader("x\n")}))
	out.Reset()
	must(t, Consume(ctx, env, ConsumeOptions{Topic: "prod-auto", FromBeginning: true, Timestamp: -1, ToEnd: true, ValueOnly: true}))
	if got := out.String(); got != "x\n" {
		t.Fatalf("consumed %q", got)
	}
}
