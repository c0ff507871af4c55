package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Metric is one figure of a result, compared across targets.
type Metric struct {
	Name   string
	Better string // "higher" or "lower"
	Get    func(Result) (float64, bool)
}

// Metrics are the figures a comparison reports, where a result has them.
var Metrics = []Metric{
	{"produce MiB/s", "higher", func(r Result) (float64, bool) {
		return field(r.Produce != nil, func() float64 { return r.Produce.MiBps })
	}},
	{"consume MiB/s", "higher", func(r Result) (float64, bool) {
		return field(r.Consume != nil, func() float64 { return r.Consume.MiBps })
	}},
	{"consume records/s", "higher", func(r Result) (float64, bool) {
		return field(r.Consume != nil, func() float64 { return r.Consume.RecordsPerSec })
	}},
	{"first record s", "lower", func(r Result) (float64, bool) {
		return field(r.Consume != nil && r.Kind == KindConsume && r.Consume.FirstRecordSeconds > 0, func() float64 { return r.Consume.FirstRecordSeconds })
	}},
	{"p50 ms", "lower", func(r Result) (float64, bool) {
		return field(r.Latency != nil, func() float64 { return r.Latency.P50 })
	}},
	{"p99 ms", "lower", func(r Result) (float64, bool) {
		return field(r.Latency != nil, func() float64 { return r.Latency.P99 })
	}},
	{"p99.9 ms", "lower", func(r Result) (float64, bool) {
		return field(r.Latency != nil, func() float64 { return r.Latency.P999 })
	}},
	{"broker CPU s/GiB", "lower", func(r Result) (float64, bool) {
		return field(r.Broker != nil, func() float64 { return r.Broker.CPUSecondsPerGiB })
	}},
	// The clients' cost, beside the broker's: not the broker's merit, but
	// it says how much of the machine the broker had.
	{"client CPU s/GiB", "lower", func(r Result) (float64, bool) {
		return field(r.Client != nil && r.Client.GiBMoved > 0, func() float64 { return r.Client.CPUSecondsPerGiB })
	}},
}

func field(ok bool, get func() float64) (float64, bool) {
	if !ok {
		return 0, false
	}
	return get(), true
}

// Comparison is one metric of one workload across targets A and B.
type Comparison struct {
	Workload string  `json:"workload"`
	Metric   string  `json:"metric"`
	Better   string  `json:"better"`
	A        string  `json:"a"`
	B        string  `json:"b"`
	MedianA  float64 `json:"median_a"`
	MedianB  float64 `json:"median_b"`
	Ratio    float64 `json:"ratio"` // median over pairs of A/B
	Pairs    int     `json:"pairs"`
}

// Compare pairs the results of targets a and b by workload and repetition
// (runs that failed are left out) and returns, per workload and metric, the
// medians and the median of the per-pair ratios A/B. Each pair ran back to
// back, so the ratio is the figure a noisy machine disturbs least.
func Compare(results []Result, a, b string) []Comparison {
	return compareMetrics(results, a, b, Metrics)
}

// compareMetrics is Compare over the metrics given.
func compareMetrics(results []Result, a, b string, metrics []Metric) []Comparison {
	type key struct {
		workload string
		rep      int
	}
	byKey := map[key]map[string]Result{}
	var order []string
	seen := map[string]bool{}
	for _, r := range results {
		if r.Error != "" || (r.Target != a && r.Target != b) {
			continue
		}
		k := key{r.Workload, r.Rep}
		if byKey[k] == nil {
			byKey[k] = map[string]Result{}
		}
		byKey[k][r.Target] = r
		if !seen[r.Workload] {
			seen[r.Workload] = true
			order = append(order, r.Workload)
		}
	}
	var out []Comparison
	for _, wl := range order {
		for _, m := range metrics {
			var as, bs, ratios []float64
			for k, pair := range byKey {
				if k.workload != wl {
					continue
				}
				ra, okA := pair[a]
				rb, okB := pair[b]
				if !okA || !okB {
					continue
				}
				va, okA := m.Get(ra)
				vb, okB := m.Get(rb)
				if !okA || !okB {
					continue
				}
				as, bs = append(as, va), append(bs, vb)
				if vb != 0 {
					ratios = append(ratios, va/vb)
				}
			}
			if len(as) == 0 {
				continue
			}
			out = append(out, Comparison{Workload: wl, Metric: m.Name, Better: m.Better, A: a, B: b,
				MedianA: Median(as), MedianB: Median(bs), Ratio: Median(ratios), Pairs: len(as)})
		}
	}
	return out
}

// WriteComparison writes comparisons as an aligned table.
func WriteComparison(w io.Writer, cs []Comparison) error {
	if len(cs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "workload\tmetric\tA %s\tB %s\tA/B\tbetter\tpairs\t\n", cs[0].A, cs[0].B)
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", c.Workload, c.Metric,
			num(c.MedianA, 2), num(c.MedianB, 2), num(c.Ratio, 2), c.Better, c.Pairs)
	}
	return tw.Flush()
}
