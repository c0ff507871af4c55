package log

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kzero/record"
)

// retentionLog is a delete-policy log of nseg segments of 4 batches of 100
// bytes each, the batches of segment i stamped at start + i hours; the
// last segment is active.
func retentionLog(t *testing.T, clk *clClock, nseg int, mutate func(*Config)) (*Log, Config) {
	t.Helper()
	cfg := clConfig(clk)
	cfg.Compact, cfg.Delete = false, true
	cfg.RetentionMs, cfg.RetentionBytes = -1, -1
	if mutate != nil {
		mutate(&cfg)
	}
	l := clOpen(t, t.TempDir(), cfg)
	start := clk.Ms()
	val := strings.Repeat("v", 100)
	for i := range nseg {
		if i > 0 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		for range 4 {
			clAppend(t, l, clBatch(t, record.CodecNone, start+int64(i)*3600_000, kv{k: "k", v: val}))
		}
	}
	if n := len(l.Segments()); n != nseg {
		t.Fatalf("%d segments, want %d", n, nseg)
	}
	l.bg.Wait() // the rolls' background flushes hold segment references
	// Every record committed, as on a leader whose ISR has it all:
	// retention stops at the high watermark.
	l.OnHighWatermark(l.LogEndOffset())
	return l, cfg
}

// waitReleased waits until the last reference to s is released and its
// files closed (and removed, when deleted): a roll's background fsync may
// hold one for a moment.
func waitReleased(s *Segment) {
	for !s.released.Load() {
		runtime.Gosched()
	}
}

func segmentBases(l *Log) []int64 {
	var out []int64
	for _, s := range l.Segments() {
		out = append(out, s.BaseOffset())
	}
	return out
}

func TestDeleteOldSegmentsByTime(t *testing.T) {
	clk := newClock()
	l, _ := retentionLog(t, clk, 4, func(c *Config) { c.RetentionMs = 3600_000 })
	// Segment i's largest timestamp is start+i h+3 ms (record deltas).
	clk.Advance(90 * time.Minute) // only segment 0 is more than an hour old
	n, err := l.DeleteOldSegments()
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want 1", n, err)
	}
	if got := segmentBases(l); len(got) != 3 || got[0] != 4 || l.LogStartOffset() != 4 {
		t.Fatalf("segments %v, log start %d", got, l.LogStartOffset())
	}
	if _, err := os.Stat(segmentPath(l.Dir(), 0, LogSuffix)); !os.IsNotExist(err) {
		t.Fatalf("deleted segment file: %v", err)
	}
	if _, err := os.Stat(segmentPath(l.Dir(), 0, LogSuffix+DeletedSuffix)); !os.IsNotExist(err) {
		t.Fatalf("deleted segment's .deleted file not removed: %v", err)
	}
	// Nothing more is old enough.
	if n, err := l.DeleteOldSegments(); err != nil || n != 0 {
		t.Fatalf("second pass deleted %d, %v", n, err)
	}
	clk.Advance(2 * time.Hour) // segments 1 and 2 now; the active one (3) is not
	if n, err := l.DeleteOldSegments(); err != nil || n != 2 {
		t.Fatalf("deleted %d, %v; want 2", n, err)
	}
	if got := segmentBases(l); len(got) != 1 || got[0] != 12 {
		t.Fatalf("segments %v", got)
	}
}

func TestDeleteOldSegmentsRollsWhenAllExpired(t *testing.T) {
	clk := newClock()
	l, _ := retentionLog(t, clk, 3, func(c *Config) { c.RetentionMs = 1000 })
	clk.Advance(10 * time.Hour)
	n, err := l.DeleteOldSegments()
	if err != nil || n != 3 {
		t.Fatalf("deleted %d, %v; want 3", n, err)
	}
	segs := l.Segments()
	if len(segs) != 1 || segs[0].BaseOffset() != 12 || segs[0].Size() != 0 {
		t.Fatalf("segments %v, size %d", segmentBases(l), segs[0].Size())
	}
	if l.LogStartOffset() != 12 || l.LogEndOffset() != 12 {
		t.Fatalf("log start %d end %d, want 12 12", l.LogStartOffset(), l.LogEndOffset())
	}
	// The empty active segment never goes.
	if n, err := l.DeleteOldSegments(); err != nil || n != 0 {
		t.Fatalf("empty log: deleted %d, %v", n, err)
	}
	// Appends continue at the same offsets.
	if info := clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "a", v: "b"})); info.FirstOffset != 12 {
		t.Fatalf("append after deleting everything at %d", info.FirstOffset)
	}
}

