package quota

import (
	"sync"
	"sync/atomic"
	"time"

	"kzero/coord/metadata"
)

// Bucket is Kafka's TokenBucket, the controller mutation quota's measure
// (KIP-599): it holds up to quota*samples*window tokens, refills at the
// quota per second, and each mutation (a partition created or deleted)
// takes one; it may go below zero, and then the client waits until it is
// back at zero. Pure: the clock is an argument.
type Bucket struct {
	tokens float64
	last   int64 // ns
}

// NewBucket returns a full bucket for quota at now.
func NewBucket(quota float64, cfg Config, now int64) *Bucket {
	return &Bucket{tokens: burst(quota, cfg), last: now}
}

func burst(quota float64, cfg Config) float64 {
	return quota * float64(cfg.Samples) * cfg.Window.Seconds()
}

// refill tops the bucket up for the time since it was last touched.
func (b *Bucket) refill(quota float64, cfg Config, now int64) {
	if now > b.last {
		b.tokens = min(burst(quota, cfg), b.tokens+float64(now-b.last)/1e9*quota)
		b.last = now
	}
}

// Take removes n tokens at now and returns the time until the bucket is
// back at zero (0 when it is not below).
func (b *Bucket) Take(quota float64, cfg Config, n float64, now int64) time.Duration {
	b.refill(quota, cfg, now)
	b.tokens -= n
	return b.Debt(quota)
}

// Debt is how long until a bucket below zero is back at zero: Kafka's
// throttle time for a TokenBucket, -tokens/quota.
func (b *Bucket) Debt(quota float64) time.Duration {
	if b.tokens >= 0 || quota <= 0 {
		return 0
	}
	return time.Duration(-b.tokens / quota * float64(time.Second))
}

// Mutations accounts controller_mutation_rate for every client: a Bucket
// per quota entity, the entity found by the precedence of Limits.Resolve.
type Mutations struct {
	cfg    Config
	limits atomic.Pointer[Limits]
	image  atomic.Pointer[metadata.Image]

	throttles, throttleNS atomic.Int64

	mu      sync.Mutex
	buckets map[Client]*Bucket
}

// NewMutations accounts controller mutations with cfg's window.
func NewMutations(cfg Config) *Mutations {
	if cfg.Samples < 1 {
		cfg.Samples = DefaultConfig.Samples
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultConfig.Window
	}
	return &Mutations{cfg: cfg, buckets: map[Client]*Bucket{}}
}

// Update takes the controller_mutation_rate quotas from a new image.
func (m *Mutations) Update(img *metadata.Image) {
	if img == nil || m.image.Load() == img {
		return
	}
	l := Limits{}
	for e, vals := range img.ClientQuotas() {
		if v, ok := vals["controller_mutation_rate"]; ok && e.IP.Kind == metadata.QuotaAbsent {
			l[e] = v
		}
	}
	m.limits.Store(&l)
	m.image.Store(img)
}

// bucket returns c's quota and bucket, or false when no quota applies.
// Caller holds m.mu.
func (m *Mutations) bucketLocked(c Client, now int64) (float64, *Bucket, bool) {
	l := m.limits.Load()
	if l == nil || len(*l) == 0 {
		return 0, nil, false
	}
	q, key, ok := l.Resolve(c)
	if !ok {
		return 0, nil, false
	}
	b := m.buckets[key]
	if b == nil {
		b = NewBucket(q, m.cfg, now)
		m.buckets[key] = b
	}
	b.refill(q, m.cfg, now)
	return q, b, true
}

// Exceeded reports whether c's bucket is below zero now, and how long
// until it is not: a strict request (CreateTopics v6+, CreatePartitions
// v3+, DeleteTopics v5+) is then refused THROTTLING_QUOTA_EXCEEDED.
func (m *Mutations) Exceeded(c Client, now int64) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, b, ok := m.bucketLocked(c, now)
	if !ok {
		return 0, false
	}
	d := b.Debt(q)
	return d, d > 0
}

// Record takes n mutations from c's bucket and returns the throttle time
// it earns (0 within the quota or without one).
func (m *Mutations) Record(c Client, n float64, now int64) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, b, ok := m.bucketLocked(c, now)
	if !ok {
		return 0
	}
	b.tokens -= n
	return b.Debt(q)
}

// Throttled counts a throttle given, for the metrics.
func (m *Mutations) Throttled(d time.Duration) {
	if d > 0 {
		m.throttles.Add(1)
		m.throttleNS.Add(int64(d))
	}
}

// Stats returns the counters.
func (m *Mutations) Stats() Stats {
	m.mu.Lock()
	n := len(m.buckets)
	m.mu.Unlock()
	return Stats{Throttles: m.throttles.Load(), ThrottleTime: time.Duration(m.throttleNS.Load()), Sensors: n}
}

// Applies reports whether a controller_mutation_rate applies to c.
func (m *Mutations) Applies(c Client) bool {
	l := m.limits.Load()
	if l == nil || len(*l) == 0 {
		return false
	}
	_, _, ok := l.Resolve(c)
	return ok
}
