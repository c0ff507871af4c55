package bench

import (
	"fmt"
	"math"
	"strconv"
)

// plot is one chart of the report: its file name, what it shows (the alt
// text in PERFORMANCE.md) and its SVG.
type plot struct {
	File, Alt, SVG string
}

// plots draws every chart the results allow: the comparison and the
// shares of the limits, then for each workload its throughput over time
// and, where it measures latency, its percentiles and distribution.
func (a *analysis) plots() []plot {
	var out []plot
	if p, ok := a.comparePlot(); ok {
		out = append(out, p)
	}
	if p, ok := a.limitsPlot(); ok {
		out = append(out, p)
	}
	for _, w := range a.workloads {
		if p, ok := a.throughputPlot(w); ok {
			out = append(out, p)
		}
		if p, ok := a.percentilePlot(w); ok {
			out = append(out, p)
		}
		if p, ok := a.cdfPlot(w); ok {
			out = append(out, p)
		}
	}
	return out
}

// comparedInPlot are the metrics the comparison chart shows.
var comparedInPlot = []string{"produce MiB/s", "consume MiB/s", "p99 ms", "broker CPU s/GiB"}

func (a *analysis) comparePlot() (plot, bool) {
	if a.peer() == "" || len(a.compare) == 0 {
		return plot{}, false
	}
	c := barChart{
		title:    fmt.Sprintf("%s against %s: times better, median of pair ratios", a.subject(), a.peer()),
		xLabel:   fmt.Sprintf("times better than %s (log scale; right of the line: %s is better)", a.peer(), a.subject()),
		series:   comparedInPlot,
		xLog:     true,
		ref:      1,
		refLabel: "parity",
	}
	for _, w := range a.workloads {
		g := barGroup{label: w, bars: make([]*bar, len(comparedInPlot))}
		any := false
		for i, m := range comparedInPlot {
			if cmp, ok := a.comparison(w, m); ok && advantage(cmp) > 0 {
				v := advantage(cmp)
				g.bars[i] = &bar{value: v, text: strconv.FormatFloat(v, 'f', 2, 64) + "×"}
				any = true
			}
		}
		if any {
			c.groups = append(c.groups, g)
		}
	}
	if len(c.groups) == 0 {
		return plot{}, false
	}
	return plot{"compare.svg", c.title, c.svg()}, true
}

func (a *analysis) limitsPlot() (plot, bool) {
	c := barChart{
		title:  "Throughput as a share of the machine's limit",
		xLabel: "% of the lower of loopback TCP and file append (produce) or sendfile (consume), medians",
		series: a.targets,
	}
	for _, w := range a.workloads {
		for _, m := range []string{"produce MiB/s", "consume MiB/s"} {
			g := barGroup{label: w + " " + m[:len(m)-len(" MiB/s")], bars: make([]*bar, len(a.targets))}
			any := false
			for i, t := range a.targets {
				if s, ok := a.share(w, t, m); ok {
					g.bars[i] = &bar{value: s * 100, text: strconv.FormatFloat(s*100, 'f', 0, 64) + "%"}
					any = true
				}
			}
			if any {
				c.groups = append(c.groups, g)
			}
		}
	}
	if len(c.groups) == 0 {
		return plot{}, false
	}
	return plot{"limits.svg", c.title, c.svg()}, true
}

// repOpacity fades later repetitions so that the runs of one target stay
// apart on a chart.
func repOpacity(rep int) float64 { return max(0.35, 1-0.3*float64(rep-1)) }

func (a *analysis) throughputPlot(workload string) (plot, bool) {
	c := lineChart{
		title:  workload + ": throughput over time",
		xLabel: "seconds since the measured phase began",
		yLabel: "MiB/s",
	}
	for _, r := range a.f.Results {
		if r.Workload != workload || r.Error != "" {
			continue
		}
		ti := a.targetIndex(r.Target)
		for _, side := range []struct {
			name string
			t    *Throughput
			dash string
		}{{"produce", r.Produce, ""}, {"consume", r.Consume, "6,3"}} {
			if side.t == nil || side.t.Timeline == nil || len(side.t.Timeline.MiBps) == 0 {
				continue
			}
			tl := side.t.Timeline
			s := lineSeries{label: r.Target + " " + side.name, colour: colour(ti), dash: side.dash, opacity: repOpacity(r.Rep)}
			for i, v := range tl.MiBps {
				s.xs = append(s.xs, float64(i+1)*tl.StepSeconds)
				s.ys = append(s.ys, v)
			}
			c.series = append(c.series, s)
		}
	}
	if len(c.series) == 0 {
		return plot{}, false
	}
	if w, ok := a.spec(workload); ok && w.Duration > 0 && w.Kind != KindConsume {
		c.band = &[2]float64{w.Warmup.D().Seconds(), w.Duration.D().Seconds()}
		c.bandLabel = "measured window"
	}
	return plot{"throughput-" + slug(workload) + ".svg", c.title, c.svg()}, true
}

