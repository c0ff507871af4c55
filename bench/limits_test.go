package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Each limit is measured, in turn, and saved beside the results; the
// scratch files are gone afterwards.
func TestMeasureLimits(t *testing.T) {
	scratch, out := t.TempDir(), t.TempDir()
	var progress bytes.Buffer
	limits, err := MeasureLimits(context.Background(), LimitOptions{Dir: scratch, Duration: 50 * time.Millisecond, Reps: 2,
		OutDir: out, AppendCap: 64 << 20, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, l := range limits {
		order = append(order, l.Limit)
		if l.Bytes <= 0 || l.Seconds <= 0 || l.MiBps <= 0 || l.Error != "" || l.ChunkBytes != limitChunks[l.Limit] || l.Start.IsZero() {
			t.Errorf("limit %+v", l)
		}
		if l.Limit == LimitAppend || l.Limit == LimitAppendCold {
			if l.Bytes > 64<<20+1<<20 {
				t.Errorf("%s wrote %d bytes past the cap", l.Limit, l.Bytes)
			}
		}
	}
	one := strings.Join(limitNames, " ")
	if got := strings.Join(order, " "); got != one+" "+one {
		t.Errorf("measured in order %q", got)
	}
	// The warm append writes no more than the cold one did.
	for i := 0; i+3 < len(limits); i += 4 {
		if warm, cold := limits[i+2], limits[i+3]; warm.Bytes > cold.Bytes {
			t.Errorf("warm append %d bytes > cold %d", warm.Bytes, cold.Bytes)
		}
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("scratch files left: %v", left)
	}
	f, err := os.Open(filepath.Join(out, "limits.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := ReadLimits(f)
	if err != nil || !reflect.DeepEqual(saved, limits) {
		t.Errorf("limits.jsonl: %v\n%+v\nwant %+v", err, saved, limits)
	}
	if s, err := loadStep(out, "limits"); err != nil || s == nil || s.Step != "limits" || s.Machine.CPUs == 0 {
		t.Errorf("limits.json: %+v, %v", s, err)
	}
	if !strings.Contains(progress.String(), "sendfile, rep 2/2: ") {
		t.Errorf("progress %q", progress.String())
	}
}

func TestSummarizeLimits(t *testing.T) {
	limits := []Limit{
		{Limit: "custom", MiBps: 7, ChunkBytes: 4096},
		{Limit: LimitSendfile, MiBps: 300, ChunkBytes: 256 << 10},
		{Limit: LimitLoopback, MiBps: 100, ChunkBytes: 1 << 20},
		{Limit: LimitSendfile, MiBps: 100, ChunkBytes: 256 << 10},
		{Limit: LimitSendfile, MiBps: 200, ChunkBytes: 256 << 10},
		{Limit: LimitLoopback, MiBps: 5000, Error: "boom"}, // failed: left out
		{Limit: LimitAppend, MiBps: 0},                     // nothing measured: left out
	}
	want := []limitSummary{
		{LimitLoopback, 1 << 20, Spread{Median: 100, Min: 100, Max: 100, N: 1}},
		{LimitSendfile, 256 << 10, Spread{Median: 200, Min: 100, Max: 300, N: 3}},
		{"custom", 4096, Spread{Median: 7, Min: 7, Max: 7, N: 1}},
	}
	if got := summarizeLimits(limits); !reflect.DeepEqual(got, want) {
		t.Errorf("summarizeLimits =\n%+v\nwant\n%+v", got, want)
	}
	var buf bytes.Buffer
	if err := WriteLimits(&buf, limits); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[2], "sendfile") || !strings.Contains(lines[2], "256") || !strings.Contains(lines[2], "200") {
		t.Errorf("table:\n%s", buf.String())
	}
}

func TestReadLimitsBad(t *testing.T) {
	if _, err := ReadLimits(strings.NewReader(`{"limit":"sendfile"} {"rep":"one"}`)); err == nil {
		t.Error("a bad line read")
	}
}