func TestDeleteOldSegmentsBySize(t *testing.T) {
	clk := newClock()
	l, _ := retentionLog(t, clk, 5, nil)
	segSize := l.Segments()[0].Size()
	total := l.Size()
	if total != 5*segSize {
		t.Fatalf("sizes: total %d, segment %d", total, segSize)
	}
	// Keep at least 2.5 segments: the two oldest can go (5-2 = 3 >= 2.5),
	// a third would leave 2 < 2.5.
	cfg := l.Config()
	cfg.RetentionBytes = segSize*5/2 + 1
	l.SetConfig(cfg)
	n, err := l.DeleteOldSegments()
	if err != nil || n != 2 {
		t.Fatalf("deleted %d, %v; want 2", n, err)
	}
	if got := l.Size(); got != 3*segSize {
		t.Fatalf("size %d after retention, want %d", got, 3*segSize)
	}
	// A limit of 0 deletes everything but rolls first.
	cfg.RetentionBytes = 0
	l.SetConfig(cfg)
	if n, err := l.DeleteOldSegments(); err != nil || n != 3 {
		t.Fatalf("deleted %d, %v; want 3", n, err)
	}
	if l.Size() != 0 || len(l.Segments()) != 1 {
		t.Fatalf("size %d, %d segments", l.Size(), len(l.Segments()))
	}
}

func TestDeleteOldSegmentsKeepsActiveAndRecent(t *testing.T) {
	clk := newClock()
	l, _ := retentionLog(t, clk, 3, func(c *Config) { c.RetentionMs = 3600_000 })
	// The active segment is the newest: with nothing expired, nothing goes.
	if n, err := l.DeleteOldSegments(); err != nil || n != 0 {
		t.Fatalf("deleted %d, %v", n, err)
	}
	// Retention stops at the first segment that stays, even if a later
	// one is older (timestamps out of order).
	cfg := l.Config()
	cfg.RetentionMs = -1
	l.SetConfig(cfg)
	if n, err := l.DeleteOldSegments(); err != nil || n != 0 {
		t.Fatalf("retention.ms -1 deleted %d, %v", n, err)
	}
	// cleanup.policy compact: no time or size retention.
	cfg.RetentionMs, cfg.RetentionBytes, cfg.Delete, cfg.Compact = 1, 0, false, true
	l.SetConfig(cfg)
	clk.Advance(100 * time.Hour)
	if n, err := l.DeleteOldSegments(); err != nil || n != 0 {
		t.Fatalf("compacted log: deleted %d, %v", n, err)
	}
}

func TestDeleteOldSegmentsBelowLogStart(t *testing.T) {
	clk := newClock()
	l, cfg := retentionLog(t, clk, 4, nil)
	dir := l.Dir()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// A checkpointed log start offset inside segment 2: segments 0 and 1
	// lie wholly below it and go even without delete policy.
	cfg.Delete, cfg.Compact = false, true
	l2, err := Open(dir, cfg, OpenOptions{LogStartOffset: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	n, err := l2.DeleteOldSegments()
	if err != nil || n != 2 {
		t.Fatalf("deleted %d, %v; want 2", n, err)
	}
	if got := segmentBases(l2); got[0] != 8 || l2.LogStartOffset() != 9 {
		t.Fatalf("segments %v, log start %d", got, l2.LogStartOffset())
	}
}

func TestDeleteOldSegmentsBelowHighWatermark(t *testing.T) {
	clk := newClock()
	l, _ := retentionLog(t, clk, 4, func(c *Config) { c.RetentionMs = 1 })
	clk.Advance(10 * time.Hour)
	// Segment 1 holds 4..7: with the high watermark at 7 it is not wholly
	// below it. The periodic retention (DeleteOldSegments) takes the log's
	// own high watermark.
	l.OnHighWatermark(7)
	n, err := l.DeleteOldSegments()
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want 1", n, err)
	}
	if n, err := l.DeleteOldSegmentsBelow(8); err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want 1", n, err)
	}
}

