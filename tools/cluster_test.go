package tools

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestClusterInfo(t *testing.T) {
	ctx := testCtx(t)
	// Other tests make topics: the count is not golden.
	topics := regexp.MustCompile(`(?m)(^TOPICS +|"topics": )\d+`)
	for _, f := range []Format{Text, JSON} {
		env, out := testEnv(t, f)
		must(t, ClusterInfo(ctx, env))
		golden(t, "cluster_info."+f.String(), topics.ReplaceAllString(normalize(out.String()), "${1}<n>"))
	}
}

// A single node is the quorum's only voter and its leader, caught up.
func TestClusterQuorum(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, JSON)
	must(t, ClusterQuorum(ctx, env))
	var q quorumInfo
	if err := json.Unmarshal(out.Bytes(), &q); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if q.LeaderEpoch < 1 || q.HighWatermark < 1 || len(q.Voters) != 1 || q.Voters[0].ID != q.LeaderID ||
		q.Voters[0].Status != "Leader" || q.Voters[0].Lag != 0 || q.Voters[0].LogEndOffset != q.HighWatermark {
		t.Fatalf("quorum %+v", q)
	}
	env, out = testEnv(t, Text)
	must(t, ClusterQuorum(ctx, env))
	if !regexp.MustCompile(`(?m)^LEADER +\d+$`).MatchString(out.String()) || !strings.Contains(out.String(), "Leader") {
		t.Fatalf("text output:\n%s", out)
	}
}
