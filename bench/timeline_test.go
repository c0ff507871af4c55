package bench

import (
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

func TestTimelineOf(t *testing.T) {
	const step = 250 * time.Millisecond
	mib := int64(1 << 20)
	for _, c := range []struct {
		name  string
		marks []mark
		want  []float64
	}{
		{"none", nil, []float64{}},
		{"steady", []mark{{step, mib}, {2 * step, 2 * mib}, {3 * step, 3 * mib}}, []float64{4, 4, 4}},
		// A late tick: the rate is over the time the interval really took.
		{"late tick", []mark{{step, mib}, {3 * step, 3 * mib}}, []float64{4, 4}},
		// The last mark (stop) came 10ms after the one before: left out.
		{"short tail", []mark{{step, mib}, {step + 10*time.Millisecond, mib + 1000}}, []float64{4}},
		// A tail of at least half a step stays.
		{"long tail", []mark{{step, mib}, {step + step/2, mib + mib/2}}, []float64{4, 4}},
		// Stopped before the first tick: one interval, however short.
		{"only stop", []mark{{step / 4, mib / 16}}, []float64{1}},
		{"stall", []mark{{step, mib}, {2 * step, mib}}, []float64{4, 0}},
	} {
		got := timelineOf(c.marks, step)
		if got.StepSeconds != 0.25 || !reflect.DeepEqual(got.MiBps, c.want) {
			t.Errorf("%s: %+v, want %v", c.name, got, c.want)
		}
	}
}

// A long phase read every 50ms is summed into coarser steps, at most
// timelinePoints of them.
func TestTimelineSteps(t *testing.T) {
	const tick = 50 * time.Millisecond
	for _, c := range []struct {
		ticks    int
		step     float64
		points   int
		lastMiBs float64
	}{
		{6, 0.05, 6, 20},     // 0.3s: every tick
		{200, 0.1, 100, 20},  // 10s: 100ms steps
		{700, 0.5, 70, 20},   // 35s: 500ms steps
		{201, 0.1, 101, 20},  // a last tick half a step past the last whole one: kept
		{100000, 60, 83, 20}, // 5000s: a minute, the coarsest step; the last 20s left out
	} {
		var marks []mark
		for i := 1; i <= c.ticks; i++ {
			marks = append(marks, mark{time.Duration(i) * tick, int64(i) << 20}) // 20 MiB/s
		}
		got := timelineOf(marks, tick)
		if got.StepSeconds != c.step || len(got.MiBps) != c.points || got.MiBps[len(got.MiBps)-1] < c.lastMiBs-1e-9 || got.MiBps[len(got.MiBps)-1] > c.lastMiBs+1e-9 {
			t.Errorf("%d ticks: step %v, %d points, last %v; want %v, %d, %v", c.ticks, got.StepSeconds, len(got.MiBps), got.MiBps[len(got.MiBps)-1], c.step, c.points, c.lastMiBs)
		}
	}
}

// Bytes counted before stop are in the timeline even when no tick came.
func TestRecorderLastSample(t *testing.T) {
	var n atomic.Int64
	r := record(&n, time.Hour)
	n.Add(1 << 20)
	tl := r.stop()
	if len(tl.MiBps) != 1 || tl.MiBps[0] <= 0 || tl.StepSeconds != 3600 {
		t.Errorf("timeline %+v", tl)
	}
}