func TestDeleteOldSegmentsReaderKeepsFile(t *testing.T) {
	clk := newClock()
	l, _ := retentionLog(t, clk, 3, func(c *Config) { c.RetentionMs = 3600_000 })
	r, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil || r.Empty() {
		t.Fatalf("read: %v", err)
	}
	want := make([]byte, r.Len)
	if _, err := unix.Pread(r.Segment.Fd(), want, r.Pos); err != nil {
		t.Fatal(err)
	}
	clk.Advance(90 * time.Minute) // segment 0 only
	if n, err := l.DeleteOldSegments(); err != nil || n != 1 {
		t.Fatalf("deleted %d, %v", n, err)
	}
	deleted := segmentPath(l.Dir(), 0, LogSuffix+DeletedSuffix)
	if _, err := os.Stat(deleted); err != nil {
		t.Fatalf("a held segment's file must stay, renamed: %v", err)
	}
	if _, err := l.Read(0, 100, l.LogEndOffset(), true); !isOutOfRange(err) {
		t.Fatalf("read below the new log start: %v", err)
	}
	// The range's reader still reads the bytes, as sendfile would.
	got := make([]byte, r.Len)
	if n, err := unix.Pread(r.Segment.Fd(), got, r.Pos); err != nil || int64(n) != r.Len || !bytes.Equal(got, want) {
		t.Fatalf("pread after delete: %d %v, same %v", n, err, bytes.Equal(got, want))
	}
	r.Release()
	// The last reference may be another goroutine's (the flush after a
	// roll): wait for those, then the files must be gone.
	l.bg.Wait()
	if left, _ := filepath.Glob(filepath.Join(l.Dir(), "*"+DeletedSuffix)); len(left) != 0 {
		t.Fatalf("left over after the last release: %v", left)
	}
}

func TestDeleteOldSegmentsDelay(t *testing.T) {
	clk := newClock()
	l, _ := retentionLog(t, clk, 2, func(c *Config) {
		c.RetentionMs = 3600_000
		c.FileDeleteDelayMs = 60_000
	})
	clk.Advance(90 * time.Minute)
	if n, err := l.DeleteOldSegments(); err != nil || n != 1 {
		t.Fatalf("deleted %d, %v", n, err)
	}
	// file.delete.delay.ms runs on the real clock: the file waits renamed.
	if _, err := os.Stat(segmentPath(l.Dir(), 0, LogSuffix+DeletedSuffix)); err != nil {
		t.Fatalf("renamed file gone before file.delete.delay.ms: %v", err)
	}
	// A restart removes it.
	dir, cfg := l.Dir(), l.Config()
	l.Close()
	l2 := clOpen(t, dir, cfg)
	if _, err := os.Stat(segmentPath(dir, 0, LogSuffix+DeletedSuffix)); !os.IsNotExist(err) {
		t.Fatalf("leftover .deleted after open: %v", err)
	}
	if got := segmentBases(l2); len(got) != 1 || got[0] != 4 {
		t.Fatalf("segments after reopen %v", got)
	}
}

func TestDeleteOldSegmentsProducerSnapshots(t *testing.T) {
	clk := newClock()
	l, _ := retentionLog(t, clk, 4, func(c *Config) { c.RetentionMs = 3600_000 })
	snaps, err := ListSnapshots(l.Dir())
	if err != nil || len(snaps) != 3 { // one per roll: 4, 8, 12
		t.Fatalf("snapshots %v, %v", snaps, err)
	}
	clk.Advance(150 * time.Minute) // segments 0 and 1
	if n, err := l.DeleteOldSegments(); err != nil || n != 2 {
		t.Fatalf("deleted %d, %v", n, err)
	}
	snaps, _ = ListSnapshots(l.Dir())
	if len(snaps) != 2 || snaps[0] != 8 || snaps[1] != 12 {
		t.Fatalf("snapshots after retention %v, want [8 12]", snaps)
	}
	clk.Advance(100 * time.Hour) // everything: the newest snapshot stays
	if _, err := l.DeleteOldSegments(); err != nil {
		t.Fatal(err)
	}
	snaps, _ = ListSnapshots(l.Dir())
	if len(snaps) == 0 || snaps[len(snaps)-1] < 12 {
		t.Fatalf("snapshots after deleting all %v", snaps)
	}
}
