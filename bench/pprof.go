package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// profileTop is the head of `go tool pprof -top` over one or more
// profiles (merged): the functions with the most samples.
type profileTop struct {
	Duration string // the profiles' wall time, as pprof writes it ("7.01s")
	Total    string // samples in all, and their share of the wall time ("5.2s (74.18%)")
	Rows     []frameRow
}

// frameRow is one function of a -top listing: its own samples (flat) and
// those of everything it called (cum), as pprof writes them.
type frameRow struct {
	Flat, FlatPct, SumPct, Cum, CumPct, Func string
}

// topNodes is how many functions a profile's listing keeps.
const topNodes = 15

// pprofTop runs `go tool pprof -top` on files, sorted by flat samples, or
// by cumulative ones with cum, and returns the top n functions. The
// profiles carry their symbols (Go writes them so), so none are looked up.
func pprofTop(ctx context.Context, files []string, cum bool, n int) (*profileTop, error) {
	if len(files) == 0 {
		return nil, errors.New("no profiles")
	}
	args := []string{"tool", "pprof", "-top", "-nodecount=" + strconv.Itoa(n), "-symbolize=none"}
	if cum {
		args = append(args, "-cum")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return parsePprofTop(out)
}

// parsePprofTop reads the text pprof -top writes: header lines, among them
//
//	Duration: 7.01s, Total samples = 5.20s (74.18%)
//
// then a line of column names and a row per function:
//
//	 flat  flat%   sum%        cum   cum%
//	1.50s 28.85% 28.85%      1.50s 28.85%  syscall.Syscall6
func parsePprofTop(out []byte) (*profileTop, error) {
	t := &profileTop{}
	rows := false
	for line := range strings.Lines(string(out)) {
		line = strings.TrimRight(line, "\r\n")
		if !rows {
			if d, ok := strings.CutPrefix(line, "Duration: "); ok {
				d, total, _ := strings.Cut(d, ", Total samples = ")
				// pprof pads the share: "70ms ( 3.49%)".
				t.Duration = strings.TrimSpace(d)
				t.Total = strings.ReplaceAll(strings.Join(strings.Fields(total), " "), "( ", "(")
			}
			f := strings.Fields(line)
			rows = len(f) == 5 && f[0] == "flat" && f[1] == "flat%" && f[4] == "cum%"
			continue
		}
		f := strings.Fields(line)
		if len(f) < 6 {
			return nil, fmt.Errorf("pprof -top row %q: want 5 figures and a function", line)
		}
		for _, pct := range []string{f[1], f[2], f[4]} {
			if !strings.HasSuffix(pct, "%") {
				return nil, fmt.Errorf("pprof -top row %q: %q is not a percentage", line, pct)
			}
		}
		t.Rows = append(t.Rows, frameRow{Flat: f[0], FlatPct: f[1], SumPct: f[2], Cum: f[3], CumPct: f[4],
			Func: strings.Join(f[5:], " ")})
	}
	if !rows {
		return nil, errors.New("pprof -top: no table in its output")
	}
	return t, nil
}
