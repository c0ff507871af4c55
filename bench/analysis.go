package bench

import (
	"strings"
)

// reportMetrics are the figures the report shows: the comparison's
// Metrics and a few more that only a report has room for.
var reportMetrics = []Metric{
	comparedMetric("produce MiB/s"),
	{"produce records/s", "higher", func(r Result) (float64, bool) {
		return field(r.Produce != nil, func() float64 { return r.Produce.RecordsPerSec })
	}},
	comparedMetric("consume MiB/s"),
	comparedMetric("first record s"),
	comparedMetric("p50 ms"),
	{"p90 ms", "lower", func(r Result) (float64, bool) {
		return field(r.Latency != nil && r.Latency.P90 > 0, func() float64 { return r.Latency.P90 })
	}},
	comparedMetric("p99 ms"),
	comparedMetric("p99.9 ms"),
	{"max ms", "lower", func(r Result) (float64, bool) {
		return field(r.Latency != nil, func() float64 { return r.Latency.Max })
	}},
	comparedMetric("broker CPU s/GiB"),
	{"broker peak RSS MiB", "lower", func(r Result) (float64, bool) {
		return field(r.Broker != nil, func() float64 { return float64(r.Broker.PeakRSSBytes) / (1 << 20) })
	}},
	comparedMetric("client CPU s/GiB"),
}

// comparedMetric returns the metric of Metrics named name.
func comparedMetric(name string) Metric {
	for _, m := range Metrics {
		if m.Name == name {
			return m
		}
	}
	panic("bench: no metric " + name) // a typo in this file, found by any test
}

func reportMetric(name string) (Metric, bool) {
	for _, m := range reportMetrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// analysis is a results folder reduced to what the report shows.
type analysis struct {
	f         *Folder
	targets   []string // targets[0] is the subject, targets[1] (if any) its peer
	workloads []string
	kinds     map[string]Kind
	compare   []Comparison // subject against peer, over reportMetrics
	limits    []limitSummary
}

func analyse(f *Folder) *analysis {
	a := &analysis{f: f, targets: f.Targets(), limits: summarizeLimits(f.Limits)}
	a.workloads, a.kinds = f.Workloads()
	if len(a.targets) >= 2 {
		a.compare = compareMetrics(f.Results, a.targets[0], a.targets[1], reportMetrics)
	}
	return a
}

func (a *analysis) subject() string { return a.targets[0] }

// peer is the target the subject is compared with; "" when there is none.
func (a *analysis) peer() string {
	if len(a.targets) < 2 {
		return ""
	}
	return a.targets[1]
}

// spread is a metric's median and range over the runs of a workload on a
// target that succeeded and have it.
func (a *analysis) spread(workload, target string, m Metric) Spread {
	var xs []float64
	for _, r := range a.f.Results {
		if r.Workload != workload || r.Target != target || r.Error != "" {
			continue
		}
		if v, ok := m.Get(r); ok {
			xs = append(xs, v)
		}
	}
	return spreadOf(xs)
}

// comparison is the subject-to-peer comparison of a workload's metric.
func (a *analysis) comparison(workload, metric string) (Comparison, bool) {
	for _, c := range a.compare {
		if c.Workload == workload && c.Metric == metric {
			return c, true
		}
	}
	return Comparison{}, false
}

// limitFor returns the physical limit a throughput metric is bounded by,
// its median in MiB/s and the limits it is the lower of. Every produced
// byte crosses loopback TCP and is appended to a file; every consumed byte
// crosses loopback TCP, and a zero-copy broker sends it with sendfile.
func (a *analysis) limitFor(metric string) (float64, string, bool) {
	var names []string
	switch metric {
	case "produce MiB/s":
		names = []string{LimitLoopback, LimitAppend}
	case "consume MiB/s":
		names = []string{LimitLoopback, LimitSendfile}
	default:
		return 0, "", false
	}
	best, which := 0.0, ""
	for _, n := range names {
		for _, l := range a.limits {
			if l.Limit == n && (best == 0 || l.MiBps.Median < best) {
				best, which = l.MiBps.Median, n
			}
		}
	}
	return best, which, best > 0
}

// share is the median of a workload's throughput metric on target as a
// fraction of its limit.
//
// A workload held to a fixed rate has no share: its throughput is the
// rate it was asked for.
func (a *analysis) share(workload, target, metric string) (float64, bool) {
	if w, ok := a.spec(workload); ok && w.Rate > 0 {
		return 0, false
	}
	lim, _, ok := a.limitFor(metric)
	m, mok := reportMetric(metric)
	if !ok || !mok {
		return 0, false
	}
	s := a.spread(workload, target, m)
	if s.N == 0 {
		return 0, false
	}
	return s.Median / lim, true
}

// failures are the runs that failed.
func (a *analysis) failures() []Result {
	var out []Result
	for _, r := range a.f.Results {
		if r.Error != "" {
			out = append(out, r)
		}
	}
	return out
}

// reps is the highest repetition in the results.
func (a *analysis) reps() int {
	n := 0
	for _, r := range a.f.Results {
		n = max(n, r.Rep)
	}
	return n
}

// scale is the scale of the runs (1 when they were not scaled).
func (a *analysis) scale() float64 {
	for _, r := range a.f.Results {
		if r.Scale != 0 {
			return r.Scale
		}
	}
	return 1
}

// advantage turns a ratio subject/peer into how many times better the
// subject is: the ratio where higher is better, its inverse where lower is.
func advantage(c Comparison) float64 {
	if c.Better == "lower" {
		if c.Ratio == 0 {
			return 0
		}
		return 1 / c.Ratio
	}
	return c.Ratio
}

// slug makes a name safe for a file name.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// spec is the workload as it was run, when run.json says.
func (a *analysis) spec(name string) (Workload, bool) {
	if a.f.Run != nil {
		for _, w := range a.f.Run.Workloads {
			if w.Name == name {
				return w, true
			}
		}
	}
	return Workload{}, false
}
