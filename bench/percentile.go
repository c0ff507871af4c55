package bench

import (
	"math"
	"slices"
	"time"
)

// Percentiles summarises a set of latencies, in milliseconds.
type Percentiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99_9_ms"`
	Max   float64 `json:"max_ms"`
	Mean  float64 `json:"mean_ms"`
}

// Summarize sorts samples in place and returns their percentiles. A
// percentile is the nearest-rank value: the smallest sample with at least
// p% of the samples at or below it, so it is always a latency that was
// observed, and p99.9 of fewer than 1000 samples is the maximum.
func Summarize(samples []time.Duration) Percentiles {
	if len(samples) == 0 {
		return Percentiles{}
	}
	slices.Sort(samples)
	var sum float64
	for _, s := range samples {
		sum += float64(s)
	}
	return Percentiles{
		Count: int64(len(samples)),
		P50:   ms(Rank(samples, 50)),
		P99:   ms(Rank(samples, 99)),
		P999:  ms(Rank(samples, 99.9)),
		Max:   ms(samples[len(samples)-1]),
		Mean:  sum / float64(len(samples)) / float64(time.Millisecond),
	}
}

// Rank returns the nearest-rank p-th percentile (0 < p ≤ 100) of sorted,
// which must be sorted ascending and not empty: the value at 1-based rank
// ⌈p/100 × n⌉. p ≤ 0 gives the minimum.
func Rank[T any](sorted []T, p float64) T {
	n := len(sorted)
	r := int(math.Ceil(p / 100 * float64(n)))
	// p/100*n can land a hair above an integer in floating point (99.9% of
	// 1000 is 999.0000000000001); an exact product keeps its rank.
	if exact := p * float64(n) / 100; math.Abs(exact-math.Round(exact)) < 1e-9 {
		r = int(math.Round(exact))
	}
	return sorted[min(max(r, 1), n)-1]
}

// Median returns the median of xs (the mean of the middle two when even),
// sorting a copy; 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
