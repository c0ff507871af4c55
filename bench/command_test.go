package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var errUsage = errors.New("usage")

func TestCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"bogus"},
		{"report"},
		{"report", "a", "b"},
		{"report", fixture, "--format", "png"},
		{"report", fixture, "--no-such-flag"},
		{"limits", "extra"},
		{"limits", "--reps", "0"},
		{"limits", "--duration", "0s"},
		{"limits", "-o", "yaml"},
	} {
		var stdout, stderr bytes.Buffer
		if err := Command(context.Background(), args, &stdout, &stderr, errUsage); !errors.Is(err, errUsage) {
			t.Errorf("Command(%q) = %v, want a usage error", args, err)
		}
	}
	// -h prints the flags and is no error.
	var stdout, stderr bytes.Buffer
	if err := Command(context.Background(), []string{"report", "-h"}, &stdout, &stderr, errUsage); err != nil || !strings.Contains(stderr.String(), "-markdown") {
		t.Errorf("report -h: %v, %q", err, stderr.String())
	}
	// A folder without results is a failure, not a usage error.
	err := Command(context.Background(), []string{"report", t.TempDir()}, &stdout, &stderr, errUsage)
	if err == nil || errors.Is(err, errUsage) {
		t.Errorf("report of an empty folder: %v", err)
	}
}

func TestCommandReport(t *testing.T) {
	out := t.TempDir()
	plots := filepath.Join(out, "plots")
	os.MkdirAll(plots, 0o755)
	os.WriteFile(filepath.Join(plots, "old.svg"), []byte("<svg/>"), 0o644)
	var stdout, stderr bytes.Buffer
	// Flags after the folder, as kzctl allows.
	err := Command(context.Background(), []string{"report", fixture, "--out", plots, "--format", "svg"}, &stdout, &stderr, errUsage)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 7 || lines[0] != filepath.Join(plots, "compare.svg") {
		t.Errorf("stdout %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "old.svg is not from this report") {
		t.Errorf("stale plot not reported: %q", stderr.String())
	}
}

func TestCommandLimits(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := Command(context.Background(), []string{"limits", "--duration", "20ms", "--reps", "1", "--dir", t.TempDir(), "--out", out, "-o", "json"}, &stdout, &stderr, errUsage)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&stdout)
	n := 0
	for dec.More() {
		var l Limit
		if err := dec.Decode(&l); err != nil || l.MiBps <= 0 {
			t.Errorf("line %d: %+v, %v", n, l, err)
		}
		n++
	}
	if n != len(limitNames) {
		t.Errorf("%d JSON lines, want %d", n, len(limitNames))
	}
	if _, err := os.Stat(filepath.Join(out, "limits.jsonl")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(stderr.String(), "loopback-tcp, rep 1/1: ") {
		t.Errorf("progress %q", stderr.String())
	}
}
