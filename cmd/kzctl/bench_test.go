package main

// kzctl bench: its usage errors, one run against a kfake it starts, a
// report of a results folder and a measurement of the machine's limits.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kzero/bench"
)

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bench"},
		{"bench", "report"},
		{"bench", "run"},
		{"bench", "run", "all", "--start", "kafka"},
		{"bench", "run", "all", "--compare", "kfake"},
		{"bench", "run", "all", "--compare", "kfake,kafka"},
		{"bench", "run", "all", "--compare", "kfake,kfake", "--start", "kfake"},
		{"bench", "run", "all", "--scale", "0"},
		{"bench", "run", "all", "--reps", "0"},
		{"bench", "run", "all", "--warm", "-1"},
		{"bench", "warm", "--size", "0"},
		{"bench", "warm", "extra"},
	} {
		code, _, stderr := kzctl(t, "", args...)
		if code != 2 {
			t.Errorf("kzctl %q: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
	}
	// An unknown workload is not a usage error but names the shipped ones.
	code, _, stderr := kzctl(t, "", "bench", "run", "no-such", "--start", "kfake")
	if code != 1 || !strings.Contains(stderr, "produce-1k-max") {
		t.Errorf("unknown workload: exit %d, stderr %q", code, stderr)
	}
}

func TestBenchRunKfake(t *testing.T) {
	code, stdout, stderr := kzctl(t, "", "-o", "json", "bench", "run", "produce-100b-max",
		"--start", "kfake", "--scale", "0.01")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Workload string
		Target   string
		Produce  *struct{ Acked int64 }
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %q", err, stdout)
	}
	if res.Workload != "produce-100b-max" || res.Target != "kfake" || res.Produce == nil || res.Produce.Acked == 0 {
		t.Errorf("result %+v", res)
	}
	if !strings.Contains(stderr, "started kfake") || !strings.Contains(stderr, "produce-100b-max on kfake, rep 1/1: ok") {
		t.Errorf("progress on stderr: %q", stderr)
	}
}

// reportFixture is a results folder of the bench package's tests.
const reportFixture = "../../bench/testdata/report"

func TestBenchReportAndLimitsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "bogus"},
		{"bench", "report", "a", "b"},
		{"bench", "report", reportFixture, "--format", "png"},
		{"bench", "report", reportFixture, "--no-such-flag"},
		{"bench", "limits", "extra"},
		{"bench", "limits", "--reps", "0"},
		{"bench", "limits", "--duration", "0s"},
		{"bench", "limits", "-o", "yaml"},
	} {
		if code, _, stderr := kzctl(t, "", args...); code != 2 {
			t.Errorf("kzctl %q: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
	}
	// -h prints the flags and is no error.
	if code, stdout, stderr := kzctl(t, "", "bench", "report", "-h"); code != 0 || !strings.Contains(stdout, "--markdown") {
		t.Errorf("report -h: exit %d, %q %q", code, stdout, stderr)
	}
	// A folder without results is a failure, not a usage error.
	if code, _, stderr := kzctl(t, "", "bench", "report", t.TempDir()); code != 1 {
		t.Errorf("report of an empty folder: exit %d, %q", code, stderr)
	}
}

func TestBenchReport(t *testing.T) {
	plots := filepath.Join(t.TempDir(), "plots")
	os.MkdirAll(plots, 0o755)
	os.WriteFile(filepath.Join(plots, "old.svg"), []byte("<svg/>"), 0o644)
	// Flags after the folder.
	code, stdout, stderr := kzctl(t, "", "bench", "report", reportFixture, "--out", plots, "--format", "svg")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 7 || lines[0] != filepath.Join(plots, "compare.svg") {
		t.Errorf("stdout %q", stdout)
	}
	if !strings.Contains(stderr, "old.svg is not from this report") {
		t.Errorf("stale plot not reported: %q", stderr)
	}
}

func TestBenchLimits(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := kzctl(t, "", "bench", "limits", "--duration", "20ms", "--reps", "1", "--dir", t.TempDir(), "--out", out, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	var names []string
	for dec.More() {
		var l bench.Limit
		if err := dec.Decode(&l); err != nil || l.MiBps <= 0 {
			t.Errorf("line %d: %+v, %v", len(names), l, err)
		}
		names = append(names, l.Limit)
	}
	if want := []string{bench.LimitLoopback, bench.LimitSendfile, bench.LimitAppend, bench.LimitAppendCold}; !slices.Equal(names, want) {
		t.Errorf("JSON lines of %v, want %v", names, want)
	}
	if _, err := os.Stat(filepath.Join(out, "limits.jsonl")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(stderr, "loopback-tcp, rep 1/1: ") {
		t.Errorf("progress %q", stderr)
	}
}

func TestBenchWarm(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := kzctl(t, "", "bench", "warm", "--size", "0.004", "--dir", dir)
	if code != 0 || !strings.HasPrefix(stdout, "wrote and deleted 0.00 GiB") {
		t.Fatalf("exit %d: %q %q", code, stdout, stderr)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
