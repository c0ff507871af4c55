package bench

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleResults() []Result {
	start := time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)
	return []Result{
		{Workload: "produce-1k-max", Kind: KindProduce, Target: "kzero", Addr: "127.0.0.1:1", Rep: 1, Start: start,
			Produce: newThroughput(1<<20, 1<<30, 2*time.Second),
			Broker:  usage(Sample{CPUSeconds: 10, PeakRSSBytes: 1}, Sample{CPUSeconds: 11.5, PeakRSSBytes: 64 << 20}, newThroughput(1<<20, 1<<30, time.Second), nil, 1024)},
		{Workload: "latency-1k-50mbs", Kind: KindLatency, Target: "kfake", Addr: "127.0.0.1:2", Rep: 2, Start: start, Scale: 0.01,
			Produce: newThroughput(500, 512000, time.Second), Consume: newThroughput(500, 512000, time.Second),
			Latency: &Percentiles{Count: 500, P50: 1.25, P99: 4.5, P999: 9, Max: 12.75, Mean: 1.5}},
		{Workload: "consume-1gib-catchup", Kind: KindConsume, Target: "kfake", Rep: 1, Start: start, Error: "consume: stalled"},
	}
}

func TestThroughputAndUsage(t *testing.T) {
	tp := newThroughput(1000, 3_000_000, 1500*time.Millisecond)
	if tp.MBps != 2 || tp.RecordsPerSec != 1000/1.5 || tp.MiBps != 3e6/1.5/(1<<20) {
		t.Errorf("throughput %+v", tp)
	}
	if z := newThroughput(1, 1, 0); z.MBps != 0 || z.RecordsPerSec != 0 {
		t.Errorf("zero time: %+v", z)
	}
	// 1 GiB acknowledged (half of it outside the window) and 0.5 GiB consumed.
	prod := newThroughput(1<<19, 1<<29, time.Second)
	prod.Acked = 1 << 20
	u := usage(Sample{CPUSeconds: 1}, Sample{CPUSeconds: 4, PeakRSSBytes: 256 << 20},
		prod, newThroughput(1<<19, 1<<29, time.Second), 1024)
	if u.GiBMoved != 1.5 || u.CPUSeconds != 3 || u.CPUSecondsPerGiB != 2 || u.PeakRSSMiBPerGiB != 256/1.5 {
		t.Errorf("usage %+v", u)
	}
}

func TestJSONLinesRoundTrip(t *testing.T) {
	in := sampleResults()
	var buf bytes.Buffer
	if err := WriteJSONLines(&buf, in); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != len(in) {
		t.Fatalf("%d lines for %d results:\n%s", n, len(in), buf.String())
	}
	for _, key := range []string{`"mib_per_s"`, `"p99_9_ms"`, `"cpu_s_per_gib"`, `"error":"consume: stalled"`} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("JSON lines lack %s", key)
		}
	}
	out, err := ReadJSONLines(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n%+v\n%+v", in, out)
	}
	if _, err := ReadJSONLines(strings.NewReader(`{"workload":"x"} {"rep":"one"}`)); err == nil {
		t.Error("a bad line read")
	}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, sampleResults()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, want := range [][]string{
		{"workload", "prod MiB/s", "p99.9 ms", "CPU s/GiB", "peak RSS MiB"},
		{"produce-1k-max", "kzero", "512.0", "524288", "1.50", "64"},
		{"latency-1k-50mbs", "kfake", "0.5", "500", "1.25", "4.50", "9.00", "12.75"},
		{"consume-1gib-catchup", "error: consume: stalled"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
	// A produce run has no latency: dashes, as many as the missing columns.
	if n := strings.Count(lines[1], " - ") + strings.Count(lines[1], " -"); n == 0 {
		t.Errorf("no dashes for missing figures: %q", lines[1])
	}
}

func TestCompare(t *testing.T) {
	mk := func(target string, rep int, mibps, lat float64) Result {
		return Result{Workload: "w", Target: target, Rep: rep,
			Produce: &Throughput{MiBps: mibps}, Latency: &Percentiles{P50: lat, P99: lat, P999: lat}}
	}
	results := []Result{
		mk("A", 1, 200, 2), mk("B", 1, 100, 4),
		mk("A", 2, 300, 1), mk("B", 2, 100, 4),
		mk("A", 3, 100, 3), mk("B", 3, 100, 3),
		{Workload: "w", Target: "A", Rep: 4, Error: "boom"}, mk("B", 4, 1, 1), // unpaired: left out
		mk("C", 1, 5, 5), // another target: left out
	}
	cs := Compare(results, "A", "B")
	// Produce and three latency percentiles; no consume, no broker usage.
	if len(cs) != 4 {
		t.Fatalf("%d comparisons: %+v", len(cs), cs)
	}
	cs = []Comparison{cs[0], cs[2]}
	want := []Comparison{
		{Workload: "w", Metric: "produce MiB/s", Better: "higher", A: "A", B: "B", MedianA: 200, MedianB: 100, Ratio: 2, Pairs: 3},
		{Workload: "w", Metric: "p99 ms", Better: "lower", A: "A", B: "B", MedianA: 2, MedianB: 4, Ratio: 0.5, Pairs: 3},
	}
	if !reflect.DeepEqual(cs, want) {
		t.Errorf("Compare =\n%+v\nwant\n%+v", cs, want)
	}
	var buf bytes.Buffer
	if err := WriteComparison(&buf, cs); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"A A", "B B", "A/B", "produce MiB/s", "200.00", "2.00", "0.50", "lower"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("comparison table lacks %q:\n%s", w, buf.String())
		}
	}
}

// A catch-up read's rate counts from its first record: a share group that
// waited 5 s for its assignment and then read 2 MiB in 1 s ran at 2 MiB/s,
// and its wait is a figure of its own. A consumer beside producers counts
// from the phase's start.
func TestIntakeCountsFromFirstRecord(t *testing.T) {
	_, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	for _, fromFirst := range []bool{true, false} {
		in := newIntake(0, &meter{}, cancel, fromFirst)
		start := in.start.UnixNano()
		in.got(1, 1<<20, start+int64(5*time.Second))
		in.got(1, 1<<20, start+int64(6*time.Second))
		in.feed(func() (int64, error) { return 2, nil })
		tp, _, whole := in.end(0, nil)
		if !whole {
			t.Fatal("the phase did not end with every record")
		}
		want := Throughput{Records: 2, Bytes: 2 << 20, Seconds: 1, MBps: 2.097152, MiBps: 2, RecordsPerSec: 2, Acked: 2, FirstRecordSeconds: 5}
		if !fromFirst {
			// Beside producers: from the phase's start.
			want.Seconds, want.MBps, want.MiBps, want.RecordsPerSec = 6, float64(2<<20)/6/1e6, 2.0/6, 2.0/6
		}
		tp.Timeline = nil
		if *tp != want {
			t.Errorf("from the first record %v: throughput %+v, want %+v", fromFirst, *tp, want)
		}
	}
}
