package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Command runs the bench subcommands that need no broker, for kzctl:
//
//	bench report DIR [--out DIR] [--format svg] [--markdown FILE] [--goals FILE]
//	bench limits [--out DIR] [--dir DIR] [--duration D] [--reps N] [-o text|json]
//
// args begin with the subcommand's name; flags may come before or after
// the arguments. Usage errors wrap usage, so the caller can tell them from
// failures (kzctl exits 2 for those). A -h prints the flags and returns nil.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer, usage error) error {
	if len(args) == 0 {
		return fmt.Errorf("bench: want report or limits: %w", usage)
	}
	switch args[0] {
	case "report":
		return reportCommand(ctx, args[1:], stdout, stderr, usage)
	case "limits":
		return limitsCommand(ctx, args[1:], stdout, stderr, usage)
	}
	return fmt.Errorf("bench %q: want report or limits: %w", args[0], usage)
}

func reportCommand(ctx context.Context, args []string, stdout, stderr io.Writer, usage error) error {
	fs := flag.NewFlagSet("kzctl bench report", flag.ContinueOnError)
	var opts ReportOptions
	fs.StringVar(&opts.Out, "out", "", "write the plots into this folder (default DIR/plots)")
	fs.StringVar(&opts.Format, "format", "svg", "plot format: svg (png is not supported)")
	fs.StringVar(&opts.Markdown, "markdown", "", "also write this Markdown page (PERFORMANCE.md), linking to the plots")
	fs.StringVar(&opts.Goals, "goals", "", "goals to check, a JSON file (default: kzero's own)")
	pos, err := parseFlags(fs, args, stderr, usage)
	if err != nil {
		return ignoreHelp(err)
	}
	if len(pos) != 1 {
		return fmt.Errorf("bench report: want one results folder: %w", usage)
	}
	opts.Dir = pos[0]
	if opts.Format != "svg" {
		return fmt.Errorf("bench report: --format %q: only svg is supported: %w", opts.Format, usage)
	}
	written, err := Report(ctx, opts)
	for _, w := range written {
		fmt.Fprintln(stdout, w)
	}
	if err != nil {
		return err
	}
	dir := opts.Out
	if dir == "" {
		dir = opts.Dir + "/plots"
	}
	for _, s := range staleFiles(dir, written) {
		fmt.Fprintf(stderr, "kzctl: %s is not from this report (delete it if it is stale)\n", s)
	}
	return nil
}

func limitsCommand(ctx context.Context, args []string, stdout, stderr io.Writer, usage error) error {
	fs := flag.NewFlagSet("kzctl bench limits", flag.ContinueOnError)
	opts := LimitOptions{Progress: stderr}
	fs.StringVar(&opts.OutDir, "out", "", "write limits.jsonl and limits.json to this folder (a results folder)")
	fs.StringVar(&opts.Dir, "dir", "", "scratch files go here (default: the system's temporary folder, where started brokers keep their logs)")
	fs.DurationVar(&opts.Duration, "duration", 2*time.Second, "length of each measurement")
	fs.IntVar(&opts.Reps, "reps", 3, "measurements of each limit, taken in turn")
	format := fs.String("o", "text", "output: text (a table) or json (JSON lines)")
	pos, err := parseFlags(fs, args, stderr, usage)
	if err != nil {
		return ignoreHelp(err)
	}
	if len(pos) != 0 || opts.Duration <= 0 || opts.Reps < 1 || *format != "text" && *format != "json" {
		return fmt.Errorf("bench limits: no arguments, --duration > 0, --reps ≥ 1, -o text or json: %w", usage)
	}
	limits, err := MeasureLimits(ctx, opts)
	var werr error
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		for _, l := range limits {
			if werr = enc.Encode(l); werr != nil {
				break
			}
		}
	} else {
		werr = WriteLimits(stdout, limits)
	}
	return errors.Join(err, werr)
}

// errHelpShown is a -h whose flags were printed.
var errHelpShown = errors.New("help shown")

func ignoreHelp(err error) error {
	if errors.Is(err, errHelpShown) {
		return nil
	}
	return err
}

// parseFlags parses args with flags allowed between the arguments and
// returns the arguments; everything after "--" is one.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer, usage error) ([]string, error) {
	fs.SetOutput(io.Discard)
	pos := []string{}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(stderr, "Usage of %s:\n", fs.Name())
				fs.SetOutput(stderr)
				fs.PrintDefaults()
				return nil, errHelpShown
			}
			return nil, fmt.Errorf("%s: %s: %w", fs.Name(), strings.TrimSpace(err.Error()), usage)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}
