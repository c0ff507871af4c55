package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kzero/bench"
	"kzero/tools"
)

func (c *cli) benchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the benchmark suite, measure the machine's limits, render reports",
	}
	cmd.AddCommand(c.benchRun(), c.benchLimits(), c.benchWarm(), c.benchReport())
	return cmd
}

func (c *cli) benchRun() *cobra.Command {
	opts := bench.Options{Out: c.stdout, Progress: c.stderr}
	var start, compare string
	var warmGiB float64
	cmd := &cobra.Command{
		Use:   "run WORKLOAD...",
		Short: "Run workloads against a broker, or two to compare",
		Long: `Run workloads against --brokers, a broker it starts (--start), or two
brokers in turn (--compare). WORKLOAD is a .json file, a shipped workload's
name, or all; A and B of --compare are host:port, kzero or kfake.`,
		Example: "  kzctl bench run produce-1k-max latency-1k-50mbs --compare kzero,kfake --out results",
		Args:    cobra.MinimumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			names := []string{"all"}
			shipped, _ := bench.ShippedWorkloads()
			for _, w := range shipped {
				names = append(names, w.Name)
			}
			return names, cobra.ShellCompDirectiveDefault // and .json files
		},
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, names []string) error {
			if opts.Reps < 1 || opts.Scale <= 0 || opts.Scale > 1000 {
				return fmt.Errorf("bench run: --reps ≥ 1 and 0 < --scale ≤ 1000: %w", tools.ErrUsage)
			}
			if warmGiB < 0 || warmGiB > 1024 {
				return fmt.Errorf("bench run: --warm %v: want 0..1024 GiB: %w", warmGiB, tools.ErrUsage)
			}
			opts.Warm = int64(warmGiB * (1 << 30))
			opts.JSON = env.Format == tools.JSON
			switch {
			case start != "" && compare != "":
				return fmt.Errorf("bench run: --start or --compare, not both: %w", tools.ErrUsage)
			case start != "":
				if start != "kzero" && start != "kfake" {
					return fmt.Errorf("bench run: --start %q: want kzero or kfake: %w", start, tools.ErrUsage)
				}
				opts.Targets = []bench.Target{{Label: start, Start: start}}
			case compare != "":
				parts := strings.Split(compare, ",")
				if len(parts) != 2 {
					return fmt.Errorf("bench run: --compare %q: want A,B: %w", compare, tools.ErrUsage)
				}
				for _, p := range parts {
					t, err := bench.ParseTarget(p)
					if err != nil {
						return fmt.Errorf("bench run: --compare: %w: %w", err, tools.ErrUsage)
					}
					opts.Targets = append(opts.Targets, t)
				}
			default:
				addr := strings.Join(env.Brokers, ",")
				opts.Targets = []bench.Target{{Label: addr, Addr: addr}}
			}
			workloads, err := bench.ResolveWorkloads(names)
			if err != nil {
				return err
			}
			_, err = bench.Run(ctx, workloads, opts)
			return err
		}),
	}
	f := cmd.Flags()
	f.StringVar(&start, "start", "", "start this broker on loopback and run against it: kzero or kfake")
	f.StringVar(&compare, "compare", "", "`A,B`: run against both, alternating; each host:port, kzero or kfake")
	f.IntVar(&opts.Reps, "reps", 1, "repetitions of each workload on each broker")
	f.Float64Var(&opts.Scale, "scale", 1, "multiply record counts and durations (0.01 for a smoke run)")
	f.StringVar(&opts.OutDir, "out", "", "write results.jsonl and summary.txt to this `folder`")
	f.StringVar(&opts.KzeroBin, "kzero-bin", "", "the kzero binary --start runs (default: build it)")
	f.BoolVar(&opts.Profile, "pprof", false, "save CPU and allocation profiles of a started kzero into --out")
	f.Float64Var(&warmGiB, "warm", 0, "before each run, write and delete a file of this many `GiB`, so that appends land in a warm page cache (see bench warm)")
	f.StringVar(&opts.WarmDir, "warm-dir", "", "the `folder` --warm writes in (default: the system's temporary folder, where started brokers keep their logs)")
	cmd.RegisterFlagCompletionFunc("start", values("kzero", "kfake"))
	cmd.MarkFlagDirname("out")
	return cmd
}

