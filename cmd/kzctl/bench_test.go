package main

// kzctl bench: its usage errors, and one run against a kfake it starts.

import (
	"encoding/json"
	"strings"
	"testing"
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
