package quota

import (
	"testing"
	"time"

	"kzero/coord/metadata"
)

const sec = int64(time.Second)

// TestRateAndThrottle drives a Rate with a clock: each step records a
// value at a time and checks the rate, the span and the throttle time
// against a quota of 100/s, as Kafka's SampledStat, Rate and QuotaUtils
// compute them (11 samples of 1 s).
func TestRateAndThrottle(t *testing.T) {
	steps := []struct {
		at       int64 // ns since start
		v        float64
		rate     float64
		span     time.Duration
		throttle time.Duration
	}{
		// A new client: the span is stretched to 10 windows.
		{0, 500, 50, 10 * time.Second, 0},
		// Half a window in, the span is still 10 windows past it.
		{sec / 2, 500, 1000 / 10.5, 10500 * time.Millisecond, 0},
		// 1,500 over 10 s: 150/s, 50% over: 5 s of throttle.
		{sec, 500, 150, 10 * time.Second, 5 * time.Second},
		// At 11.5 s the first sample (1,000 from 0 s) has expired; the one
		// begun at 1 s remains: 500 over 10.5 s.
		{11*sec + sec/2, 0, 500 / 10.5, 10500 * time.Millisecond, 0},
		// 30 s of nothing: all expired.
		{40 * sec, 0, 0, 10 * time.Second, 0},
	}
	r := NewRate(11, time.Second)
	for i, s := range steps {
		r.Record(s.at, s.v)
		rate, span := r.Measure(s.at)
		if rate != s.rate || span != s.span {
			t.Fatalf("step %d: rate %v span %v, want %v %v", i, rate, span, s.rate, s.span)
		}
		if got := ThrottleTime(rate, 100, span); got != s.throttle {
			t.Fatalf("step %d: throttle %v, want %v", i, got, s.throttle)
		}
	}
}

// TestRateKeepsOverlappingSample: a sample that began before the last
// samples windows but holds a value inside them still counts, with its
// start (Kafka keeps samples+1 samples and expires one by its last value,
// not its first); it goes when its last value is samples windows old.
func TestRateKeepsOverlappingSample(t *testing.T) {
	const ms = int64(time.Millisecond)
	r := NewRate(3, time.Second)
	r.Record(0, 100)
	r.Record(900*ms, 100) // same sample, last value at 0.9 s
	r.Record(sec, 0)      // second sample
	r.Record(2*sec, 0)    // third
	r.Record(3*sec, 0)    // a fourth: the first is 3 s old but its last value is not
	if rate, span := r.Measure(3 * sec); rate != 200.0/3 || span != 3*time.Second {
		t.Fatalf("at 3 s: rate %v over %v, want 66.67 over 3s", rate, span)
	}
	// At 3.9 s the first sample's last value is 3 s old: it goes, and the
	// span is from the second sample's start, 2.9 s, stretched to 2 whole
	// windows and the part of the third: 2.9 s.
	if rate, span := r.Measure(3*sec + 900*ms); rate != 0 || span != 2900*time.Millisecond {
		t.Fatalf("at 3.9 s: rate %v over %v, want 0 over 2.9s", rate, span)
	}
}

// TestRateOneSample: quota.window.num=1, which Kafka allows, measures
// over the current window only, with no stretch (Rate.windowSize adds
// samples-1 = 0 windows), over the one sample and the one before it while
// that one's last value is under a window old; a manager of one sample
// lets a fetch read nothing without certain throttling
// (getMaxValueInQuotaWindow: bound*(samples-1)*window).
func TestRateOneSample(t *testing.T) {
	const ms = int64(time.Millisecond)
	r := NewRate(1, time.Second)
	r.Record(0, 100)
	if rate, span := r.Measure(sec / 2); rate != 200 || span != time.Second/2 {
		t.Fatalf("rate %v over %v, want 200 over 0.5s", rate, span)
	}
	r.Record(900*ms, 100)
	r.Record(sec, 10) // a second sample; the first's last value is 0.1 s old
	if rate, span := r.Measure(1500 * ms); rate != 140 || span != 1500*time.Millisecond {
		t.Fatalf("at 1.5 s: rate %v over %v, want 140 over 1.5s", rate, span)
	}
	// At 1.9 s the first sample's last value is a window old: gone.
	if rate, span := r.Measure(1900 * ms); rate != 10/(900*time.Millisecond).Seconds() || span != 900*time.Millisecond {
		t.Fatalf("at 1.9 s: rate %v over %v, want 10 over 0.9s", rate, span)
	}
	// At 2 s a new sample takes the first's place and the second's last
	// value is a window old: only the new one counts, over the 1 ms floor.
	r.Record(2*sec, 30)
	rate, span := r.Measure(2 * sec)
	if rate != 30000 || span != time.Millisecond {
		t.Fatalf("at 2 s: rate %v over %v, want 30000 over 1ms", rate, span)
	}
	if d := ThrottleTime(rate, 100, span); d != 299*time.Millisecond {
		t.Fatalf("throttle %v, want 299ms", d)
	}
	m := NewManager("consumer_byte_rate", Config{Samples: 1, Window: time.Second}, 0)
	m.Update(imageWith(t, metadata.QuotaEntity{User: metadata.Named("u")}, "consumer_byte_rate", 1000))
	if mx, ok := m.MaxValueInWindow(Client{"u", "c"}); !ok || mx != 0 {
		t.Fatalf("max in window %v %v, want 0", mx, ok)
	}
}

