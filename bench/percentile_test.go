package bench

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func TestRankNearest(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1 // 1..100
	}
	thousand := make([]int, 1000)
	for i := range thousand {
		thousand[i] = i + 1
	}
	for _, c := range []struct {
		xs   []int
		p    float64
		want int
	}{
		{[]int{7}, 50, 7},
		{[]int{7}, 99.9, 7},
		{[]int{1, 2}, 50, 1},
		{[]int{1, 2}, 51, 2},
		{[]int{1, 2, 3, 4}, 0, 1},
		{hundred, 50, 50},
		{hundred, 99, 99},
		{hundred, 99.9, 100},
		{hundred, 100, 100},
		{thousand, 99.9, 999},
		{thousand, 99.95, 1000},
		{thousand, 50, 500},
		{thousand, 0.1, 1},
	} {
		if got := Rank(c.xs, c.p); got != c.want {
			t.Errorf("Rank(n=%d, %v) = %d, want %d", len(c.xs), c.p, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	if got := Summarize(nil); !reflect.DeepEqual(got, Percentiles{}) {
		t.Errorf("Summarize(nil) = %+v", got)
	}
	// 1..1000 ms, shuffled: Summarize sorts.
	s := make([]time.Duration, 1000)
	for i := range s {
		s[i] = time.Duration(i+1) * time.Millisecond
	}
	rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	got := Summarize(s)
	cdf := got.CDF
	got.CDF = nil
	want := Percentiles{Count: 1000, P50: 500, P90: 900, P99: 990, P999: 999, Max: 1000, Mean: 500.5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	// The CDF holds every point, rising, from the minimum to the maximum;
	// beyond 1 in 1000 the nearest rank is the maximum.
	if len(cdf) != len(cdfPoints) || cdf[0] != (Quantile{0, 1}) || cdf[len(cdf)-1] != (Quantile{100, 1000}) {
		t.Fatalf("CDF %v", cdf)
	}
	for i, q := range cdf {
		if q.P != cdfPoints[i] || i > 0 && q.Ms < cdf[i-1].Ms {
			t.Errorf("CDF point %d: %+v after %+v", i, q, cdf[max(i-1, 0)])
		}
		if q.P == 75 && q.Ms != 750 || q.P == 99.95 && q.Ms != 1000 || q.P == 99.7 && q.Ms != 997 {
			t.Errorf("CDF point %+v", q)
		}
	}
	// Sub-millisecond latencies keep their fraction.
	got = Summarize([]time.Duration{250 * time.Microsecond, 750 * time.Microsecond})
	if got.P50 != 0.25 || got.Max != 0.75 || got.Mean != 0.5 {
		t.Errorf("Summarize(0.25ms, 0.75ms) = %+v", got)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := append([]float64(nil), c.xs...)
		if got := Median(c.xs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
		for i := range in {
			if in[i] != c.xs[i] {
				t.Errorf("Median reordered its input: %v", c.xs)
			}
		}
	}
}
