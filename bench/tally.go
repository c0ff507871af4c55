package bench

import (
	"context"
	"fmt"
	"sync"
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

// intake counts a consume phase's records, for consume (kgo) and
// rawConsume alike, from every consumer goroutine, until it has as many as
// the phase's feed produced: then it cancels the phase (nil cause). It
// turns the counts into the phase's throughput.
type intake struct {
	start  time.Time
	cutoff int64 // UnixNano: records sent before it, in the warmup, have no latency
	meter  *meter
	cancel context.CancelCauseFunc
	// fromFirst: the throughput counts from the first record, not start.
	fromFirst bool

	records, bytes atomic.Int64
	want           atomic.Int64 // -1 until the feed returned
	firstAt        atomic.Int64 // UnixNano of the first record received; 0 before it
	lastAt         atomic.Int64 // UnixNano of the last record received
	finish         sync.Once
	finished       chan struct{}
	timeline       *recorder
}

// newIntake starts counting a phase whose first warmup has no latencies;
// cancel ends the phase. A catch-up read (KindConsume) counts its rate
// from its first record (fromFirst); a consumer that reads beside the
// producers (latency, mixed) gets records as they are sent, and counts
// from the phase's start as they do.
func newIntake(warmup time.Duration, m *meter, cancel context.CancelCauseFunc, fromFirst bool) *intake {
	c := &intake{start: time.Now(), meter: m, cancel: cancel, fromFirst: fromFirst, finished: make(chan struct{})}
	c.cutoff = c.start.Add(warmup).UnixNano()
	c.want.Store(-1)
	c.timeline = record(&c.bytes, timelineTick)
	return c
}

// got counts n records of b value bytes received at now (UnixNano).
func (c *intake) got(n, b, now int64) {
	if c.firstAt.Load() == 0 { // a load, not a failing CAS, on every later call
		c.firstAt.CompareAndSwap(0, now)
	}
	c.lastAt.Store(now)
	c.bytes.Add(b)
	c.records.Add(n)
	c.meter.consumedBytes.Add(b)
	c.meter.consumed.Add(n)
	c.check()
}

// feed runs the phase's feed, which returns how many records it
// produced: the count the phase ends at. A feed that fails ends the phase.
func (c *intake) feed(feed func() (int64, error)) {
	n, err := feed()
	if err != nil {
		c.cancel(err)
		return
	}
	c.want.Store(n)
	c.check()
}

func (c *intake) check() {
	if t := c.want.Load(); t >= 0 && c.records.Load() >= t {
		c.finish.Do(func() { close(c.finished); c.cancel(nil) })
	}
}

// watch ends the phase when the count has not moved for stall; it returns
// when ctx, the phase's, ends.
func (c *intake) watch(ctx context.Context, stall time.Duration) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	seen, since := int64(-1), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n := c.records.Load(); n != seen {
			seen, since = n, time.Now()
		} else if time.Since(since) > stall {
			c.cancel(fmt.Errorf("consume: stalled at %d records for %v", n, stall))
			return
		}
	}
}

// end stops the timeline once every consumer is done and reports whether
// the phase received every record, with the phase's throughput, from its
// first record or its start (newIntake) to last (UnixNano; 0: the last
// record received), and the latencies of each consumer in one slice. The
// wait for the first record is a figure of its own: a share group, as in
// Kafka, assigns partitions only at the heartbeat after their share state
// is initialized (5 s by default), which is not the rate at which it
// delivers records.
func (c *intake) end(last int64, lats [][]time.Duration) (t *Throughput, all []time.Duration, whole bool) {
	tl := c.timeline.stop()
	select {
	case <-c.finished:
	default:
		return nil, nil, false
	}
	for _, l := range lats {
		all = append(all, l...)
	}
	if last == 0 {
		last = c.lastAt.Load()
	}
	first := c.firstAt.Load()
	if first == 0 {
		first = c.start.UnixNano() // no record: nothing to wait for
	}
	from := c.start.UnixNano()
	if c.fromFirst {
		from = first
	}
	t = newThroughput(c.records.Load(), c.bytes.Load(), time.Duration(max(last, from)-from))
	t.FirstRecordSeconds = time.Unix(0, first).Sub(c.start).Seconds()
	t.Timeline = tl
	return t, all, true
}
