package bench

import (
	"strings"
	"testing"
)

func TestParseGoals(t *testing.T) {
	gs, err := LoadGoals("")
	if err != nil || len(gs) == 0 {
		t.Fatalf("kzero's goals: %v, %v", gs, err)
	}
	shipped, _ := ShippedWorkloads()
	for _, g := range gs {
		found := false
		for _, w := range shipped {
			found = found || w.Name == g.Workload
		}
		if !found || g.Source == "" {
			t.Errorf("goal %+v: not a shipped workload, or no source", g)
		}
	}
	for _, bad := range []string{
		`{}`,
		`[{"workload":"w","metric":"no such","at_most":1}]`,
		`[{"metric":"p99 ms","at_most":1}]`,
		`[{"workload":"w","metric":"p99 ms"}]`,
		`[{"workload":"w","metric":"p99 ms","at_most":1,"at_least":2}]`,
		`[{"workload":"w","metric":"p99 ms","vs_peer":2}]`,
		`[{"workload":"w","metric":"p99 ms","at_most":-1}]`,
		`[{"workload":"w","metric":"p99 ms","at_most":1,"typo":1}]`,
		`[{"workload":"w","metric":"p99 ms","of_limit":0.5}]`,
		`[{"workload":"w","metric":"produce MiB/s","of_limit":1.5}]`,
	} {
		if _, err := ParseGoals([]byte(bad)); err == nil {
			t.Errorf("ParseGoals(%s) took it", bad)
		}
	}
}

func TestCheckGoals(t *testing.T) {
	mk := func(target string, rep int, mibps, p99 float64) Result {
		return Result{Workload: "w", Kind: KindLatency, Target: target, Rep: rep,
			Produce: &Throughput{MiBps: mibps}, Latency: &Percentiles{P99: p99}}
	}
	a := analyse(&Folder{Results: []Result{mk("kzero", 1, 300, 1), mk("kfake", 1, 100, 3), mk("kzero", 2, 200, 3), mk("kfake", 2, 100, 3)},
		Limits: []Limit{{Limit: LimitLoopback, MiBps: 1000}, {Limit: LimitAppend, MiBps: 600}}})
	goals := []Goal{
		{Workload: "w", Metric: "produce MiB/s", Peer: "kfake", VsPeer: 2},    // 2.5× over the pairs: met
		{Workload: "w", Metric: "produce MiB/s", Peer: "kafka", VsPeer: 1},    // another peer: not measured
		{Workload: "w", Metric: "p99 ms", AtMost: 1.5},                        // median 2: missed
		{Workload: "w", Metric: "produce MiB/s", AtLeast: 250},                // median 250: met
		{Workload: "other", Metric: "p99 ms", AtMost: 1, Source: "somewhere"}, // no runs: not measured
		{Workload: "w", Metric: "produce MiB/s", OfLimit: 0.4},                // 250 of the append's 600: met
		{Workload: "w", Metric: "produce MiB/s", OfLimit: 0.5},                // missed
		{Workload: "w", Metric: "p99 ms", Peer: "kfake", VsPeer: 1},           // 1/3 of kfake's in pair 1, 1 in pair 2: met
		{Workload: "w", Metric: "p99 ms", Peer: "kfake", VsPeer: 2},           // median pair ratio 0.667: missed
	}
	var got []string
	for _, c := range a.checkGoals(goals) {
		got = append(got, c.Want+" / "+c.Measured+" / "+map[bool]string{true: "met", false: "not"}[c.Met])
	}
	want := []string{"≥ 2× kfake / 2.50× (2 pairs) / met", "≥ 1× kafka /  / not", "≤ 1.5 / 2.00 (1.00–3.00) / not",
		"≥ 250 / 250 (200–300) / met", "≤ 1 /  / not",
		"≥ 40% of the limit / 41.7% of file-append / met", "≥ 50% of the limit / 41.7% of file-append / not",
		"≤ kfake's / 0.667× kfake's (2 pairs) / met", "≤ 1/2 of kfake's / 0.667× kfake's (2 pairs) / not"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("checkGoals:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
