package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Machine is what the report says about the machine a results folder was
// measured on, read on that machine when the results were written.
type Machine struct {
	CPUModel    string `json:"cpu_model"`
	CPUs        int    `json:"cpus"` // what the process may use, as nproc counts
	MemoryBytes int64  `json:"memory_bytes"`
	Kernel      string `json:"kernel"` // uname -s -r
	GoVersion   string `json:"go_version"`
	Arch        string `json:"arch"` // GOOS/GOARCH
}

// ReadMachine reads the facts of this machine. A fact it cannot read is
// left empty: the results are worth keeping without it.
func ReadMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Arch: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = parseCPUModel(b)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemoryBytes, _ = parseMemTotal(b)
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	return m
}

// parseCPUModel returns the first "model name" of /proc/cpuinfo (x86), or
// failing that its first "Model" or "Hardware" line (arm); "" if none.
func parseCPUModel(cpuinfo []byte) string {
	var fallback string
	for line := range strings.Lines(string(cpuinfo)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.Join(strings.Fields(v), " ")
		switch k {
		case "model name":
			return v
		case "Model", "Hardware":
			if fallback == "" {
				fallback = v
			}
		}
	}
	return fallback
}

// parseMemTotal returns MemTotal from /proc/meminfo, in bytes.
func parseMemTotal(meminfo []byte) (int64, error) {
	for line := range strings.Lines(string(meminfo)) {
		v, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("MemTotal %q: want N kB", strings.TrimSpace(v))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<52 {
			return 0, fmt.Errorf("MemTotal %q: want N kB", strings.TrimSpace(v))
		}
		return kb << 10, nil
	}
	return 0, errors.New("no MemTotal line")
}

// Step is how one step of the suite (a run of workloads, a measurement of
// the limits) filled a results folder: what was typed, when, and where.
// It is saved as STEP.json beside the results.
type Step struct {
	Step     string    `json:"step"` // "run" or "limits"
	Command  []string  `json:"command"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Machine  Machine   `json:"machine"`
	// Workloads are those a run ran, as scaled.
	Workloads []Workload `json:"workloads,omitempty"`
}

// newStep begins a step: this process's command line, now, this machine.
func newStep(name string) Step {
	cmd := append([]string(nil), os.Args...)
	if len(cmd) > 0 {
		cmd[0] = filepath.Base(cmd[0])
	}
	return Step{Step: name, Command: cmd, Started: time.Now().UTC(), Machine: ReadMachine()}
}

// save finishes the step and writes it into dir as STEP.json.
func (s Step) save(dir string) error {
	s.Finished = time.Now().UTC()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, s.Step+".json"), append(b, '\n'), 0o644)
}

// loadStep reads dir/name.json; a folder without one gives nil.
func loadStep(dir, name string) (*Step, error) {
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s Step
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s.json: %w", name, err)
	}
	return &s, nil
}
