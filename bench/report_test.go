package bench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the report's golden files in testdata/report/golden")

// fixture is a small results folder from a real run (kzero against kfake,
// scale 0.03, two repetitions, with the limits and kzero's CPU profiles),
// with two failed runs added by hand.
const fixture = "testdata/report"

// The report rendered from the fixture is the golden one: PERFORMANCE.md
// and every plot, byte for byte. After a deliberate change, rerun with
// -update and read the diff.
func TestReportGolden(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool pprof is needed for the profile tables")
	}
	out := t.TempDir()
	md := filepath.Join(out, "PERFORMANCE.md")
	written, err := Report(context.Background(), ReportOptions{Dir: fixture, Out: filepath.Join(out, "perf"), Markdown: md})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(fixture, "golden")
	if *update {
		os.RemoveAll(golden)
		if err := os.MkdirAll(filepath.Join(golden, "perf"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, w := range written {
		rel, _ := filepath.Rel(out, w)
		names = append(names, rel)
		got, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(w, ".svg") {
			wellFormed(t, rel, string(got))
		}
		if *update {
			if err := os.WriteFile(filepath.Join(golden, rel), got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(filepath.Join(golden, rel))
		if err != nil {
			t.Errorf("%s: no golden file (run with -update): %v", rel, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its golden file; rerun with -update and read the diff:\n%s", rel, firstDiff(string(got), string(want)))
		}
	}
	want := []string{"perf/compare.svg", "perf/limits.svg",
		"perf/throughput-produce-1k-max.svg",
		"perf/throughput-latency-1k-50mbs.svg", "perf/latency-latency-1k-50mbs.svg", "perf/latency-cdf-latency-1k-50mbs.svg",
		"perf/throughput-consume-1gib-catchup.svg", "PERFORMANCE.md"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("wrote %q\nwant %q", names, want)
	}
}

// firstDiff shows the first line where got and want part.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, gl, wl)
		}
	}
	return "(same lines)"
}

// What PERFORMANCE.md must say of the fixture, whatever its wording: the
// figures it is made of, in the places they belong.
func TestReportContent(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool pprof is needed for the profile tables")
	}
	out := t.TempDir()
	md := filepath.Join(out, "PERFORMANCE.md")
	if _, err := Report(context.Background(), ReportOptions{Dir: fixture, Out: filepath.Join(out, "docs", "perf"), Markdown: md}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	f, err := LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	a := analyse(f)
	c, ok := a.comparison("produce-1k-max", "produce MiB/s")
	if !ok {
		t.Fatal("no produce comparison in the fixture")
	}
	for _, want := range []string{
		"## Method", "## Results", "## Known gaps", "## What the profiles show",
		"- CPU: " + f.Run.Machine.CPUModel,
		"kzctl bench run produce-1k-max latency-1k-50mbs consume-1gib-catchup --compare kzero,kfake",
		"kzctl bench limits --duration 500ms",
		"make bench-suite bench-report BENCH_REPS=2 BENCH_SCALE=0.03",
		"| produce-1k-max | produce MiB/s | " + a.cell("produce-1k-max", "kzero", comparedMetric("produce MiB/s")),
		sig3(c.Ratio),
		"![kzero against kfake: times better, median of pair ratios](docs/perf/compare.svg)",
		"### The produce path: produce-1k-max", "### The fetch path: consume-1gib-catchup",
		"`produce-1k-max.kzero.rep1.cpu.pprof`, `produce-1k-max.kzero.rep2.cpu.pprof`",
		"mixed-1k-max on kzero, repetition 1, failed: consume: stalled at 1200 records for 30s.",
		"mixed-1k-max has no pair of runs that both succeeded",
		"kfake's CPU time and memory are not measured",
		"The runs were scaled to 0.03",
		"| loopback-tcp | one loopback TCP connection",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("PERFORMANCE.md lacks %q", want)
		}
	}
	if strings.Contains(page, "<no value>") || strings.Contains(page, "%!") {
		t.Error("PERFORMANCE.md holds a template or format error")
	}
}

func TestReportErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Report(ctx, ReportOptions{Dir: fixture, Format: "png", Out: t.TempDir()}); !errors.Is(err, ErrFormat) {
		t.Errorf("png: %v", err)
	}
	if _, err := Report(ctx, ReportOptions{Dir: t.TempDir()}); err == nil {
		t.Error("a folder without results rendered")
	}
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "results.jsonl"), nil, 0o644)
	if _, err := Report(ctx, ReportOptions{Dir: empty}); err == nil {
		t.Error("a folder with no results rendered")
	}
	// Plots only, into DIR/plots by default.
	dir := t.TempDir()
	for _, name := range []string{"results.jsonl", "run.json"} {
		b, _ := os.ReadFile(filepath.Join(fixture, name))
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	written, err := Report(ctx, ReportOptions{Dir: dir})
	if err != nil || len(written) == 0 {
		t.Fatalf("Report = %v, %v", written, err)
	}
	for _, w := range written {
		if filepath.Dir(w) != filepath.Join(dir, "plots") || filepath.Ext(w) != ".svg" {
			t.Errorf("wrote %s", w)
		}
		if filepath.Base(w) == "limits.svg" {
			t.Error("a limits plot without limits")
		}
	}
}
