package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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
	f.Add([]byte("cpu  2024109 31161 1361131 3344526 62053 0 159781 75552 0 0\nprocs_running 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseStatCPU(data)
		parseStatusHWM(data)
		if s, err := parseProcStat(data); err == nil && (s.idle > s.total || s.steal > s.total) {
			t.Fatalf("%+v: idle or steal above the total", s)
		}
	})
}

// FuzzMachineFiles: the /proc/cpuinfo and /proc/meminfo parsers never
// panic, and a MemTotal they take is a whole number of KiB.
func FuzzMachineFiles(f *testing.F) {
	f.Add([]byte("processor\t: 0\nmodel name\t: AMD EPYC\n"))
	f.Add([]byte("MemTotal:       24683568 kB\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseCPUModel(data)
		if n, err := parseMemTotal(data); err == nil && (n < 0 || n%1024 != 0) {
			t.Fatalf("MemTotal %d", n)
		}
	})
}

// FuzzPprofTop: any text in place of go tool pprof's gives a listing or an
// error; every row of a listing has its figures and a function.
func FuzzPprofTop(f *testing.F) {
	f.Add([]byte("File: kzero\nType: cpu\nDuration: 7.01s, Total samples = 5.20s (74.18%)\nShowing nodes accounting for 5.20s, 100% of 5.20s total\n" +
		"      flat  flat%   sum%        cum   cum%\n     1.50s 28.85% 28.85%      1.50s 28.85%  syscall.Syscall6\n" +
		"         0     0%   100%      10ms  0.19%  runtime.nanotime (inline)\n"))
	f.Add([]byte("      flat  flat%   sum%        cum   cum%\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		top, err := parsePprofTop(data)
		if err != nil {
			return
		}
		for _, r := range top.Rows {
			if r.Flat == "" || r.Cum == "" || r.Func == "" || !strings.HasSuffix(r.FlatPct, "%") {
				t.Fatalf("row %+v", r)
			}
		}
		profileSummary(top)
	})
}

// FuzzReadResults: a results folder's files, whatever their bytes, read
// into results and limits or give an error, and a report renders from
// what was read without panicking.
//
// The seeds are a few short lines, not the 11 KiB fixture: the fuzzer
// minimizes every input that finds new coverage, at a cost that grows with
// the square of its length, and fuzzes nothing meanwhile (with the fixture
// as a seed it ran 4 inputs in 30 s).
func FuzzReadResults(f *testing.F) {
	f.Add([]byte(`{"workload":"w","kind":"produce","target":"kzero","rep":1,"produce":{"mib_per_s":100,"seconds":1,"timeline":{"step_s":0.5,"mib_per_s":[90,110]}},"broker":{"cpu_s_per_gib":1,"peak_rss_bytes":1048576}}
{"workload":"w","kind":"produce","target":"kfake","rep":1,"produce":{"mib_per_s":90,"seconds":1},"broker":{"cpu_s_per_gib":2}}
{"limit":"loopback-tcp","rep":1,"mib_per_s":4000}
`))
	f.Add([]byte(`{"workload":"c","kind":"consume","target":"kzero","rep":2,"consume":{"mib_per_s":50,"seconds":2}}` + "\n"))
	f.Add([]byte(`{"limit":"loopback-tcp","rep":1,"chunk_bytes":1048576,"bytes":2113929216,"seconds":0.5,"mib_per_s":4029.5}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 8<<10 {
			return // a few lines reach every path; longer inputs only slow the fuzzer
		}
		results, rerr := ReadJSONLines(bytes.NewReader(data))
		limits, _ := ReadLimits(bytes.NewReader(data))
		if rerr != nil || len(results) == 0 {
			return
		}
		a := analyse(&Folder{Results: results, Limits: limits})
		a.plots()
		a.gaps(a.checkGoals(nil), nil)
	})
}
