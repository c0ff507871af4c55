package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ReportOptions say what Report renders from a results folder.
type ReportOptions struct {
	Dir      string // the results folder
	Out      string // where the plots go; empty is Dir/plots
	Format   string // "svg" (the only one); empty is svg
	Markdown string // PERFORMANCE.md to write, linking to the plots; empty for none
	Goals    string // a goals file (JSON); empty is kzero's own goals
}

// ErrFormat is a plot format Report cannot write.
var ErrFormat = errors.New("plot format: only svg is supported")

// Report renders a results folder: the plots into Out and, when asked,
// PERFORMANCE.md. It returns the files it wrote. Plots are SVG only:
// drawn as text they need no dependency, render the same every time, and
// show on GitHub and in any browser; a PNG would need a rasteriser and a
// font.
func Report(ctx context.Context, opts ReportOptions) ([]string, error) {
	if opts.Format != "" && opts.Format != "svg" {
		return nil, fmt.Errorf("%q: %w", opts.Format, ErrFormat)
	}
	if opts.Out == "" {
		opts.Out = filepath.Join(opts.Dir, "plots")
	}
	goals, err := LoadGoals(opts.Goals)
	if err != nil {
		return nil, err
	}
	f, err := LoadFolder(opts.Dir)
	if err != nil {
		return nil, err
	}
	a := analyse(f)
	plots := a.plots()
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, p := range plots {
		name := filepath.Join(opts.Out, p.File)
		if err := os.WriteFile(name, []byte(p.SVG), 0o644); err != nil {
			return written, err
		}
		written = append(written, name)
	}
	if opts.Markdown == "" {
		return written, nil
	}
	rel, err := filepath.Rel(filepath.Dir(opts.Markdown), opts.Out)
	if err != nil {
		return written, fmt.Errorf("plots folder %s from %s: %w", opts.Out, opts.Markdown, err)
	}
	var md bytes.Buffer
	if err := a.renderPerformance(ctx, &md, filepath.ToSlash(opts.Dir), filepath.ToSlash(rel), plots, goals); err != nil {
		return written, fmt.Errorf("render %s: %w", opts.Markdown, err)
	}
	if err := os.WriteFile(opts.Markdown, md.Bytes(), 0o644); err != nil {
		return written, err
	}
	return append(written, opts.Markdown), nil
}

// StaleFiles are the plots in dir that Report did not just write (written):
// left by an earlier report over other workloads.
func StaleFiles(dir string, written []string) []string {
	keep := map[string]bool{}
	for _, w := range written {
		keep[filepath.Clean(w)] = true
	}
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".svg") && !keep[name] {
			out = append(out, name)
		}
	}
	return out
}
