package bench

import (
	"reflect"
	"runtime"
	"testing"
)

func TestParseCPUModel(t *testing.T) {
	for in, want := range map[string]string{
		"processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC  7B13 64-Core Processor\nprocessor\t: 1\nmodel name\t: other\n": "AMD EPYC 7B13 64-Core Processor",
		"processor\t: 0\nBogoMIPS\t: 50.00\nModel\t\t: Raspberry Pi 4 Model B\n":                                                           "Raspberry Pi 4 Model B",
		"Hardware\t: BCM2835\nModel\t: Pi\n": "BCM2835",
		"":                                   "",
		"no colon here\n":                    "",
	} {
		if got := parseCPUModel([]byte(in)); got != want {
			t.Errorf("parseCPUModel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseMemTotal(t *testing.T) {
	got, err := parseMemTotal([]byte("MemTotal:       24683568 kB\nMemFree:        23443000 kB\n"))
	if err != nil || got != 24683568<<10 {
		t.Errorf("parseMemTotal = %d, %v", got, err)
	}
	for _, bad := range []string{"", "MemFree: 1 kB\n", "MemTotal: 12\n", "MemTotal: -1 kB\n", "MemTotal: 1 MB\n", "MemTotal: 99999999999999999999 kB\n"} {
		if _, err := parseMemTotal([]byte(bad)); err == nil {
			t.Errorf("parseMemTotal(%q) took it", bad)
		}
	}
}

func TestReadMachine(t *testing.T) {
	m := ReadMachine()
	if m.CPUs != runtime.NumCPU() || m.GoVersion != runtime.Version() || m.Arch != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("machine %+v", m)
	}
	if runtime.GOOS == "linux" && (m.Kernel == "" || m.MemoryBytes <= 0) {
		t.Errorf("machine %+v: no kernel or memory", m)
	}
}

func TestStepRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if s, err := loadStep(dir, "run"); s != nil || err != nil {
		t.Errorf("loadStep of a missing file = %v, %v", s, err)
	}
	s := newStep("run")
	s.Workloads = []Workload{{Name: "w", Kind: KindProduce, RecordBytes: 10, Duration: Duration(1e9)}}
	if err := s.save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := loadStep(dir, "run")
	if err != nil || got == nil {
		t.Fatalf("loadStep = %v, %v", got, err)
	}
	if got.Finished.Before(got.Started) || len(got.Command) == 0 {
		t.Errorf("step %+v", got)
	}
	got.Finished = s.Finished
	if !got.Started.Equal(s.Started) || !reflect.DeepEqual(got.Workloads, s.Workloads) || got.Machine != s.Machine {
		t.Errorf("round trip: %+v\nwant %+v", got, s)
	}
}
