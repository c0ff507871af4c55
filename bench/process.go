package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100
// on every Linux architecture Go supports.
const clockTicks = 100

// Process is a broker process the suite can observe through /proc.
type Process struct {
	PID  int
	proc string // the /proc root; tests point it elsewhere
}

// NewProcess observes the process pid.
func NewProcess(pid int) *Process { return &Process{PID: pid, proc: "/proc"} }

// Sample is a process's resource use at one moment.
type Sample struct {
	CPUSeconds   float64 // user + system, since the process started
	PeakRSSBytes int64   // VmHWM: the resident set's high-water mark
}

// Sample reads the process's CPU time and peak RSS.
func (p *Process) Sample() (Sample, error) {
	dir := fmt.Sprintf("%s/%d", p.proc, p.PID)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return Sample{}, fmt.Errorf("broker process: %w", err)
	}
	cpu, err := parseStatCPU(stat)
	if err != nil {
		return Sample{}, fmt.Errorf("broker process %d stat: %w", p.PID, err)
	}
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return Sample{}, fmt.Errorf("broker process: %w", err)
	}
	hwm, err := parseStatusHWM(status)
	if err != nil {
		return Sample{}, fmt.Errorf("broker process %d status: %w", p.PID, err)
	}
	return Sample{CPUSeconds: cpu, PeakRSSBytes: hwm}, nil
}

// ResetPeak restarts the peak RSS from the current RSS (clear_refs 5, Linux
// 4.0 and later), so a sample after a phase holds that phase's peak. Where
// the kernel refuses, the peak stays the process's lifetime peak.
func (p *Process) ResetPeak() {
	os.WriteFile(fmt.Sprintf("%s/%d/clear_refs", p.proc, p.PID), []byte("5"), 0)
}

// parseStatCPU returns utime+stime in seconds from /proc/PID/stat. The
// command name (field 2) is in parentheses and may hold spaces and
// parentheses itself, so fields are counted after its last ')'.
func parseStatCPU(stat []byte) (float64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want ≥ 13", len(f))
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("utime %q, stime %q: not tick counts", f[11], f[12])
	}
	return float64(u+s) / clockTicks, nil
}

// parseStatusHWM returns VmHWM in bytes from /proc/PID/status.
func parseStatusHWM(status []byte) (int64, error) {
	for line := range strings.Lines(string(status)) {
		v, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("VmHWM %q: want N kB", strings.TrimSpace(v))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 {
			return 0, fmt.Errorf("VmHWM %q: want N kB", strings.TrimSpace(v))
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no VmHWM line")
}
