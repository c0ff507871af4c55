package log

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"kzero/record"
)

// clClock is a settable clock for Config.Now.
type clClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clClock { return &clClock{t: time.UnixMilli(1_700_000_000_000)} }

func (c *clClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *clClock) Ms() int64 { return c.Now().UnixMilli() }

// clConfig is a compacted log with small segments, deletions at once and
// the fake clock.
func clConfig(clk *clClock) Config {
	c := DefaultConfig()
	c.SegmentBytes = 4 << 10
	c.SegmentIndexBytes = 64 << 10
	c.IndexIntervalBytes = 256
	c.FileDeleteDelayMs = 0
	c.Compact = true
	c.Delete = false
	c.MinCleanableDirtyRatio = 0.01
	c.Now = clk.Now
	c.TimestampAfterMaxMs = -1 // records are stamped ahead of the fake clock
	return c
}

func clOpen(t testing.TB, dir string, cfg Config) *Log {
	t.Helper()
	l, err := Open(dir, cfg, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// kv is a record; tomb makes it a tombstone (null value).
type kv struct {
	k, v string
	tomb bool
}

// clBatch builds a batch of kvs at timestamp ts.
func clBatch(t testing.TB, codec record.Codec, ts int64, kvs ...kv) []byte {
	t.Helper()
	return clBatchWith(t, record.BatchHeader{Codec: codec, BaseTimestamp: ts, LastOffsetDelta: -1,
		ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence}, kvs...)
}

func clBatchWith(t testing.TB, h record.BatchHeader, kvs ...kv) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(h)
	for i, r := range kvs {
		rec := record.Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: []byte(r.k)}
		if !r.tomb {
			rec.Value = []byte(r.v)
		}
		b.Add(&rec)
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func clAppend(t testing.TB, l *Log, records []byte) AppendInfo {
	t.Helper()
	info, err := l.Append(records, OriginClient, 0)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// clRec is a record as read back from a log.
type clRec struct {
	off   int64
	key   string
	value string
	tomb  bool
	ts    int64
	batch int64 // base offset of its batch
}

func (r clRec) String() string {
	if r.tomb {
		return fmt.Sprintf("%d:%s=<nil>", r.off, r.key)
	}
	return fmt.Sprintf("%d:%s=%s", r.off, r.key, r.value)
}

// clReadAll reads every record of the log through Read, as a consumer
// would, checking every batch's CRC and that offsets increase. Control
// batches are returned in batches, not in records.
func clReadAll(t testing.TB, l *Log) (recs []clRec, batches []record.Batch) {
	t.Helper()
	off := l.LogStartOffset()
	end := l.LogEndOffset()
	last := int64(-1)
	var rr record.Iter
	defer rr.Release()
	for off < end {
		r, err := l.Read(off, 64<<10, end, true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if r.Empty() {
			break
		}
		buf := make([]byte, r.Len)
		if err := preadFull(r.Segment.Fd(), buf, r.Pos); err != nil {
			t.Fatal(err)
		}
		r.Release()
		progressed := false
		for len(buf) > 0 {
			b, rest, err := record.ParseBatch(buf)
			if err != nil {
				break // a partial batch at the end of the range
			}
			buf = rest
			if err := b.Validate(); err != nil {
				t.Fatalf("batch at %d: %v", b.BaseOffset(), err)
			}
			if b.BaseOffset() <= last {
				t.Fatalf("batch at %d after offset %d", b.BaseOffset(), last)
			}
			batches = append(batches, b)
			if !b.IsControl() {
				if err := rr.Reset(b, 0); err != nil {
					t.Fatal(err)
				}
				for rr.Next() {
					rec := rr.Record()
					recs = append(recs, clRec{off: rr.Offset(), key: string(rec.Key), value: string(rec.Value),
						tomb: rec.Value == nil, ts: rr.Timestamp(), batch: b.BaseOffset()})
				}
				if err := rr.Err(); err != nil {
					t.Fatal(err)
				}
			}
			last = b.LastOffset()
			off = b.NextOffset()
			progressed = true
		}
		if !progressed {
			t.Fatalf("no whole batch at %d", off)
		}
	}
	return recs, batches
}

// clLatest returns, for records in order, the latest per key.
func clLatest(recs []clRec) map[string]clRec {
	m := map[string]clRec{}
	for _, r := range recs {
		m[r.key] = r
	}
	return m
}

// clStableAll marks every transaction resolved below the log end, as a
// high watermark at the log end would.
func clStableAll(l *Log) {
	l.mu.Lock()
	l.mu.producers.OnHighWatermark(l.mu.next)
	l.mu.Unlock()
}

func clClean(t testing.TB, c *Cleaner, l *Log) CleanStats {
	t.Helper()
	p, ok := c.plan(l)
	if !ok {
		t.Fatalf("nothing cleanable in %s", l.Dir())
	}
	st, err := c.cleanLog(&p)
	if err != nil {
		t.Fatalf("clean: %v", err)
	}
	return st
}

func clCleaner(mem int64) *Cleaner {
	cfg := DefaultCleanerConfig()
	cfg.DedupeBufferSize = mem
	cfg.IOBufferSize = 4 << 10
	cfg.Logger = slog.New(slog.DiscardHandler)
	return NewCleaner(cfg)
}
