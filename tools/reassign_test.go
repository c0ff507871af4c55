package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// On the single test broker: a preferred election is never needed, a
// reassignment can only reorder the one replica, and nothing stays in
// progress; bad targets are refused with Kafka's errors.
func TestClusterElectAndReassign(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"moved"}, Partitions: 2, ReplicationFactor: 1}))

	out.Reset()
	must(t, ClusterElectLeaders(ctx, env, false, []string{"moved"}))
	if got := strings.Fields(out.String()); strings.Count(out.String(), "ELECTION_NOT_NEEDED") != 2 || got[0] != "TOPIC" {
		t.Fatalf("elect-leaders:\n%s", out)
	}
	env, out = testEnv(t, JSON)
	must(t, ClusterElectLeaders(ctx, env, true, nil))
	var elected []partitionResult
	if err := json.Unmarshal(out.Bytes(), &elected); err != nil || len(elected) != 0 {
		t.Fatalf("unclean election of every partition: %v %s", err, out)
	}
	if err := ClusterElectLeaders(ctx, env, false, []string{"nope"}); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("elect-leaders nope: %v", err)
	}

	env, out = testEnv(t, Text)
	must(t, ClusterReassign(ctx, env, []string{"moved:0=1"}, true))
	if !strings.Contains(out.String(), "Accepted") {
		t.Fatalf("reassign:\n%s", out)
	}
	out.Reset()
	err := ClusterReassign(ctx, env, []string{"moved:0=cancel", "moved:1=1,9", "moved:1=1,1"}, false)
	for _, want := range []error{kerr.NoReassignmentInProgress, kerr.InvalidReplicaAssignment} {
		if !errors.Is(err, want) {
			t.Fatalf("refused reassignments: %v, want %v", err, want)
		}
	}
	if err := ClusterReassign(ctx, env, []string{"moved:0=2,1"}, true); !errors.Is(err, kerr.InvalidReplicaAssignment) {
		t.Fatalf("reassign to an unknown broker: %v", err)
	}
	for _, bad := range []string{"moved", "moved:x=1", "moved:0=a", ":0=1"} {
		if err := ClusterReassign(ctx, env, []string{bad}, false); !errors.Is(err, ErrUsage) {
			t.Fatalf("reassign %q: %v", bad, err)
		}
	}

	env, out = testEnv(t, JSON)
	must(t, ClusterListReassignments(ctx, env, []string{"moved"}))
	var list []reassignmentInfo
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list) != 0 {
		t.Fatalf("list-reassignments: %v %s", err, out)
	}
}
