package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Options say how Run runs a set of workloads.
type Options struct {
	Targets  []Target // one, or two to compare
	Reps     int      // repetitions of each workload on each target; 0 is 1
	Scale    float64  // multiplies record counts and durations; 0 is 1
	OutDir   string   // results.jsonl, summary.txt and run.json go here, when set
	KzeroBin string   // the kzero binary to start; empty builds it
	JSON     bool     // Out gets JSON lines instead of tables
	// Profile captures CPU (over the measured phase, where its length can
	// be told in advance) and allocation profiles from each kzero the
	// suite started, into OutDir.
	Profile bool
	// Warm, when > 0, is how many bytes Warm writes and frees right before
	// each run (in WarmDir, default the system's temporary folder, where
	// started brokers keep their logs), so that runs are measured in a
	// warm page cache; results say so in PageCache.
	Warm    int64
	WarmDir string
	Out     io.Writer
	// Progress gets a line per run as it finishes and, when it is a
	// terminal, a bar for the run in progress; nil for none.
	Progress io.Writer
}

// Run runs every workload against every target, alternating targets within
// each repetition (A B A B), and writes the results. A run that fails is
// recorded with its error and the others go on; the errors are returned
// joined. Brokers it started are stopped before it returns.
func Run(ctx context.Context, workloads []Workload, opts Options) ([]Result, error) {
	if len(opts.Targets) == 0 {
		return nil, errors.New("no target")
	}
	if opts.Reps <= 0 {
		opts.Reps = 1
	}
	if opts.Scale <= 0 {
		opts.Scale = 1
	}
	if opts.Profile && opts.OutDir == "" {
		return nil, errors.New("profiles need an output folder")
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	step := newStep("run")
	var jsonl io.Writer = io.Discard
	if opts.OutDir != "" {
		if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(opts.OutDir, "results.jsonl"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		jsonl = f
	}

	targets := append([]Target(nil), opts.Targets...)
	if len(targets) == 2 && targets[0].Label == targets[1].Label {
		targets[1].Label += "#2" // --compare kfake,kfake: keep the two apart
	}
	procs := make([]*Process, len(targets))
	profs := make([]*profiler, len(targets))
	for i, t := range targets {
		if t.Start == "" {
			continue
		}
		dir, err := os.MkdirTemp("", "kzctl-bench-"+t.Start+"-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		b, err := startBroker(ctx, t.Start, opts.KzeroBin, dir)
		if err != nil {
			return nil, err
		}
		defer b.stop()
		targets[i].Addr, procs[i] = b.addr, b.proc
		if opts.Profile && b.admin != "" {
			profs[i] = &profiler{admin: b.admin, dir: opts.OutDir}
		}
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "started %s on %s\n", t.Start, b.addr)
		}
	}

	bar := opts.Progress != nil && isTerminal(opts.Progress)
	var results []Result
	var errs []error
	for _, w := range workloads {
		w = w.Scaled(opts.Scale)
		step.Workloads = append(step.Workloads, w)
		for rep := 1; rep <= opts.Reps; rep++ {
			for i, t := range targets {
				if ctx.Err() != nil {
					return results, errors.Join(append(errs, ctx.Err())...)
				}
				// Start every run from a clean page cache: dirty pages left
				// by the previous run (a broker that writes files) would be
				// written back during this one and throttle its writes,
				// charging one run for another's bytes; an in-memory peer
				// never pays that.
				syncFilesystems()
				if opts.Warm > 0 {
					wu, err := Warm(ctx, opts.WarmDir, opts.Warm)
					if err != nil {
						return results, fmt.Errorf("%s on %s, rep %d: %w", w.Name, t.Label, rep, err)
					}
					if opts.Progress != nil {
						fmt.Fprintf(opts.Progress, "warmed %.1f GiB at %.0f MiB/s\n", float64(wu.Bytes)/(1<<30), wu.MiBps)
					}
				}
				began := time.Now()
				prefix := fmt.Sprintf("%s.%s.rep%d", w.Name, t.Label, rep)
				// The CPU profile covers the measured phase, where its
				// length can be told in advance.
				var cpuName string
				var cpuErr error
				cpuTaken := false
				var measuring func(time.Duration) func()
				if profs[i] != nil {
					measuring = func(expect time.Duration) func() {
						if expect <= 0 {
							return nil
						}
						wait := profs[i].cpu(ctx, expect, prefix+".cpu.pprof")
						cpuTaken = true
						return func() { cpuName, cpuErr = wait() }
					}
				}
				m := new(meter)
				var pb *progressBar
				if bar {
					pb = startProgress(opts.Progress, fmt.Sprintf("%s on %s, rep %d/%d", w.Name, t.Label, rep, opts.Reps), w, m)
				}
				res, err := runWorkload(ctx, w, t.Addr, procs[i], m, measuring)
				if pb != nil {
					pb.stop()
				}
				if profs[i] != nil {
					var perrs []error
					if cpuTaken {
						res.Profiles, perrs = appendProfile(res.Profiles, perrs, cpuName, cpuErr)
					}
					name, err := profs[i].allocs(ctx, prefix+".allocs.pprof")
					res.Profiles, perrs = appendProfile(res.Profiles, perrs, name, err)
					if perr := errors.Join(perrs...); perr != nil && opts.Progress != nil {
						fmt.Fprintf(opts.Progress, "%s on %s, rep %d: %v\n", w.Name, t.Label, rep, perr)
					}
				}
				res.Target, res.Rep = t.Label, rep
				if opts.Warm > 0 {
					res.PageCache = PageCacheWarm
				}
				if opts.Scale != 1 {
					res.Scale = opts.Scale
				}
				if err != nil {
					res.Error = err.Error()
					errs = append(errs, fmt.Errorf("%s on %s, rep %d: %w", w.Name, t.Label, rep, err))
				}
				results = append(results, res)
				if err := WriteJSONLines(jsonl, []Result{res}); err != nil {
					return results, fmt.Errorf("results: %w", err)
				}
				if opts.Progress != nil {
					status := "ok"
					if err != nil {
						status = "error: " + err.Error()
					}
					fmt.Fprintf(opts.Progress, "%s on %s, rep %d/%d: %s (%.1fs)\n", w.Name, t.Label, rep, opts.Reps,
						status, time.Since(began).Seconds())
				}
			}
		}
	}

	var comparisons []Comparison
	if len(targets) == 2 {
		comparisons = Compare(results, targets[0].Label, targets[1].Label)
	}
	if err := writeSummary(opts.Out, results, comparisons, opts.JSON); err != nil {
		return results, err
	}
	if opts.OutDir != "" {
		f, err := os.Create(filepath.Join(opts.OutDir, "summary.txt"))
		if err != nil {
			return results, err
		}
		err = writeSummary(f, results, comparisons, false)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return results, err
		}
		if err := step.save(opts.OutDir); err != nil {
			return results, err
		}
	}
	return results, errors.Join(errs...)
}

// writeSummary writes the results, and the comparison when there is one, as
// tables or as JSON lines.
func writeSummary(w io.Writer, results []Result, cs []Comparison, asJSON bool) error {
	if asJSON {
		return WriteJSONLines(w, results)
	}
	if err := WriteTable(w, results); err != nil {
		return err
	}
	if len(cs) > 0 {
		fmt.Fprintln(w)
		return WriteComparison(w, cs)
	}
	return nil
}

// appendProfile records a captured profile, or its error: a profile that
// failed does not fail the run.
func appendProfile(names []string, errs []error, name string, err error) ([]string, []error) {
	if err != nil {
		return names, append(errs, err)
	}
	return append(names, name), errs
}
