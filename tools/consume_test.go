package tools

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// seedConsume makes a topic with two partitions: five keyed records with a
// header in partition 0, three with null keys (and one null-free binary
// value) in partition 1.
func seedConsume(t *testing.T, topic string) {
	t.Helper()
	ctx := testCtx(t)
	env, _ := testEnv(t, Text)
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{topic}, Partitions: 2, ReplicationFactor: 1}))
	must(t, Produce(ctx, env, ProduceOptions{Topic: topic, Partition: 0, KeySeparator: "\t",
		Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("test")}},
		Input:   strings.NewReader("k1\tv1\nk2\tv2\nk3\tv3\nk4\tv4\nk5\tv5\n")}))
	must(t, Produce(ctx, env, ProduceOptions{Topic: topic, Partition: 1,
		Input: strings.NewReader("one\ntwo\n\xff\xfebinary\n")}))
}

func TestConsumeOutputs(t *testing.T) {
	seedConsume(t, "cons")
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	jenv, jout := testEnv(t, JSON)

	must(t, Consume(ctx, env, ConsumeOptions{Topic: "cons", Partitions: []int32{0}, FromBeginning: true, Timestamp: -1, ToEnd: true}))
	golden(t, "consume_p0.txt", normalize(out.String()))
	must(t, Consume(ctx, jenv, ConsumeOptions{Topic: "cons", Partitions: []int32{1}, FromBeginning: true, Timestamp: -1, ToEnd: true}))
	golden(t, "consume_p1.json", normalize(jout.String()))

	// Both partitions: the order between them varies, so compare sorted.
	out.Reset()
	must(t, Consume(ctx, env, ConsumeOptions{Topic: "cons", Offset: "earliest", Timestamp: -1, ToEnd: true, ValueOnly: true}))
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	slices.Sort(got)
	want := []string{"one", "two", "v1", "v2", "v3", "v4", "v5", "\xff\xfebinary"}
	if !slices.Equal(got, want) {
		t.Fatalf("values %q, want %q", got, want)
	}
}

func TestConsumeStartAndStop(t *testing.T) {
	seedConsume(t, "cons-pos")
	ctx := testCtx(t)
	jenv, jout := testEnv(t, JSON)
	offsets := func(opts ConsumeOptions) []int64 {
		t.Helper()
		jout.Reset()
		opts.Topic = "cons-pos"
		must(t, Consume(ctx, jenv, opts))
		var offs []int64
		for _, r := range decodeRecords(t, jout.String()) {
			offs = append(offs, r.Offset)
		}
		return offs
	}
	p0 := []int32{0}
	if got := offsets(ConsumeOptions{Partitions: p0, Offset: "2", Timestamp: -1, ToEnd: true}); !slices.Equal(got, []int64{2, 3, 4}) {
		t.Errorf("--offset 2: %v", got)
	}
	if got := offsets(ConsumeOptions{Partitions: p0, FromBeginning: true, Timestamp: -1, Count: 2}); !slices.Equal(got, []int64{0, 1}) {
		t.Errorf("--count 2: %v", got)
	}
	if got := offsets(ConsumeOptions{Partitions: p0, FromBeginning: true, Timestamp: -1, ToEnd: true, Isolation: "read_committed"}); len(got) != 5 {
		t.Errorf("read_committed: %v", got)
	}
	if got := offsets(ConsumeOptions{Partitions: p0, Timestamp: -1, ToEnd: true}); len(got) != 0 {
		t.Errorf("from the end: %v", got)
	}
	if got := offsets(ConsumeOptions{Partitions: p0, Offset: "latest", Timestamp: -1, IdleTimeout: 100 * time.Millisecond}); len(got) != 0 {
		t.Errorf("idle from latest: %v", got)
	}

	// By time: every record at or after the last one's timestamp, which
	// includes the last.
	jout.Reset()
	must(t, Consume(ctx, jenv, ConsumeOptions{Topic: "cons-pos", Partitions: p0, FromBeginning: true, Timestamp: -1, ToEnd: true}))
	all := decodeRecords(t, jout.String())
	last := all[len(all)-1]
	jout.Reset()
	must(t, Consume(ctx, jenv, ConsumeOptions{Topic: "cons-pos", Partitions: p0, Timestamp: last.Timestamp, ToEnd: true}))
	byTime := decodeRecords(t, jout.String())
	if len(byTime) == 0 || byTime[len(byTime)-1].Offset != last.Offset {
		t.Fatalf("--timestamp %d: %+v", last.Timestamp, byTime)
	}
	for _, r := range byTime {
		if r.Timestamp < last.Timestamp {
			t.Fatalf("--timestamp %d returned offset %d at %d", last.Timestamp, r.Offset, r.Timestamp)
		}
	}
	if got := offsets(ConsumeOptions{Partitions: p0, Timestamp: last.Timestamp + 3600_000, ToEnd: true}); len(got) != 0 {
		t.Errorf("--timestamp in the future: %v", got)
	}

	// An interrupt (ctx cancelled) ends consuming without an error.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		env, _ := testEnv(t, Text)
		done <- Consume(cctx, env, ConsumeOptions{Topic: "cons-pos", Timestamp: -1})
	}()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("cancelled consume: %v", err)
	}
}

func TestConsumeErrors(t *testing.T) {
	seedConsume(t, "cons-err")
	ctx := testCtx(t)
	env, _ := testEnv(t, Text)
	err := Consume(ctx, env, ConsumeOptions{Topic: "no-such-topic", Timestamp: -1, ToEnd: true})
	if !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown topic: %v", err)
	}
	err = Consume(ctx, env, ConsumeOptions{Topic: "cons-err", Partitions: []int32{9}, Timestamp: -1, ToEnd: true})
	if err == nil || !strings.Contains(err.Error(), "partition 9 does not exist (the topic has 2)") {
		t.Errorf("unknown partition: %v", err)
	}
	for name, opts := range map[string]ConsumeOptions{
		"two starts":      {FromBeginning: true, Offset: "3", Timestamp: -1},
		"time and offset": {Offset: "1", Timestamp: 5},
		"bad offset":      {Offset: "-4", Timestamp: -1},
		"isolation":       {Isolation: "serializable", Timestamp: -1},
		"group partition": {Group: "g", Partitions: []int32{0}, Timestamp: -1},
		"count":           {Count: -1, Timestamp: -1},
	} {
		opts.Topic = "cons-err"
		if err := Consume(ctx, env, opts); !errors.Is(err, ErrUsage) {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
}

// A group consumer stopped by --count commits what it printed, not all it
// fetched: the next one goes on from there.
func TestConsumeGroupCountCommitsPrinted(t *testing.T) {
	seedConsume(t, "cons-group")
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	must(t, Consume(ctx, env, ConsumeOptions{Topic: "cons-group", Group: "counted", Offset: "earliest", Timestamp: -1, Count: 3, ValueOnly: true}))
	printed := strings.Count(out.String(), "\n")
	if printed != 3 {
		t.Fatalf("printed %d records, want 3", printed)
	}
	total := int64(0)
	for _, offs := range committed(t, "counted") {
		for _, o := range offs {
			total += o
		}
	}
	if total != 3 {
		t.Fatalf("committed offsets add up to %d, want the 3 records printed (%v)", total, committed(t, "counted"))
	}
}
