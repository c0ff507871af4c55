package quota

import "time"

// Rate is Kafka's windowed rate (SampledStat with Rate): values summed in
// samples of one window each. Not safe for concurrent use; a Manager
// guards its rates.
type Rate struct {
	window  int64 // ns per sample
	samples []sample
	cur     int
}

type sample struct {
	start int64 // ns; the time the sample's first value was recorded
	value float64
}

// NewRate returns a rate of n samples of window each, starting at now.
func NewRate(n int, window time.Duration, now int64) *Rate {
	n = max(n, 2)
	r := &Rate{window: int64(window), samples: make([]sample, n)}
	for i := range r.samples {
		r.samples[i].start = now
	}
	return r
}

// Record adds v at now.
func (r *Rate) Record(now int64, v float64) {
	s := &r.samples[r.cur]
	if now >= s.start+r.window {
		r.cur = (r.cur + 1) % len(r.samples)
		s = &r.samples[r.cur]
		s.start, s.value = now, 0
	}
	s.value += v
}

// purge resets samples that ended more than samples*window ago.
func (r *Rate) purge(now int64) {
	expire := int64(len(r.samples)) * r.window
	for i := range r.samples {
		if now-r.samples[i].start >= expire {
			r.samples[i] = sample{start: now}
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
	span = r.Span(now, oldest)
	if span <= 0 {
		return 0, 0
	}
	return total / span.Seconds(), span
}

// Span is Kafka's Rate.windowSize: the time since the oldest sample
// began, at least (samples-1) windows.
func (r *Rate) Span(now, oldest int64) time.Duration {
	elapsed := now - oldest
	if full, least := elapsed/r.window, int64(len(r.samples)-1); full < least {
		elapsed += (least - full) * r.window
	}
	return time.Duration(elapsed)
}

// ThrottleTime is the delay that brings rate back to bound over span
// (QuotaUtils.throttleTime): 0 when the rate is within the bound.
func ThrottleTime(rate, bound float64, span time.Duration) time.Duration {
	if rate <= bound || bound <= 0 {
		return 0
	}
	ms := (rate - bound) / bound * float64(span.Milliseconds())
	return time.Duration(ms+0.5) * time.Millisecond
}
