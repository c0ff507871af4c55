package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestTopicLifecycle(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)

	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"life-a", "life-b"}, Partitions: 2, ReplicationFactor: 1,
		Configs: map[string]string{"cleanup.policy": "compact", "retention.ms": "86400000"}}))
	golden(t, "topic_create.txt", out.String())

	// Creating one that exists fails with the Kafka error's name, and still
	// creates the other.
	out.Reset()
	err := TopicCreate(ctx, env, TopicSpec{Names: []string{"life-a", "life-c"}, Partitions: 1, ReplicationFactor: 1})
	if !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("create existing topic: %v, want TOPIC_ALREADY_EXISTS", err)
	}
	if lines := ErrorLines(err); len(lines) != 1 || !strings.HasPrefix(lines[0], "create topic life-a: TOPIC_ALREADY_EXISTS: ") {
		t.Fatalf("error lines %q", lines)
	}
	if out.String() != "Created topic life-c.\n" {
		t.Fatalf("partial create printed %q", out.String())
	}

	out.Reset()
	must(t, TopicDescribe(ctx, env, []string{"life-a"}))
	golden(t, "topic_describe.txt", normalize(out.String()))

	jenv, jout := testEnv(t, JSON)
	must(t, TopicDescribe(ctx, jenv, []string{"life-a", "life-c"}))
	golden(t, "topic_describe.json", normalize(jout.String()))

	// alter-config: set one, delete one, then describe shows the result.
	out.Reset()
	must(t, TopicAlterConfig(ctx, env, []string{"life-a"}, map[string]string{"retention.ms": "1000"}, []string{"cleanup.policy"}))
	if out.String() != "Altered configs of topic life-a.\n" {
		t.Fatalf("alter-config printed %q", out.String())
	}
	jout.Reset()
	must(t, TopicDescribe(ctx, jenv, []string{"life-a"}))
	var desc []topicDescription
	must(t, json.Unmarshal(jout.Bytes(), &desc))
	if c := desc[0].Configs; len(c) != 1 || c["retention.ms"] == nil || *c["retention.ms"] != "1000" {
		t.Fatalf("configs after alter: %v", c)
	}
	err = TopicAlterConfig(ctx, env, []string{"life-a"}, map[string]string{"no.such.config": "1"}, nil)
	if !errors.Is(err, kerr.InvalidConfig) && !errors.Is(err, kerr.InvalidRequest) {
		t.Fatalf("alter unknown config: %v", err)
	}

	// add-partitions by count and to a total.
	out.Reset()
	must(t, TopicAddPartitions(ctx, env, []string{"life-b"}, 1, 0))
	must(t, TopicAddPartitions(ctx, env, []string{"life-b"}, 0, 5))
	if out.String() != "Added partitions to topic life-b.\nAdded partitions to topic life-b.\n" {
		t.Fatalf("add-partitions printed %q", out.String())
	}
	err = TopicAddPartitions(ctx, env, []string{"life-b"}, 0, 2)
	if !errors.Is(err, kerr.InvalidPartitions) {
		t.Fatalf("shrinking partitions: %v, want INVALID_PARTITIONS", err)
	}
	for _, bad := range [][2]int{{0, 0}, {1, 3}} {
		if err := TopicAddPartitions(ctx, env, []string{"life-b"}, bad[0], bad[1]); !errors.Is(err, ErrUsage) {
			t.Fatalf("add-partitions %v: %v, want a usage error", bad, err)
		}
	}

	jout.Reset()
	must(t, TopicList(ctx, jenv, false))
	var list []topicListing
	must(t, json.Unmarshal(jout.Bytes(), &list))
	got := map[string]int{}
	for _, l := range list {
		got[l.Name] = l.Partitions
	}
	if got["life-a"] != 2 || got["life-b"] != 5 || got["life-c"] != 1 {
		t.Fatalf("topic list: %v", got)
	}

	out.Reset()
	must(t, TopicDelete(ctx, env, []string{"life-a", "life-b", "life-c"}))
	golden(t, "topic_delete.txt", out.String())
	err = TopicDelete(ctx, env, []string{"life-a"})
	if !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("delete deleted topic: %v", err)
	}
	err = TopicDescribe(ctx, env, []string{"life-a"})
	if !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("describe deleted topic: %v", err)
	}
}

func TestTopicListGolden(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	// The broker is shared by the tests, so the list holds their topics
	// too: keep this test's rows, with the spaces that align them to the
	// longest name collapsed.
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"list-x", "list-y"}, Partitions: 3, ReplicationFactor: 1}))
	out.Reset()
	must(t, TopicList(ctx, env, false))
	golden(t, "topic_list.txt", keepLines(out.String(), "NAME", "list-"))

	jenv, jout := testEnv(t, JSON)
	must(t, TopicCreate(ctx, jenv, TopicSpec{Names: []string{"list-z"}, Partitions: -1, ReplicationFactor: -1}))
	golden(t, "topic_create.json", normalize(jout.String()))
}

func TestTopicUsageErrors(t *testing.T) {
	ctx := testCtx(t)
	env, _ := testEnv(t, Text)
	for name, err := range map[string]error{
		"create":       TopicCreate(ctx, env, TopicSpec{}),
		"delete":       TopicDelete(ctx, env, nil),
		"alter none":   TopicAlterConfig(ctx, env, []string{"x"}, nil, nil),
		"alter both":   TopicAlterConfig(ctx, env, []string{"x"}, map[string]string{"a": "1"}, []string{"a"}),
		"add none":     TopicAddPartitions(ctx, env, nil, 1, 0),
		"no brokers":   TopicList(ctx, &Env{Out: env.Out}, false),
		"bad format":   func() error { _, err := ParseFormat("yaml"); return err }(),
		"produce":      Produce(ctx, env, ProduceOptions{}),
		"consume":      Consume(ctx, env, ConsumeOptions{}),
		"dump nothing": DumpLog(env, nil, DumpOptions{}),
	} {
		if !errors.Is(err, ErrUsage) {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
}

// keepLines keeps the lines that start with one of the prefixes, with runs
// of blanks collapsed to one.
func keepLines(s string, prefixes ...string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				b.WriteString(strings.Join(strings.Fields(l), " ") + "\n")
				break
			}
		}
	}
	return b.String()
}