// latencyPoints are the percentiles the latency chart shows.
var latencyPoints = []struct {
	name string
	get  func(*Percentiles) float64
}{
	{"p50", func(p *Percentiles) float64 { return p.P50 }},
	{"p90", func(p *Percentiles) float64 { return p.P90 }},
	{"p99", func(p *Percentiles) float64 { return p.P99 }},
	{"p99.9", func(p *Percentiles) float64 { return p.P999 }},
	{"max", func(p *Percentiles) float64 { return p.Max }},
}

func (a *analysis) percentilePlot(workload string) (plot, bool) {
	c := barChart{
		title:  workload + ": end-to-end latency percentiles",
		xLabel: "milliseconds (log scale); bar: median over repetitions, whisker: range",
		series: a.targets,
		xLog:   true,
	}
	for _, lp := range latencyPoints {
		g := barGroup{label: lp.name, bars: make([]*bar, len(a.targets))}
		any := false
		for i, t := range a.targets {
			var xs []float64
			for _, r := range a.f.Results {
				if r.Workload == workload && r.Target == t && r.Error == "" && r.Latency != nil {
					if v := lp.get(r.Latency); v > 0 {
						xs = append(xs, v)
					}
				}
			}
			if len(xs) == 0 {
				continue
			}
			s := spreadOf(xs)
			g.bars[i] = &bar{value: s.Median, lo: s.Min, hi: s.Max, text: formatMs(s.Median)}
			any = true
		}
		if any {
			c.groups = append(c.groups, g)
		}
	}
	if len(c.groups) == 0 {
		return plot{}, false
	}
	return plot{"latency-" + slug(workload) + ".svg", c.title, c.svg()}, true
}

// nines places a percentile on the CDF's x axis: 90% at 1, 99% at 2, 99.9%
// at 3, and so on to 99.999% at 5; the maximum (100%) goes at 5.5.
func nines(p float64) float64 {
	if p >= 100 {
		return 5.5
	}
	return min(5, -math.Log10(1-p/100))
}

var ninesTicks = []tick{{0, "0%"}, {1, "90%"}, {2, "99%"}, {3, "99.9%"}, {4, "99.99%"}, {5, "99.999%"}, {5.5, "max"}}

func (a *analysis) cdfPlot(workload string) (plot, bool) {
	c := lineChart{
		title:  workload + ": end-to-end latency distribution",
		xLabel: "percentile of records",
		yLabel: "milliseconds (log scale)",
		yLog:   true,
		xTicks: ninesTicks,
	}
	for _, r := range a.f.Results {
		if r.Workload != workload || r.Error != "" || r.Latency == nil || len(r.Latency.CDF) == 0 {
			continue
		}
		s := lineSeries{label: r.Target, colour: colour(a.targetIndex(r.Target)), opacity: repOpacity(r.Rep)}
		for _, q := range r.Latency.CDF {
			if q.Ms > 0 {
				s.xs = append(s.xs, nines(q.P))
				s.ys = append(s.ys, q.Ms)
			}
		}
		c.series = append(c.series, s)
	}
	if len(c.series) == 0 {
		return plot{}, false
	}
	return plot{"latency-cdf-" + slug(workload) + ".svg", c.title, c.svg()}, true
}

func (a *analysis) targetIndex(t string) int {
	for i, x := range a.targets {
		if x == t {
			return i
		}
	}
	return 0
}

// formatMs writes a latency with about three significant digits.
func formatMs(v float64) string { return sig3(v) + " ms" }

// sig3 writes v with about three significant digits, never in exponent
// form.
func sig3(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1 || a == 0:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