// TestRateLongRun: a client recording 2x its quota every 100 ms, and
// waiting out each throttle before going on (what a client honouring
// throttle_time_ms does, and what a muted channel enforces), averages
// within 10% of the quota over a minute of simulated time.
func TestRateLongRun(t *testing.T) {
	m := NewManager("producer_byte_rate", DefaultConfig, 0)
	img := imageWith(t, metadata.QuotaEntity{User: metadata.Named("u")}, "producer_byte_rate", 1000)
	m.Update(img)
	c := Client{User: "u", ClientID: "any"}
	var now, total int64
	for now < 60*sec {
		total += 200
		d := m.Record(c, 200, now)
		now += int64(100*time.Millisecond) + int64(d)
	}
	rate := float64(total) / (float64(now) / float64(sec))
	if rate > 1100 || rate < 900 {
		t.Fatalf("long-run rate %.0f/s, quota 1000/s", rate)
	}
}

// TestManagerFollowsImage: no quota records nothing; a quota set in a new
// image applies; a client of another user is not counted.
func TestManagerFollowsImage(t *testing.T) {
	m := NewManager("consumer_byte_rate", DefaultConfig, 0)
	m.Update(metadata.EmptyImage())
	if m.Enabled() || m.Record(Client{"u", "c"}, 1e9, 0) != 0 {
		t.Fatal("throttled without a quota")
	}
	m.Update(imageWith(t, metadata.QuotaEntity{User: metadata.Named("u")}, "consumer_byte_rate", 1000))
	if d := m.Record(Client{"u", "c"}, 20000, 0); d != 10*time.Second {
		t.Fatalf("throttle %v", d)
	}
	if d := m.Record(Client{"v", "c"}, 20000, 0); d != 0 {
		t.Fatalf("other user throttled %v", d)
	}
	if mx, _ := m.MaxValueInWindow(Client{"u", "c"}); mx != 10000 {
		t.Fatalf("max in window %v", mx)
	}
	bounded := NewManager("request_percentage", DefaultConfig, time.Second)
	bounded.Update(imageWith(t, metadata.QuotaEntity{ClientID: metadata.DefaultName()}, "request_percentage", 10))
	if d := bounded.Record(Client{"u", "c"}, 1000, 0); d != time.Second {
		t.Fatalf("bounded throttle %v", d)
	}
}

func imageWith(t *testing.T, e metadata.QuotaEntity, key string, v float64) *metadata.Image {
	t.Helper()
	b := metadata.NewBuilder(metadata.EmptyImage())
	if rej := b.ApplyProposal(&metadata.Proposal{Groups: [][]metadata.Record{{&metadata.ClientQuota{Entity: e, Key: key, Value: v}}}}, 1); rej[0] != nil {
		t.Fatal(rej[0])
	}
	return b.Finish(1)
}

// TestRecordAllocatesNothing: recording for a client with a sensor, or
// with no quota set, allocates nothing (produce and fetch record on
// every request).
func TestRecordAllocatesNothing(t *testing.T) {
	m := NewManager("producer_byte_rate", DefaultConfig, 0)
	none := NewManager("consumer_byte_rate", DefaultConfig, 0)
	img := imageWith(t, metadata.QuotaEntity{User: metadata.Named("u"), ClientID: metadata.DefaultName()}, "producer_byte_rate", 1e12)
	m.Update(img)
	none.Update(img)
	c := Client{User: "u", ClientID: "c"}
	now := int64(0)
	m.Record(c, 1, now)
	if n := testing.AllocsPerRun(1000, func() {
		now += int64(time.Millisecond)
		m.Update(img)
		m.Record(c, 100, now)
		none.Record(c, 100, now)
	}); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}
