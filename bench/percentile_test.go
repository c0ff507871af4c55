package bench

import (
	"math/rand/v2"
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
	if got := Summarize(nil); got != (Percentiles{}) {
		t.Errorf("Summarize(nil) = %+v", got)
	}
	// 1..1000 ms, shuffled: Summarize sorts.
	s := make([]time.Duration, 1000)
	for i := range s {
		s[i] = time.Duration(i+1) * time.Millisecond
	}
	rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	got := Summarize(s)
	want := Percentiles{Count: 1000, P50: 500, P99: 990, P999: 999, Max: 1000, Mean: 500.5}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
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
