package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestOffsets(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	jenv, jout := testEnv(t, JSON)
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"offs"}, Partitions: 2, ReplicationFactor: 1}))
	must(t, Produce(ctx, env, ProduceOptions{Topic: "offs", Partition: 0, Input: strings.NewReader("a\nb\nc\n")}))

	out.Reset()
	must(t, Offsets(ctx, env, OffsetsOptions{Topics: []string{"offs"}}))
	golden(t, "offsets.txt", out.String())
	must(t, Offsets(ctx, jenv, OffsetsOptions{Topics: []string{"offs"}, Isolation: "read_committed"}))
	golden(t, "offsets.json", jout.String())

	at := func(time string) map[int32]int64 {
		t.Helper()
		jout.Reset()
		must(t, Offsets(ctx, jenv, OffsetsOptions{Topics: []string{"offs"}, Time: time}))
		var rows []partitionOffsets
		must(t, json.Unmarshal(jout.Bytes(), &rows))
		got := map[int32]int64{}
		for _, r := range rows {
			got[r.Partition] = *r.Offset
		}
		return got
	}
	for time, want := range map[string][2]int64{
		"earliest": {0, 0}, "-2": {0, 0},
		"latest": {3, 0}, "-1": {3, 0},
		"0": {0, 0}, // the first record at or after 0; an empty partition's end
	} {
		if got := at(time); got[0] != want[0] || got[1] != want[1] {
			t.Errorf("--time %s: %v, want %v", time, got, want)
		}
	}

	// The record with the largest timestamp: the three records may share
	// a millisecond, so any of them; an empty partition has none (-1).
	if got := at("max-timestamp"); got[0] < 0 || got[0] > 2 || got[1] != -1 {
		t.Errorf("--time max-timestamp: %v", got)
	}

	out.Reset()
	must(t, Offsets(ctx, env, OffsetsOptions{Topics: []string{"offs"}, Time: "latest"}))
	golden(t, "offsets_latest.txt", normalize(out.String()))

	for _, bad := range []string{"yesterday", "-4"} {
		if err := Offsets(ctx, env, OffsetsOptions{Time: bad}); !errors.Is(err, ErrUsage) {
			t.Errorf("--time %s: %v, want a usage error", bad, err)
		}
	}
	if err := Offsets(ctx, env, OffsetsOptions{Topics: []string{"no-such-topic"}}); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown topic: %v", err)
	}
}
