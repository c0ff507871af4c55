package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Folder is a results folder as the report reads it: what `bench run`
// (results.jsonl, run.json, pprof files) and `bench limits` (limits.jsonl,
// limits.json) wrote into it.
type Folder struct {
	Dir        string
	Results    []Result
	Limits     []Limit // none when the limits were not measured
	Run        *Step   // nil when run.json is absent
	LimitsStep *Step   // nil when limits.json is absent
}

// LoadFolder reads a results folder; results.jsonl must be there, the
// rest may not.
func LoadFolder(dir string) (*Folder, error) {
	f := &Folder{Dir: dir}
	rf, err := os.Open(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	f.Results, err = ReadJSONLines(rf)
	rf.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rf.Name(), err)
	}
	if len(f.Results) == 0 {
		return nil, fmt.Errorf("%s: no results", rf.Name())
	}
	lf, err := os.Open(filepath.Join(dir, "limits.jsonl"))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		f.Limits, err = ReadLimits(lf)
		lf.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lf.Name(), err)
		}
	}
	if f.Run, err = loadStep(dir, "run"); err != nil {
		return nil, err
	}
	if f.LimitsStep, err = loadStep(dir, "limits"); err != nil {
		return nil, err
	}
	return f, nil
}

// Targets returns the targets of the results in the order they ran; the
// first is the subject of the report and the second its peer.
func (f *Folder) Targets() []string {
	var out []string
	for _, r := range f.Results {
		if !slices.Contains(out, r.Target) {
			out = append(out, r.Target)
		}
	}
	return out
}

// Workloads returns the workloads of the results in the order they ran,
// and the kind of each.
func (f *Folder) Workloads() ([]string, map[string]Kind) {
	var out []string
	kinds := map[string]Kind{}
	for _, r := range f.Results {
		if _, ok := kinds[r.Workload]; !ok {
			out = append(out, r.Workload)
			kinds[r.Workload] = r.Kind
		}
	}
	return out, kinds
}

// Machine is the machine the results were measured on, from run.json or
// else limits.json; nil when neither says.
func (f *Folder) Machine() *Machine {
	for _, s := range []*Step{f.Run, f.LimitsStep} {
		if s != nil {
			return &s.Machine
		}
	}
	return nil
}

// cpuProfiles returns the CPU profiles of the workload's runs on target,
// as paths.
func (f *Folder) cpuProfiles(workload, target string) []string {
	var out []string
	for _, r := range f.Results {
		if r.Workload != workload || r.Target != target || r.Error != "" {
			continue
		}
		for _, p := range r.Profiles {
			if filepath.Ext(p) == ".pprof" && filepath.Ext(p[:len(p)-len(".pprof")]) == ".cpu" {
				out = append(out, filepath.Join(f.Dir, p))
			}
		}
	}
	return out
}
