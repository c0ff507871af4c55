package tools

import (
	"regexp"
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
