package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	s, err := parseProcStat([]byte("cpu  100 10 50 800 40 0 0 30 7 0\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 1 2\nprocs_running 5\nprocs_blocked 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	// Guest time (7) is in user already: not added again.
	if s.total != 1030 || s.idle != 840 || s.steal != 30 || s.running != 5 {
		t.Fatalf("parsed %+v", s)
	}
	for _, bad := range []string{"", "cpu 1 2 3\nprocs_running 1\n", "cpu 1 2 3 4 5 6 7 x\nprocs_running 1\n", "cpu 1 2 3 4 5 6 7 8\n", "procs_running -1\n"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// The sampler's figures: busy and steal as shares of all CPU time between
// the first and the last sample, the run queue without the sampler itself.
func TestMachineLoad(t *testing.T) {
	s := &loadSampler{first: procStat{total: 1000, idle: 600, steal: 10}}
	s.add(procStat{total: 1500, idle: 800, steal: 35, running: 4})
	s.add(procStat{total: 2000, idle: 1000, steal: 60, running: 2})
	l := s.load()
	if l.BusyPct != 60 || l.StealPct != 5 || l.RunQueueAvg != 2 || l.RunQueueMax != 3 || l.Samples != 2 {
		t.Fatalf("load %+v", l)
	}
}

// A sampler reads a /proc/stat file until ended, and once more at the
// end; one it cannot read is nil and ends as nil.
func TestLoadSampler(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stat")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cpu  100 0 100 800 0 0 0 0 0 0\nprocs_running 1\n")
	s := startLoad(path)
	if s == nil {
		t.Fatal("no sampler")
	}
	write("cpu  300 0 300 1200 0 0 0 200 0 0\nprocs_running 3\n")
	l := s.end()
	if l.Samples < 1 || l.RunQueueMax != 2 || l.BusyPct != 60 || l.StealPct != 20 {
		t.Fatalf("load %+v", l)
	}
	if startLoad(filepath.Join(t.TempDir(), "missing")).end() != nil {
		t.Fatal("a sampler of a missing file")
	}
}

// The report's load section: each latency run with its load, and whether
// the pairs agree on the lower tail.
func TestLoadVerdicts(t *testing.T) {
	run := func(target string, rep int, p99, p999 float64) Result {
		return Result{Workload: "latency-1k-50mbs", Kind: KindLatency, Target: target, Rep: rep,
			Latency: &Percentiles{P99: p99, P999: p999}, Load: &MachineLoad{BusyPct: 70, StealPct: 2.5, RunQueueAvg: 1.5, RunQueueMax: 4}}
	}
	f := &Folder{Results: []Result{
		run("kzero", 1, 2, 9), run("kfake", 1, 30, 8),
		run("kzero", 2, 3, 5), run("kfake", 2, 40, 50),
	}}
	a := analyse(f)
	rows := a.loadRows()
	if len(rows) != 4 || rows[0][3] != "2.00" || rows[0][6] != "2.5" || rows[0][7] != "1.5 (max 4)" {
		t.Fatalf("rows %q", rows)
	}
	v := a.loadVerdicts()
	want := []string{
		"latency-1k-50mbs: kzero's p99 was the lower in 2 of 2 pairs (the pairs agree).",
		"latency-1k-50mbs: kzero's p99.9 was the lower in 1 of 2 pairs (the pairs do not agree: the machine's load decided, not the brokers).",
	}
	if len(v) != 2 || v[0] != want[0] || v[1] != want[1] {
		t.Fatalf("verdicts %q, want %q", v, want)
	}
}

func TestLoadSectionRendered(t *testing.T) {
	r := Result{Workload: "latency-1k-50mbs", Kind: KindLatency, Target: "kzero", Rep: 1,
		Latency: &Percentiles{P99: 2, P999: 9}, Load: &MachineLoad{BusyPct: 70, StealPct: 2.5, RunQueueAvg: 1.5, RunQueueMax: 4}}
	var b strings.Builder
	if err := analyse(&Folder{Results: []Result{r}}).renderPerformance(context.Background(), &b, "results", "docs/perf", nil, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "## Tail latency and the machine's load") || !strings.Contains(b.String(), "| latency-1k-50mbs | kzero | 1 | 2.00 | 9.00 | 70 | 2.5 | 1.5 (max 4) |") {
		t.Fatalf("no load section in:\n%s", b.String())
	}
}
