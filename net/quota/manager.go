package quota

import (
	"sync"
	"sync/atomic"
	"time"

	"kzero/coord/metadata"
)

// Config is the quota window (quota.window.num, quota.window.size.seconds).
type Config struct {
	Samples int           // quota.window.num, Kafka's default 11
	Window  time.Duration // quota.window.size.seconds, Kafka's default 1s
}

// DefaultConfig is Kafka's.
var DefaultConfig = Config{Samples: 11, Window: time.Second}

// idleAfter is how long a sensor with no values is kept (Kafka expires
// quota sensors after an hour of inactivity).
const idleAfter = time.Hour

// Manager accounts one quota type (one quota key: producer_byte_rate,
// consumer_byte_rate, request_percentage) for every client.
type Manager struct {
	key string
	cfg Config
	// max bounds a throttle time; 0 leaves it unbounded.
	max time.Duration

	limits atomic.Pointer[Limits] // nil or empty: no quota of this key
	image  atomic.Pointer[metadata.Image]

	throttles  atomic.Int64 // responses throttled
	throttleNS atomic.Int64 // total throttle time given

	mu struct {
		sync.Mutex
		sensors map[Client]*sensor
		swept   int64
	}
}

type sensor struct {
	rate *Rate
	last int64
}

// NewManager accounts the quota key with cfg; maxThrottle bounds the
// throttle times it gives (0: unbounded).
func NewManager(key string, cfg Config, maxThrottle time.Duration) *Manager {
	if cfg.Samples < 1 {
		cfg.Samples = DefaultConfig.Samples
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultConfig.Window
	}
	m := &Manager{key: key, cfg: cfg, max: maxThrottle}
	m.mu.sensors = map[Client]*sensor{}
	return m
}

// Key is the quota key the manager accounts.
func (m *Manager) Key() string { return m.key }

// Update takes the quotas of the manager's key from img, when it is a new
// image: the metadata publisher calls it once per image. Readers (Record,
// Enabled, Bound) see the old or the new quotas whole, with one atomic
// load.
func (m *Manager) Update(img *metadata.Image) {
	if img == nil || m.image.Load() == img {
		return
	}
	l := Limits{}
	for e, vals := range img.ClientQuotas() {
		if v, ok := vals[m.key]; ok && e.IP.Kind == metadata.QuotaAbsent {
			l[e] = v
		}
	}
	m.limits.Store(&l)
	m.image.Store(img)
}

// Enabled reports whether any quota of the manager's key is set.
func (m *Manager) Enabled() bool {
	l := m.limits.Load()
	return l != nil && len(*l) > 0
}

// Bound returns the quota that applies to c.
func (m *Manager) Bound(c Client) (float64, bool) {
	l := m.limits.Load()
	if l == nil || len(*l) == 0 {
		return 0, false
	}
	b, _, ok := l.Resolve(c)
	return b, ok
}

// MaxValueInWindow is the most a client may record at once without
// certain throttling: bound*(samples-1)*window (Kafka's
// getMaxValueInQuotaWindow, which caps a fetch's size); ok is false
// without a quota.
func (m *Manager) MaxValueInWindow(c Client) (float64, bool) {
	b, ok := m.Bound(c)
	if !ok {
		return 0, false
	}
	return b * float64(m.cfg.Samples-1) * m.cfg.Window.Seconds(), true
}

// Record adds v for c at now (ns, any monotonic clock) and returns the
// throttle time that brings c's rate back within its quota: 0 when within
// it, or when no quota applies.
func (m *Manager) Record(c Client, v float64, now int64) time.Duration {
	l := m.limits.Load()
	if l == nil || len(*l) == 0 {
		return 0
	}
	bound, key, ok := l.Resolve(c)
	if !ok {
		return 0
	}
	m.mu.Lock()
	s := m.sensorLocked(key, now)
	s.rate.Record(now, v)
	rate, span := s.rate.Measure(now)
	m.mu.Unlock()
	d := ThrottleTime(rate, bound, span)
	if m.max > 0 {
		d = min(d, m.max)
	}
	return d
}

// Unrecord takes back v recorded for c at now (a throttled fetch answers
// empty, so its bytes do not count: Kafka's unrecordQuotaSensor).
func (m *Manager) Unrecord(c Client, v float64, now int64) {
	l := m.limits.Load()
	if l == nil || len(*l) == 0 {
		return
	}
	_, key, ok := l.Resolve(c)
	if !ok {
		return
	}
	m.mu.Lock()
	m.sensorLocked(key, now).rate.Record(now, -v)
	m.mu.Unlock()
}

// Throttled counts a throttle given to a client, for the metrics.
func (m *Manager) Throttled(d time.Duration) {
	if d > 0 {
		m.throttles.Add(1)
		m.throttleNS.Add(int64(d))
	}
}

// Stats are a manager's counters.
type Stats struct {
	Throttles    int64         // responses throttled
	ThrottleTime time.Duration // their throttle times summed
	Sensors      int           // clients tracked
}

// Stats returns the counters.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	n := len(m.mu.sensors)
	m.mu.Unlock()
	return Stats{Throttles: m.throttles.Load(), ThrottleTime: time.Duration(m.throttleNS.Load()), Sensors: n}
}

// sensorLocked returns c's sensor, making it; now and then it drops the
// sensors idle for idleAfter.
func (m *Manager) sensorLocked(c Client, now int64) *sensor {
	if now-m.mu.swept > int64(idleAfter) {
		for k, s := range m.mu.sensors {
			if now-s.last > int64(idleAfter) {
				delete(m.mu.sensors, k)
			}
		}
		m.mu.swept = now
	}
	s := m.mu.sensors[c]
	if s == nil {
		s = &sensor{rate: NewRate(m.cfg.Samples, m.cfg.Window)}
		m.mu.sensors[c] = s
	}
	s.last = now
	return s
}
