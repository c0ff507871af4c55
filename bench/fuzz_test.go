package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseWorkload: any bytes give a workload that validates, or an
// error; never a panic. Validating a parsed workload again changes nothing.
func FuzzParseWorkload(f *testing.F) {
	files, _ := filepath.Glob("workloads/*.json")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"name":"x","kind":"mixed","record_bytes":8,"duration":"1s","warmup":"0.5s","linger":"0s"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ParseWorkload(data)
		if err != nil {
			return
		}
		again := w
		if err := again.Validate(); err != nil || again != w {
			t.Fatalf("validating again: %v, %+v became %+v", err, w, again)
		}
		_ = w.Scaled(0.5)
	})
}

// FuzzProcFiles: /proc parsers never panic on any bytes.
func FuzzProcFiles(f *testing.F) {
	f.Add([]byte("4242 (kz (er) o) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0\n"))
	f.Add([]byte("Name:\tkzero\nVmHWM:\t    2048 kB\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseStatCPU(data)
		parseStatusHWM(data)
	})
}
