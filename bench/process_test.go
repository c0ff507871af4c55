package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and parentheses; utime 250, stime 50 ticks.
	stat := "4242 (kz (er) o) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 1000000 200\n"
	got, err := parseStatCPU([]byte(stat))
	if err != nil || got != 3 {
		t.Errorf("parseStatCPU = %v, %v, want 3", got, err)
	}
	for _, bad := range []string{"", "4242 kzero S 1", "4242 (kzero) S 1 2 3", "4242 (k) S 1 2 3 4 5 6 7 8 9 10 x 0"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("parseStatCPU(%q) took it", bad)
		}
	}
}

func TestParseStatusHWM(t *testing.T) {
	got, err := parseStatusHWM([]byte("Name:\tkzero\nVmPeak:\t  9999 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1024 kB\n"))
	if err != nil || got != 2<<20 {
		t.Errorf("parseStatusHWM = %v, %v, want 2 MiB", got, err)
	}
	for _, bad := range []string{"", "VmRSS: 1 kB\n", "VmHWM: 12\n", "VmHWM: x kB\n", "VmHWM: 1 MB\n"} {
		if _, err := parseStatusHWM([]byte(bad)); err == nil {
			t.Errorf("parseStatusHWM(%q) took it", bad)
		}
	}
}

// The test process itself is a process: it has a resident set and its
// CPU time does not go backwards.
func TestProcessSampleSelf(t *testing.T) {
	p := NewProcess(os.Getpid())
	a, err := p.Sample()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 20_000_000 {
		x += i ^ x
	}
	_ = x
	p.ResetPeak()
	b, err := p.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if a.PeakRSSBytes <= 0 || b.PeakRSSBytes <= 0 || b.CPUSeconds < a.CPUSeconds {
		t.Errorf("samples %+v then %+v", a, b)
	}
}

func TestProcessSampleErrors(t *testing.T) {
	root := t.TempDir()
	p := &Process{PID: 7, proc: root}
	if _, err := p.Sample(); err == nil {
		t.Error("a missing process sampled")
	}
	dir := filepath.Join(root, "7")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "stat"), []byte("7 (x) S 1 2 3 4 5 6 7 8 9 10 300 100 0\n"), 0o644)
	if _, err := p.Sample(); err == nil || !strings.Contains(err.Error(), "status") {
		t.Errorf("no status file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "status"), []byte("VmHWM:\t4 kB\n"), 0o644)
	s, err := p.Sample()
	if err != nil || s != (Sample{CPUSeconds: 4, PeakRSSBytes: 4096}) {
		t.Errorf("Sample = %+v, %v", s, err)
	}
}
