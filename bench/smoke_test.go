package bench

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// smokeScale shrinks the shipped workloads to a third of a second or about
// 10,000 records each.
const smokeScale = 0.01

// Every shipped workload runs, at a tiny scale, against a kfake process
// started by Run (this test binary re-executed), and measures what its
// kind promises, the broker's CPU and memory included.
func TestSmokeShippedWorkloads(t *testing.T) {
	ws, err := ShippedWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := t.TempDir()
	var table, progress bytes.Buffer
	results, err := Run(ctx, ws, Options{Targets: []Target{{Label: "kfake", Start: "kfake"}}, Scale: smokeScale,
		OutDir: out, Out: &table, Progress: &progress})
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	if len(results) != len(ws) {
		t.Fatalf("%d results for %d workloads", len(results), len(ws))
	}
	for i, r := range results {
		w := ws[i]
		if r.Workload != w.Name || r.Target != "kfake" || r.Rep != 1 || r.Scale != smokeScale || r.Addr == "" {
			t.Errorf("%s: result %+v", w.Name, r)
		}
		if r.Broker == nil {
			t.Errorf("%s: no broker usage for the kfake process", w.Name)
		}
		wantProduce := w.Kind != KindConsume
		wantConsume := w.Kind != KindProduce
		if (r.Produce != nil) != wantProduce || (r.Consume != nil) != wantConsume || (r.Latency != nil) != w.measuresLatency() {
			t.Errorf("%s: produce %v consume %v latency %v", w.Name, r.Produce, r.Consume, r.Latency)
			continue
		}
		// A produce window may be empty on a loaded machine; that something
		// was acknowledged is what a smoke run can insist on.
		if p := r.Produce; p != nil && (p.Acked == 0 || p.Records > p.Acked || p.Bytes != p.Records*int64(w.RecordBytes) || p.Seconds <= 0) {
			t.Errorf("%s: produce %+v", w.Name, p)
		}
		if c := r.Consume; c != nil {
			// Everything produced is consumed: the fill, or every record
			// acknowledged (the produce figures count those acknowledged
			// within the duration).
			sw := w.Scaled(smokeScale)
			want := sw.total()
			if r.Produce != nil {
				want = r.Produce.Records
			}
			if c.Records < want || c.Records == 0 || sw.Records > 0 && c.Records != want || c.Bytes != c.Records*int64(w.RecordBytes) {
				t.Errorf("%s: consumed %d records, %d bytes; want %d records", w.Name, c.Records, c.Bytes, want)
			}
		}
		if (r.Share != nil) != w.ShareGroup {
			t.Errorf("%s: share stats %+v for share_group %v", w.Name, r.Share, w.ShareGroup)
		}
		if l := r.Latency; l != nil && (l.Count == 0 || l.P50 <= 0 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.P999 || l.P999 > l.Max || len(l.CDF) != len(cdfPoints)) {
			t.Errorf("%s: latency %+v", w.Name, l)
		}
		// Each side has its throughput over time.
		for _, tp := range []*Throughput{r.Produce, r.Consume} {
			if tp != nil && (tp.Timeline == nil || len(tp.Timeline.MiBps) == 0 || tp.Timeline.StepSeconds < timelineTick.Seconds()) {
				t.Errorf("%s: timeline %+v", w.Name, tp.Timeline)
			}
		}
	}
	// run.json says how the folder was made: the workloads as scaled.
	step, err := loadStep(out, "run")
	if err != nil || step == nil || len(step.Workloads) != len(ws) || !reflect.DeepEqual(step.Workloads, scaled(ws, smokeScale)) || step.Machine.CPUs == 0 {
		t.Errorf("run.json: %+v, %v", step, err)
	}
	// The results folder holds the same runs, as JSON lines and a table.
	f, err := os.Open(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := ReadJSONLines(bufio.NewReader(f))
	if err != nil || len(saved) != len(results) {
		t.Errorf("results.jsonl: %d results, %v", len(saved), err)
	}
	summary, err := os.ReadFile(filepath.Join(out, "summary.txt"))
	if err != nil || string(summary) != table.String() {
		t.Errorf("summary.txt differs from the table written (%v):\n%s\n---\n%s", err, summary, table.String())
	}
	for _, w := range ws {
		if !strings.Contains(table.String(), w.Name) {
			t.Errorf("table lacks %s", w.Name)
		}
	}
}

// Two targets alternate A B A B and the comparison is reported.
func TestSmokeCompare(t *testing.T) {
	ws, err := ResolveWorkloads([]string{"produce-100b-max"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	results, err := Run(ctx, ws, Options{Targets: []Target{{Label: "kfake", Start: "kfake"}, {Label: "kfake", Start: "kfake"}},
		Reps: 2, Scale: smokeScale, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range results {
		order = append(order, r.Target)
	}
	if got := strings.Join(order, " "); got != "kfake kfake#2 kfake kfake#2" {
		t.Errorf("run order %q", got)
	}
	if !strings.Contains(out.String(), "A/B") || !strings.Contains(out.String(), "produce MiB/s") {
		t.Errorf("no comparison in:\n%s", out.String())
	}
	// JSON output is the runs, one per line.
	out.Reset()
	// With Warm, the run is measured warm and says so.
	if _, err := Run(ctx, ws, Options{Targets: []Target{{Label: "kfake", Start: "kfake"}}, Scale: smokeScale, Out: &out, JSON: true,
		Warm: 1 << 20, WarmDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if rs, err := ReadJSONLines(&out); err != nil || len(rs) != 1 || rs[0].Produce == nil || rs[0].PageCache != PageCacheWarm || rs[0].Client == nil {
		t.Errorf("JSON output: %+v, %v", rs, err)
	}
}

// A run against an address where nothing listens fails, is recorded, and
// is returned as an error.
func TestRunUnreachable(t *testing.T) {
	ws, _ := ResolveWorkloads([]string{"produce-1k-max"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	results, err := Run(ctx, ws, Options{Targets: []Target{{Label: "nobody", Addr: "127.0.0.1:1"}}, Scale: smokeScale})
	if err == nil || len(results) != 1 || results[0].Error == "" {
		t.Errorf("Run = %+v, %v; want a recorded error", results, err)
	}
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]Target{
		"kzero":          {Label: "kzero", Start: "kzero"},
		" kfake ":        {Label: "kfake", Start: "kfake"},
		"127.0.0.1:9092": {Label: "127.0.0.1:9092", Addr: "127.0.0.1:9092"},
	} {
		if got, err := ParseTarget(in); err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "kafka", "localhost"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q) took it", bad)
		}
	}
}

// A kzero started by the suite runs as its own process, so its CPU time
// and peak RSS are recorded. It is built from this module (go build), so
// this test skips under -short.
func TestSmokeStartKzero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kzero")
	}
	ws, err := ResolveWorkloads([]string{"produce-1k-max", "consume-1gib-catchup", "share-consume-4"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := t.TempDir()
	results, err := Run(ctx, ws, Options{Targets: []Target{{Label: "kzero", Start: "kzero"}}, Scale: smokeScale,
		OutDir: out, Profile: true})
	if err != nil {
		t.Fatal(err)
	}
	// Both reading workloads fill 1 GiB of 1 KiB records.
	filled := ws[1].Scaled(smokeScale).Records
	for _, r := range results {
		b := r.Broker
		if b == nil || b.PeakRSSBytes <= 0 || b.CPUSeconds < 0 || b.GiBMoved <= 0 {
			t.Errorf("%s: broker usage %+v", r.Workload, b)
		}
		// The share-group run read every record (Run fails it
		// otherwise) and says what it saw of redelivery.
		if (r.Share != nil) != (r.Workload == "share-consume-4") || r.Consume != nil && r.Consume.Records != filled {
			t.Errorf("%s: share %+v consume %+v", r.Workload, r.Share, r.Consume)
		}
		// A CPU profile of the measured phase, and the allocations.
		want := []string{r.Workload + ".kzero.rep1.cpu.pprof", r.Workload + ".kzero.rep1.allocs.pprof"}
		if strings.Join(r.Profiles, " ") != strings.Join(want, " ") {
			t.Errorf("%s: profiles %q, want %q", r.Workload, r.Profiles, want)
		}
		for _, p := range r.Profiles {
			if st, err := os.Stat(filepath.Join(out, p)); err != nil || st.Size() == 0 {
				t.Errorf("%s: profile %s: %v", r.Workload, p, err)
			}
		}
	}
}

func TestAdminWatch(t *testing.T) {
	var log bytes.Buffer
	a := &adminWatch{w: &log, found: make(chan string, 1)}
	lines := "time=1 level=INFO msg=\"listening\" addr=127.0.0.1:9092\n" +
		"time=2 level=INFO msg=\"admin listener\" addr=127.0.0.1:40123 extra=1\n" +
		"time=3 level=INFO msg=\"admin listener\" addr=127.0.0.1:1\n"
	// Written in pieces that split lines, as a pipe delivers them.
	for i := 0; i < len(lines); i += 7 {
		a.Write([]byte(lines[i:min(i+7, len(lines))]))
	}
	if log.String() != lines {
		t.Errorf("log passed through as %q", log.String())
	}
	select {
	case got := <-a.found:
		if got != "127.0.0.1:40123" {
			t.Errorf("admin address %q", got)
		}
	default:
		t.Fatal("no admin address found")
	}
	if len(a.found) != 0 {
		t.Error("a second address was sent")
	}
}

func scaled(ws []Workload, f float64) []Workload {
	out := make([]Workload, len(ws))
	for i, w := range ws {
		out[i] = w.Scaled(f)
	}
	return out
}
