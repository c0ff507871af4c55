package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// On the single test broker (one log dir): log-dirs lists the replicas,
// a move to the dir a replica is in is done at once, and one to a dir the
// broker does not have is refused with Kafka's error.
func TestClusterLogDirs(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"dirs"}, Partitions: 2, ReplicationFactor: 1}))

	env, out = testEnv(t, JSON)
	must(t, ClusterLogDirs(ctx, env, []string{"dirs"}))
	var listed []logDirReplica
	if err := json.Unmarshal(out.Bytes(), &listed); err != nil || len(listed) != 2 {
		t.Fatalf("log-dirs: %v %s", err, out)
	}
	dir := listed[0].Dir
	for i, r := range listed {
		if r.Topic != "dirs" || r.Partition != int32(i) || r.IsFuture || r.Dir != dir || r.Broker != 1 {
			t.Fatalf("log-dirs: %+v", listed)
		}
	}

	env, out = testEnv(t, Text)
	must(t, ClusterMoveReplicaDir(ctx, env, "1", dir, []string{"dirs:0,1"}))
	if strings.Count(out.String(), "Moving") != 2 {
		t.Fatalf("move-replica-dir:\n%s", out)
	}
	out.Reset()
	if err := ClusterMoveReplicaDir(ctx, env, "1", "/no/such/dir", []string{"dirs:1"}); !errors.Is(err, kerr.LogDirNotFound) {
		t.Fatalf("move to an unknown dir: %v", err)
	}
	if !strings.Contains(out.String(), "LOG_DIR_NOT_FOUND") {
		t.Fatalf("move to an unknown dir:\n%s", out)
	}
	for _, bad := range [][]string{{"x", dir, "dirs:0"}, {"1", dir, "dirs"}, {"1", "", "dirs:0"}} {
		if err := ClusterMoveReplicaDir(ctx, env, bad[0], bad[1], bad[2:]); !errors.Is(err, ErrUsage) {
			t.Fatalf("move-replica-dir %q: %v", bad, err)
		}
	}
}
