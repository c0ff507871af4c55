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
	P90   float64 `json:"p90_ms"` // absent (0) in results written before it was recorded
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99_9_ms"`
	Max   float64 `json:"max_ms"`
	Mean  float64 `json:"mean_ms"`
	// CDF is the distribution at the percentiles of cdfPoints, for the
	// report's latency plot; absent in results written before it was.
	CDF []Quantile `json:"cdf,omitempty"`
}

// Quantile is one point of a latency distribution: P percent of the
// samples took Ms milliseconds or less.
type Quantile struct {
	P  float64 `json:"p"`
	Ms float64 `json:"ms"`
}

// cdfPoints are the percentiles a CDF keeps: spread evenly up to the
// median, then ever closer to 100 so that the tail, where brokers differ,
// is drawn in as much detail as a run's sample count allows.
var cdfPoints = []float64{0, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90, 92.5, 95, 97, 98, 99,
	99.5, 99.7, 99.8, 99.9, 99.95, 99.97, 99.99, 99.995, 99.999, 100}

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
	cdf := make([]Quantile, len(cdfPoints))
	for i, p := range cdfPoints {
		cdf[i] = Quantile{P: p, Ms: ms(Rank(samples, p))}
	}
	return Percentiles{
		Count: int64(len(samples)),
		P50:   ms(Rank(samples, 50)),
		P90:   ms(Rank(samples, 90)),
		P99:   ms(Rank(samples, 99)),
		P999:  ms(Rank(samples, 99.9)),
		Max:   ms(samples[len(samples)-1]),
		Mean:  sum / float64(len(samples)) / float64(time.Millisecond),
		CDF:   cdf,
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

// Spread is a figure's median over repetitions and its range.
type Spread struct {
	Median, Min, Max float64
	N                int
}

// spreadOf returns the median and range of xs; the zero Spread for none.
func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := Spread{Median: Median(xs), Min: slices.Min(xs), Max: slices.Max(xs), N: len(xs)}
	return s
}