func (c *cli) benchLimits() *cobra.Command {
	opts := bench.LimitOptions{Progress: c.stderr}
	cmd := &cobra.Command{
		Use:   "limits",
		Short: "Measure the machine's limits: loopback TCP, sendfile, file appends",
		Long: `Measure the limits of the paths a broker's bytes take on this machine: one
loopback TCP connection, sendfile from the page cache to a loopback socket, and
write() appended to a file. -o json prints JSON lines.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := tools.ParseFormat(c.output)
			if err != nil {
				return err
			}
			if opts.Duration <= 0 || opts.Reps < 1 {
				return fmt.Errorf("bench limits: --duration > 0 and --reps ≥ 1: %w", tools.ErrUsage)
			}
			limits, err := bench.MeasureLimits(cmd.Context(), opts)
			var werr error
			if format == tools.JSON {
				enc := json.NewEncoder(c.stdout)
				for _, l := range limits {
					if werr = enc.Encode(l); werr != nil {
						break
					}
				}
			} else {
				werr = bench.WriteLimits(c.stdout, limits)
			}
			return errors.Join(err, werr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.OutDir, "out", "", "write limits.jsonl and limits.json to this `folder` (a results folder)")
	f.StringVar(&opts.Dir, "dir", "", "scratch files go in this `folder` (default: the system's temporary folder, where started brokers keep their logs)")
	f.DurationVar(&opts.Duration, "duration", 2*time.Second, "length of each measurement")
	f.IntVar(&opts.Reps, "reps", 3, "measurements of each limit, taken in turn")
	cmd.MarkFlagDirname("out")
	cmd.MarkFlagDirname("dir")
	return cmd
}

func (c *cli) benchWarm() *cobra.Command {
	var gib float64
	var dir string
	cmd := &cobra.Command{
		Use:   "warm",
		Short: "Bring the page cache to a steady state: write and delete a file",
		Long: `Write a file of --size GiB (1 MiB appends, no fsync) and delete it, so that the
next appends land in page-cache pages just freed, as a long-running broker's do
when retention frees what it appended, rather than in memory a virtual machine's
host must fault in (bench limits: file-append against file-append-cold). It
prints the rate it wrote at: near the file-append limit the memory was warm
already, near file-append-cold it was not.

On a VM whose balloon reports free pages to the host the effect lasts seconds:
to measure runs warm, use bench run --warm, which warms before every run and
says so in each result.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if gib <= 0 || gib > 1024 {
				return fmt.Errorf("bench warm: --size %v: want 0 < GiB ≤ 1024: %w", gib, tools.ErrUsage)
			}
			w, err := bench.Warm(cmd.Context(), dir, int64(gib*(1<<30)))
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "wrote and deleted %.2f GiB in %.1fs: %.0f MiB/s\n", float64(w.Bytes)/(1<<30), w.Seconds, w.MiBps)
			return nil
		},
	}
	f := cmd.Flags()
	f.Float64Var(&gib, "size", 4, "how many `GiB` to write")
	f.StringVar(&dir, "dir", "", "the `folder` to write in (default: the system's temporary folder, where started brokers keep their logs)")
	cmd.MarkFlagDirname("dir")
	return cmd
}

func (c *cli) benchReport() *cobra.Command {
	var opts bench.ReportOptions
	cmd := &cobra.Command{
		Use:     "report DIR",
		Short:   "Render a results folder as SVG plots and, with --markdown, PERFORMANCE.md",
		Example: "  kzctl bench report results --out docs/perf --markdown PERFORMANCE.md",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if opts.Format != "svg" {
				return fmt.Errorf("bench report: --format %q: only svg is supported: %w", opts.Format, tools.ErrUsage)
			}
			written, err := bench.Report(cmd.Context(), opts)
			for _, w := range written {
				fmt.Fprintln(c.stdout, w)
			}
			if err != nil {
				return err
			}
			plots := opts.Out
			if plots == "" {
				plots = filepath.Join(opts.Dir, "plots")
			}
			for _, s := range bench.StaleFiles(plots, written) {
				fmt.Fprintf(c.stderr, "kzctl: %s is not from this report (delete it if it is stale)\n", s)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Out, "out", "", "write the plots into this `folder` (default DIR/plots)")
	f.StringVar(&opts.Format, "format", "svg", "plot format: svg (png is not supported)")
	f.StringVar(&opts.Markdown, "markdown", "", "also write this Markdown `file` (PERFORMANCE.md), linking to the plots")
	f.StringVar(&opts.Goals, "goals", "", "goals to check, a JSON `file` (default: kzero's own)")
	cmd.RegisterFlagCompletionFunc("format", values("svg"))
	cmd.MarkFlagDirname("out")
	cmd.MarkFlagFilename("goals", "json")
	cmd.MarkFlagFilename("markdown", "md")
	return cmd
}
