package quota

import "time"

// Rate is Kafka's windowed rate (SampledStat with Rate, as of Kafka 3.8's
// fix of rate spikes): values summed in samples of one window each,
// measured over the samples that saw a value in the last samples windows.
// Not safe for concurrent use; a Manager guards its rates.
//
// It keeps samples+1 samples: the oldest one may have begun before the
// measured span and still overlap it (its last value is recent), and it
// counts, with its start, until its last value is samples windows old.
// Dropping a sample by its start instead (as a ring of samples slots
// does) throws away recent values all at once, and the rate drops, then
// jumps back when the span shrinks: a client is let through in bursts
// and then throttled for whole windows, and ends well under its quota.
type Rate struct {
	window  int64 // ns per sample
	n       int   // quota.window.num
	samples []sample
	cur     int
}

type sample struct {
	start int64 // ns; when the sample's first value was recorded
	last  int64 // ns; when its last value was recorded
	value float64
}

// NewRate returns a rate of n samples of window each (n at least 1, as
// Kafka's quota.window.num). Samples are made as values arrive, as Kafka
// makes them: the first value starts the first.
func NewRate(n int, window time.Duration) *Rate {
	n = max(n, 1)
	return &Rate{window: int64(window), n: n, samples: make([]sample, 0, n+1)}
}

// Record adds v at now.
func (r *Rate) Record(now int64, v float64) {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: now, last: now})
	}
	s := &r.samples[r.cur]
	if now-s.start >= r.window {
		r.cur = (r.cur + 1) % (r.n + 1)
		if r.cur == len(r.samples) {
			r.samples = append(r.samples, sample{})
		}
		s = &r.samples[r.cur]
		*s = sample{start: now}
	}
	s.value += v
	s.last = now
}

// purge resets the samples whose last value is samples windows old or
// older.
func (r *Rate) purge(now int64) {
	expire := int64(r.n) * r.window
	for i := range r.samples {
		if now-r.samples[i].last >= expire {
			r.samples[i] = sample{start: now, last: now}
		}
	}
}

// Measure returns the rate per second at now and the span it is measured
// over.
func (r *Rate) Measure(now int64) (perSecond float64, span time.Duration) {
	r.purge(now)
	total, oldest := 0.0, now
	for _, s := range r.samples {
		total += s.value
		oldest = min(oldest, s.start)
	}
	span = r.span(now, oldest)
	return total / span.Seconds(), span
}

// span is Kafka's Rate.windowSize: the time since the oldest sample
// began, stretched to at least samples-1 whole windows plus the part of
// the current one (a new client's first values are not an enormous
// rate), and never under a millisecond.
func (r *Rate) span(now, oldest int64) time.Duration {
	elapsed := now - oldest
	if full, least := elapsed/r.window, int64(r.n-1); full < least {
		elapsed += (least - full) * r.window
	}
	return time.Duration(max(elapsed, int64(time.Millisecond)))
}

// ThrottleTime is the delay that brings rate back to bound over span
// (QuotaUtils.throttleTime): a rate O over a bound T measured over W
// needs X with O*W/(W+X) = T, so X = (O-T)/T*W, rounded to the
// millisecond; 0 when the rate is within the bound.
func ThrottleTime(rate, bound float64, span time.Duration) time.Duration {
	if rate <= bound || bound <= 0 {
		return 0
	}
	ms := (rate - bound) / bound * float64(span) / float64(time.Millisecond)
	return time.Duration(ms+0.5) * time.Millisecond
}
