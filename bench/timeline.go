package bench

import (
	"sync/atomic"
	"time"
)

// timelineTick is how often a phase's byte count is read: often enough
// that a catch-up read of a fraction of a second still draws a line.
const timelineTick = 50 * time.Millisecond

// timelinePoints bounds the points of a timeline: the ticks are summed
// into the shortest of timelineSteps that keeps the phase under it.
const timelinePoints = 120

var timelineSteps = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute}

// Timeline is a phase's throughput over time, from the phase's start: the
// MiB/s of each step in turn (the last one may be shorter).
type Timeline struct {
	StepSeconds float64   `json:"step_s"`
	MiBps       []float64 `json:"mib_per_s"`
}

// mark is a byte count and when it was read, since the phase began.
type mark struct {
	at    time.Duration
	bytes int64
}

// recorder reads a byte counter every step (a tick), on a goroutine of
// its own, until stop.
type recorder struct {
	step  time.Duration
	quit  chan struct{}
	done  chan struct{}
	marks []mark // written by the sampling goroutine until done is closed
}

// record starts reading counter every tick, from now.
func record(counter *atomic.Int64, step time.Duration) *recorder {
	r := &recorder{step: step, quit: make(chan struct{}), done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(r.done)
		t := time.NewTicker(step)
		defer t.Stop()
		for {
			select {
			case <-r.quit:
				r.marks = append(r.marks, mark{time.Since(start), counter.Load()})
				return
			case <-t.C:
				r.marks = append(r.marks, mark{time.Since(start), counter.Load()})
			}
		}
	}()
	return r
}

// stop ends the sampling, with a last sample now, and returns the
// timeline. It is called once.
func (r *recorder) stop() *Timeline {
	close(r.quit)
	<-r.done
	return timelineOf(r.marks, r.step)
}

// timelineOf turns cumulative byte counts read every tick into the rate of
// each step, the step being the shortest of timelineSteps (at least a
// tick, a whole number of ticks) that gives at most timelinePoints. Each
// rate is over the time its interval really took (a ticker on a loaded
// machine fires late). A last interval shorter than half a step is left
// out: a few bytes over a few microseconds would plot as a spike or a dip
// that never happened.
func timelineOf(marks []mark, tick time.Duration) *Timeline {
	step := tick
	if len(marks) > 0 {
		total := marks[len(marks)-1].at
		for _, s := range timelineSteps {
			if s >= tick && s%tick == 0 {
				step = s
				if total/s <= timelinePoints {
					break
				}
			}
		}
	}
	every := int(step / tick)
	t := &Timeline{StepSeconds: step.Seconds(), MiBps: []float64{}}
	var prev mark
	for i, m := range marks {
		last := i == len(marks)-1
		if (i+1)%every != 0 && !last {
			continue
		}
		d := m.at - prev.at
		if d <= 0 || last && prev.at > 0 && d < step/2 {
			continue
		}
		t.MiBps = append(t.MiBps, float64(m.bytes-prev.bytes)/d.Seconds()/(1<<20))
		prev = m
	}
	return t
}
