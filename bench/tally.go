package bench

import (
	"sync/atomic"
	"time"
)

// tally counts a produce phase's acknowledgements, for produce (kgo) and
// rawProduce alike, so that both turn the same counts into the same
// throughput: every acknowledgement, and those inside the measured window
// of a timed run. Acknowledgements are counted from any goroutine.
type tally struct {
	total                        int64 // records to send; 0: a timed run
	start, windowStart, deadline time.Time
	meter                        *meter // the run's progress, counted along

	records, bytes     atomic.Int64 // every acknowledgement
	inRecords, inBytes atomic.Int64 // acknowledged within the window
	timeline           *recorder
}

// newTally starts counting a phase of total records (0: one of d, whose
// first warmup is not measured).
func newTally(total int64, d, warmup time.Duration, m *meter) *tally {
	t := &tally{total: total, start: time.Now(), meter: m}
	t.deadline = t.start.Add(d)
	t.windowStart = t.start.Add(min(warmup, d))
	t.timeline = record(&t.bytes, timelineTick)
	return t
}

// ack counts n records of b value bytes acknowledged now.
func (t *tally) ack(n, b int64) {
	t.records.Add(n)
	t.bytes.Add(b)
	t.meter.produced.Add(n)
	t.meter.producedBytes.Add(b)
	if now := time.Now(); t.total == 0 && now.Before(t.deadline) && !now.Before(t.windowStart) {
		t.inRecords.Add(n)
		t.inBytes.Add(b)
	}
}

// end stops the timeline once every sender is done and returns the
// phase's throughput and how many records were acknowledged: with a record
// count, from the start to the last acknowledgement; timed, what was
// acknowledged in the window, over the window.
func (t *tally) end() (*Throughput, int64) {
	elapsed := time.Since(t.start)
	tl := t.timeline.stop()
	if t.total == 0 {
		th := newThroughput(t.inRecords.Load(), t.inBytes.Load(), t.deadline.Sub(t.windowStart))
		th.Acked, th.Timeline = t.records.Load(), tl
		return th, th.Acked
	}
	th := newThroughput(t.records.Load(), t.bytes.Load(), elapsed)
	th.Timeline = tl
	return th, t.records.Load()
}
