package log

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"

	"kzero/record"
	"kzero/vfs"
)

// fillKeys appends n one-record batches cycling over keys k0..k<keys-1>,
// values "v<i>-" padded to valueSize, and returns the records appended.
func fillKeys(t testing.TB, l *Log, clk *clClock, codec record.Codec, n, keys, valueSize int) {
	t.Helper()
	for i := range n {
		v := fmt.Sprintf("v%d-", i)
		v += strings.Repeat("x", max(0, valueSize-len(v)))
		clAppend(t, l, clBatch(t, codec, clk.Ms(), kv{k: fmt.Sprintf("k%d", i%keys), v: v}))
	}
}

// expectCleaned is what a pass that mapped [0, end) leaves of recs: a
// record below end stays when it is the latest of its key below end.
func expectCleaned(recs []clRec, end int64) []clRec {
	latest := map[string]int64{}
	for _, r := range recs {
		if r.off < end {
			latest[r.key] = r.off
		}
	}
	var out []clRec
	for _, r := range recs {
		if r.off >= end || r.off >= latest[r.key] {
			out = append(out, r)
		}
	}
	return out
}

func sameRecords(t *testing.T, what string, got, want []clRec) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.off != w.off || g.key != w.key || g.value != w.value || g.tomb != w.tomb || g.ts != w.ts {
			t.Fatalf("%s: record %d is %v (ts %d), want %v (ts %d)", what, i, g, g.ts, w, w.ts)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
}

func fileBytes(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCleanKeepsLatestPerKey(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	l := clOpen(t, t.TempDir(), cfg)
	fillKeys(t, l, clk, record.CodecNone, 300, 10, 40)
	before, _ := clReadAll(t, l)
	segs := l.Segments()
	if len(segs) < 4 {
		t.Fatalf("only %d segments", len(segs))
	}
	active := segs[len(segs)-1]
	activeBytes := fileBytes(t, segmentPath(l.Dir(), active.BaseOffset(), LogSuffix))

	c := clCleaner(1 << 20)
	st := clClean(t, c, l)
	end := active.BaseOffset()
	if st.EndOffset != end || l.FirstDirtyOffset() != end {
		t.Fatalf("end %d, first dirty %d; want %d", st.EndOffset, l.FirstDirtyOffset(), end)
	}
	after, _ := clReadAll(t, l)
	sameRecords(t, "after clean", after, expectCleaned(before, end))
	if st.RecordsRead != end || st.RecordsKept != int64(len(after)-int(300-end)) {
		t.Errorf("stats %+v", st)
	}
	// The active segment is untouched.
	now := l.Segments()
	if len(now) != len(segs) || now[len(now)-1] != active {
		t.Fatalf("segments after clean: %v", segmentBases(l))
	}
	if got := fileBytes(t, segmentPath(l.Dir(), active.BaseOffset(), LogSuffix)); !bytes.Equal(got, activeBytes) {
		t.Fatal("the active segment changed")
	}
	// Offsets and the log's ends do not move.
	if l.LogStartOffset() != 0 || l.LogEndOffset() != 300 {
		t.Fatalf("log start %d end %d", l.LogStartOffset(), l.LogEndOffset())
	}
	// No leftovers, once the replaced segments are released.
	for _, s := range segs {
		if !slices.Contains(now, s) {
			waitReleased(s)
		}
	}
	for _, pat := range []string{"*" + CleanedSuffix, "*" + SwapSuffix, "*" + DeletedSuffix} {
		if m, _ := filepath.Glob(filepath.Join(l.Dir(), pat)); len(m) > 0 {
			t.Fatalf("left over: %v", m)
		}
	}
	// A second pass has nothing dirty.
	if _, ok := c.plan(l); ok {
		t.Fatal("plan after a full clean")
	}
	// Reads by offset find the kept records, and offsets in gaps find the
	// next kept one.
	for _, r := range after {
		fr, err := l.Read(r.off, 1, l.LogEndOffset(), true)
		if err != nil || fr.Empty() {
			t.Fatalf("read %d: %v", r.off, err)
		}
		b, _, err := record.ParseBatch(readRange(t, fr))
		fr.Release()
		if err != nil || b.BaseOffset() > r.off || b.LastOffset() < r.off {
			t.Fatalf("read %d gave batch %d..%d: %v", r.off, b.BaseOffset(), b.LastOffset(), err)
		}
	}
}

func TestCleanEmptiedSegment(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	cfg.SegmentBytes = 1 << 20
	l := clOpen(t, t.TempDir(), cfg)
	big := strings.Repeat("x", 3000)
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "a", v: "1" + big}, kv{k: "b", v: "1" + big})) // 0-1
	l.Roll()
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "a", v: "2" + big}, kv{k: "b", v: "2" + big})) // 2-3
	l.Roll()
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "c", v: "3"})) // 4, active
	// Each segment is its own group.
	cfg.SegmentBytes = 7000
	l.SetConfig(cfg)
	clClean(t, clCleaner(1<<20), l)
	segs := l.Segments()
	if len(segs) != 3 || segs[0].Size() != 0 || segs[0].BaseOffset() != 0 {
		t.Fatalf("segments %v, first size %d", segmentBases(l), segs[0].Size())
	}
	// Reads at the emptied range go on to the next segment.
	for _, off := range []int64{0, 1} {
		fr, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil || fr.Empty() {
			t.Fatalf("read %d: %v", off, err)
		}
		if got := batchesIn(readRange(t, fr)); got[0] != [2]int64{2, 3} {
			t.Fatalf("read %d: batches %v", off, got)
		}
		fr.Release()
	}
	recs, _ := clReadAll(t, l)
	if len(recs) != 3 || recs[0].off != 2 {
		t.Fatalf("records %v", recs)
	}
	dir := l.Dir()
	l.Close()
	for _, clean := range []bool{true, false} {
		l2, err := Open(dir, cfg, OpenOptions{CleanShutdown: clean})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := clReadAll(t, l2)
		sameRecords(t, fmt.Sprintf("reopen clean=%v", clean), got, recs)
		if l2.LogEndOffset() != 5 {
			t.Fatalf("log end %d", l2.LogEndOffset())
		}
		l2.Close()
	}
}

func TestCleanTombstones(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	cfg.DeleteRetentionMs = 3600_000
	l := clOpen(t, t.TempDir(), cfg)
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "a", v: "1"}, kv{k: "b", v: "1"})) // 0-1
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms()+10, kv{k: "a", tomb: true}))              // 2
	l.Roll()
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "c", v: "1"})) // 3
	c := clCleaner(1 << 20)
	firstClean := clk.Ms()
	clClean(t, c, l)

	recs, batches := clReadAll(t, l)
	want := "[1:b=1 2:a=<nil> 3:c=1]"
	if got := fmt.Sprint(recs); got != want {
		t.Fatalf("after first clean %s, want %s", got, want)
	}
	tomb := batches[1]
	if !tomb.HasDeleteHorizon() || tomb.BaseTimestamp() != firstClean+3600_000 {
		t.Fatalf("tombstone batch: horizon %v at %d, want %d", tomb.HasDeleteHorizon(), tomb.BaseTimestamp(), firstClean+3600_000)
	}
	if recs[1].ts != firstClean+10 || tomb.MaxTimestamp() != firstClean+10 {
		t.Fatalf("tombstone timestamp %d, batch max %d, want %d", recs[1].ts, tomb.MaxTimestamp(), firstClean+10)
	}
	// The batch without tombstones lost a record: rewritten without a horizon.
	if batches[0].HasDeleteHorizon() || batches[0].BaseOffset() != 0 || batches[0].LastOffset() != 1 {
		t.Fatalf("first batch %d..%d horizon %v", batches[0].BaseOffset(), batches[0].LastOffset(), batches[0].HasDeleteHorizon())
	}

	// Within delete.retention.ms the tombstone stays through passes.
	clk.Advance(30 * time.Minute)
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "c", v: "2"})) // 4
	l.Roll()
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "d", v: "1"})) // 5
	clClean(t, c, l)
	recs, _ = clReadAll(t, l)
	if got := fmt.Sprint(recs); got != "[1:b=1 2:a=<nil> 4:c=2 5:d=1]" {
		t.Fatalf("within the horizon: %s", got)
	}

	// Past the horizon the next pass drops it.
	clk.Advance(31 * time.Minute)
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "d", v: "2"})) // 6
	l.Roll()
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "e", v: "1"})) // 7
	clClean(t, c, l)
	recs, _ = clReadAll(t, l)
	if got := fmt.Sprint(recs); got != "[1:b=1 4:c=2 6:d=2 7:e=1]" {
		t.Fatalf("past the horizon: %s", got)
	}
}

func TestCleanCompressed(t *testing.T) {
	for _, codec := range []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			clk := newClock()
			cfg := clConfig(clk)
			l := clOpen(t, t.TempDir(), cfg)
			for i := range 60 {
				var kvs []kv
				for j := range 5 {
					n := i*5 + j
					kvs = append(kvs, kv{k: fmt.Sprintf("k%d", n%17), v: fmt.Sprintf("value-%d-%s", n, strings.Repeat("z", n%50))})
				}
				if i%7 == 3 {
					kvs[2].tomb = true
				}
				clAppend(t, l, clBatch(t, codec, clk.Ms()+int64(i), kvs...))
			}
			before, _ := clReadAll(t, l)
			end := l.Segments()[len(l.Segments())-1].BaseOffset()
			clClean(t, clCleaner(1<<20), l)
			after, batches := clReadAll(t, l)
			sameRecords(t, "after clean", after, expectCleaned(before, end))
			rewritten := 0
			for _, b := range batches {
				if b.Compression() != codec {
					t.Fatalf("batch %d codec %s, want %s", b.BaseOffset(), b.Compression(), codec)
				}
				if b.LastOffsetDelta()+1 != b.NumRecords() {
					rewritten++
				}
			}
			if rewritten == 0 {
				t.Fatal("no batch was rewritten")
			}
		})
	}
}

func TestCleanReaderAcrossSwap(t *testing.T) {
	clk := newClock()
	l := clOpen(t, t.TempDir(), clConfig(clk))
	fillKeys(t, l, clk, record.CodecNone, 200, 5, 40)
	fr, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil || fr.Empty() {
		t.Fatalf("read: %v", err)
	}
	want := readRange(t, fr)
	oldBase := fr.Segment.BaseOffset()
	clClean(t, clCleaner(1<<20), l)
	if l.Segments()[0] == fr.Segment {
		t.Fatal("the segment was not replaced")
	}
	// The old file is renamed, not gone, while the range holds it.
	deleted := segmentPath(l.Dir(), oldBase, LogSuffix+DeletedSuffix)
	if _, err := os.Stat(deleted); err != nil {
		t.Fatalf("held segment: %v", err)
	}
	got := make([]byte, fr.Len)
	if n, err := unix.Pread(fr.Segment.Fd(), got, fr.Pos); err != nil || int64(n) != fr.Len || !bytes.Equal(got, want) {
		t.Fatalf("pread of the replaced segment: %d %v, same %v", n, err, bytes.Equal(got, want))
	}
	fr.Release()
	waitReleased(fr.Segment)
	if _, err := os.Stat(deleted); !os.IsNotExist(err) {
		t.Fatalf("replaced segment after release: %v", err)
	}
	// The new segment at the same base is intact.
	recs, _ := clReadAll(t, l)
	if len(recs) == 0 || recs[0].off < oldBase {
		t.Fatalf("records after swap: %v", recs)
	}
}

func TestCleanReopen(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	dir := t.TempDir()
	l, err := Open(dir, cfg, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fillKeys(t, l, clk, record.CodecLZ4, 400, 30, 30)
	clClean(t, clCleaner(1<<20), l)
	want, _ := clReadAll(t, l)
	dirty := l.FirstDirtyOffset()
	// The manager persists the first dirty offset in the checkpoint.
	cp := filepath.Join(dir, CleanerCheckpoint)
	tp := TopicPartition{"t", 0}
	if err := WriteCheckpoint(vfs.OS, cp, map[TopicPartition]int64{tp: dirty}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, clean := range []bool{true, false} {
		l2, err := Open(dir, cfg, OpenOptions{CleanShutdown: clean})
		if err != nil {
			t.Fatal(err)
		}
		offs, err := ReadCheckpoint(vfs.OS, cp)
		if err != nil {
			t.Fatal(err)
		}
		l2.SetFirstDirtyOffset(offs[tp])
		got, _ := clReadAll(t, l2)
		sameRecords(t, fmt.Sprintf("reopened (clean=%v)", clean), got, want)
		if _, ok := clCleaner(1 << 20).plan(l2); ok {
			t.Fatal("reopened log has a dirty part")
		}
		// It keeps working: append, clean again.
		fillKeys(t, l2, clk, record.CodecLZ4, 200, 30, 30)
		clClean(t, clCleaner(1<<20), l2)
		if err := WriteCheckpoint(vfs.OS, cp, map[TopicPartition]int64{tp: l2.FirstDirtyOffset()}); err != nil {
			t.Fatal(err)
		}
		if err := l2.Close(); err != nil {
			t.Fatal(err)
		}
		want, _ = clReadAll(t, clOpen(t, dir, cfg))
	}
}

func TestCleanOnceDirtyRatio(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	cfg.MinCleanableDirtyRatio = 0.5
	a := clOpen(t, t.TempDir(), cfg)
	b := clOpen(t, t.TempDir(), cfg)
	fillKeys(t, a, clk, record.CodecNone, 300, 10, 40) // all dirty
	fillKeys(t, b, clk, record.CodecNone, 300, 300, 40)
	c := clCleaner(1 << 20)
	clClean(t, c, b) // b: clean part of 300 unique keys
	fillKeys(t, b, clk, record.CodecNone, 60, 300, 40)

	pa, _ := c.plan(a)
	pb, _ := c.plan(b)
	if pa.ratio() != 1 || pb.ratio() <= 0 || pb.ratio() >= 0.5 {
		t.Fatalf("ratios a %v b %v", pa.ratio(), pb.ratio())
	}
	bDirty := b.FirstDirtyOffset()
	cleaned, err := c.CleanOnce([]*Log{b, a})
	if err != nil || !cleaned {
		t.Fatalf("CleanOnce: %v %v", cleaned, err)
	}
	if a.FirstDirtyOffset() == 0 || b.FirstDirtyOffset() != bDirty {
		t.Fatalf("first dirty a %d b %d: the filthiest log is a", a.FirstDirtyOffset(), b.FirstDirtyOffset())
	}
	if st := c.LastStats(); st.Dir != a.Dir() {
		t.Fatalf("last stats for %s", st.Dir)
	}
	// b stays below its ratio.
	if cleaned, err := c.CleanOnce([]*Log{b, a}); err != nil || cleaned {
		t.Fatalf("CleanOnce below the ratio: %v %v", cleaned, err)
	}
	// Unless its oldest dirty record passes max.compaction.lag.ms.
	bc := b.Config()
	bc.MaxCompactionLagMs = 3600_000
	b.SetConfig(bc)
	clk.Advance(2 * time.Hour)
	if cleaned, err := c.CleanOnce([]*Log{b, a}); err != nil || !cleaned || b.FirstDirtyOffset() == bDirty {
		t.Fatalf("CleanOnce past max.compaction.lag.ms: %v %v, dirty %d", cleaned, err, b.FirstDirtyOffset())
	}
	// A delete-only log is never compacted.
	d := clOpen(t, t.TempDir(), func() Config { c := cfg; c.Compact, c.Delete = false, true; return c }())
	fillKeys(t, d, clk, record.CodecNone, 300, 10, 40)
	if cleaned, err := c.CleanOnce([]*Log{d}); err != nil || cleaned {
		t.Fatalf("CleanOnce of a delete log: %v %v", cleaned, err)
	}
}

func TestCleanMinCompactionLag(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	cfg.MinCompactionLagMs = 3600_000
	l := clOpen(t, t.TempDir(), cfg)
	fillKeys(t, l, clk, record.CodecNone, 100, 10, 40)
	old := l.LogEndOffset()
	l.Roll()
	clk.Advance(2 * time.Hour)
	fillKeys(t, l, clk, record.CodecNone, 200, 10, 40) // recent: not cleanable
	before, _ := clReadAll(t, l)
	st := clClean(t, clCleaner(1<<20), l)
	if st.EndOffset != old {
		t.Fatalf("cleaned up to %d, want %d (the first recent segment)", st.EndOffset, old)
	}
	after, _ := clReadAll(t, l)
	sameRecords(t, "after", after, expectCleaned(before, old))
}

func TestCleanOffsetMapFull(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	l := clOpen(t, t.TempDir(), cfg)
	fillKeys(t, l, clk, record.CodecNone, 100, 100, 20) // unique keys: fill the map
	fillKeys(t, l, clk, record.CodecNone, 200, 100, 20) // then overwrite them twice
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "last", v: "x"}))
	l.Roll()
	before, _ := clReadAll(t, l)
	latest := clLatest(before)
	c := clCleaner(40 * mapSlotSize) // 36 keys a pass
	var ends []int64
	for range 20 {
		p, ok := c.plan(l)
		if !ok {
			break
		}
		st, err := c.cleanLog(&p)
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, st.EndOffset)
		// No pass loses a latest record.
		recs, _ := clReadAll(t, l)
		got := clLatest(recs)
		for k, r := range latest {
			if got[k] != r {
				t.Fatalf("after pass %d: key %s is %v, want %v", len(ends), k, got[k], r)
			}
		}
	}
	if len(ends) < 3 || !slices.IsSorted(ends) || ends[len(ends)-1] != l.LogEndOffset() {
		t.Fatalf("pass ends %v, log end %d", ends, l.LogEndOffset())
	}
	recs, _ := clReadAll(t, l)
	if len(recs) != len(latest) {
		t.Fatalf("%d records after the last pass, want %d", len(recs), len(latest))
	}
}

func TestCleanMapTooSmall(t *testing.T) {
	clk := newClock()
	l := clOpen(t, t.TempDir(), clConfig(clk))
	var kvs []kv
	for i := range 50 {
		kvs = append(kvs, kv{k: fmt.Sprint(i), v: "v"})
	}
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kvs...))
	l.Roll()
	c := clCleaner(10 * mapSlotSize)
	cleaned, err := c.CleanOnce([]*Log{l})
	if err == nil || cleaned {
		t.Fatalf("a batch larger than the map: %v %v", cleaned, err)
	}
	// The log is marked uncleanable and skipped after.
	if cleaned, err := c.CleanOnce([]*Log{l}); err != nil || cleaned {
		t.Fatalf("uncleanable log cleaned again: %v %v", cleaned, err)
	}
}

func TestCleanGroupsBySize(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	cfg.SegmentBytes = 1 << 20
	l := clOpen(t, t.TempDir(), cfg)
	for i := range 20 {
		for j := range 10 { // unique keys: nothing removed
			clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: fmt.Sprintf("k%02d-%d", i, j), v: strings.Repeat("v", 100)}))
		}
		l.Roll()
	}
	segSize := l.Segments()[0].Size()
	cfg.SegmentBytes = 5*segSize + 10
	l.SetConfig(cfg)
	before, _ := clReadAll(t, l)
	st := clClean(t, clCleaner(1<<20), l)
	if st.Groups != 4 || st.Segments != 20 {
		t.Fatalf("%d segments into %d groups, want 20 into 4", st.Segments, st.Groups)
	}
	segs := l.Segments()
	if len(segs) != 5 {
		t.Fatalf("segments %v", segmentBases(l))
	}
	for _, s := range segs[:4] {
		if s.Size() != 5*segSize {
			t.Fatalf("segment %d: %d bytes, want %d", s.BaseOffset(), s.Size(), 5*segSize)
		}
	}
	after, _ := clReadAll(t, l)
	sameRecords(t, "unique keys", after, before)
	// The offset range of a group may not pass 2^31 from its base.
	big := &Segment{base: 0}
	far := &Segment{base: 1 << 31}
	big.next.Store(10)
	far.next.Store(1<<31 + 10)
	if g := groupSegments([]*Segment{big, far}, &cfg); len(g) != 2 {
		t.Fatalf("offsets 2^31 apart grouped: %d groups", len(g))
	}
}

func TestCleanActiveNeverCleaned(t *testing.T) {
	clk := newClock()
	l := clOpen(t, t.TempDir(), clConfig(clk))
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "a", v: "1"}, kv{k: "a", v: "2"}))
	if _, ok := clCleaner(1 << 20).plan(l); ok {
		t.Fatal("a log with only its active segment is cleanable")
	}
	if cleaned, err := clCleaner(1 << 20).CleanOnce([]*Log{l}); err != nil || cleaned {
		t.Fatalf("CleanOnce: %v %v", cleaned, err)
	}
}

func TestCleanHighWatermark(t *testing.T) {
	clk := newClock()
	l := clOpen(t, t.TempDir(), clConfig(clk))
	fillKeys(t, l, clk, record.CodecNone, 300, 10, 40)
	segs := l.Segments()
	hw := segs[2].BaseOffset() + 1 // inside segment 2: clean segments 0 and 1
	cc := DefaultCleanerConfig()
	cc.Logger = slog.New(slog.DiscardHandler)
	cc.HighWatermark = func(*Log) int64 { return hw }
	c := NewCleaner(cc)
	before, _ := clReadAll(t, l)
	st := clClean(t, c, l)
	if st.EndOffset != segs[2].BaseOffset() {
		t.Fatalf("cleaned to %d, want %d", st.EndOffset, segs[2].BaseOffset())
	}
	after, _ := clReadAll(t, l)
	sameRecords(t, "below the high watermark", after, expectCleaned(before, segs[2].BaseOffset()))
}

func TestCleanTruncatedLog(t *testing.T) {
	clk := newClock()
	l := clOpen(t, t.TempDir(), clConfig(clk))
	fillKeys(t, l, clk, record.CodecNone, 300, 10, 40)
	clClean(t, clCleaner(1<<20), l)
	dirty := l.FirstDirtyOffset()
	if err := l.TruncateTo(dirty - 5); err != nil {
		t.Fatal(err)
	}
	if got := l.FirstDirtyOffset(); got > l.LogEndOffset() {
		t.Fatalf("first dirty %d past the log end %d after truncation", got, l.LogEndOffset())
	}
	if err := l.TruncateFullyAndStartAt(1000); err != nil {
		t.Fatal(err)
	}
	if got := l.FirstDirtyOffset(); got != 1000 {
		t.Fatalf("first dirty %d after a full truncation, want 1000", got)
	}
}

// A swap finds the log changed since the cleaner read it and gives up.
func TestCleanAbortsOnConcurrentChange(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	cfg.Delete, cfg.RetentionMs = true, 3600_000
	l := clOpen(t, t.TempDir(), cfg)
	fillKeys(t, l, clk, record.CodecNone, 100, 10, 40)
	clk.Advance(2 * time.Hour)
	fillKeys(t, l, clk, record.CodecNone, 100, 10, 40)
	c := clCleaner(1 << 20)
	p, ok := c.plan(l)
	if !ok {
		t.Fatal("nothing to clean")
	}
	// Retention deletes the old segments after the plan was made.
	if n, err := l.DeleteOldSegmentsBelow(math.MaxInt64); err != nil || n == 0 {
		t.Fatalf("retention: %d %v", n, err)
	}
	before, _ := clReadAll(t, l)
	if _, err := c.cleanLog(&p); !errors.Is(err, errCleanAborted) {
		t.Fatalf("clean of a changed log: %v", err)
	}
	after, _ := clReadAll(t, l)
	sameRecords(t, "aborted clean", after, before)
	if m, _ := filepath.Glob(filepath.Join(l.Dir(), "*"+CleanedSuffix)); len(m) > 0 {
		t.Fatalf("left over: %v", m)
	}
	// A fresh plan cleans what is left.
	clClean(t, c, l)
}

func TestCleanConcurrentAppendsAndReads(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	l := clOpen(t, t.TempDir(), cfg)
	fillKeys(t, l, clk, record.CodecNone, 100, 20, 40)
	const appends = 1500
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := range appends {
			b := clBatch(t, record.CodecSnappy, clk.Ms(), kv{k: fmt.Sprintf("k%d", i%20), v: fmt.Sprintf("w%d", i)})
			if _, err := l.Append(b, OriginClient, 0); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				// Every batch is whole, valid and in offset order.
				off, last := int64(0), int64(-1)
				for off < l.LogEndOffset() {
					fr, err := l.Read(off, 8<<10, l.LogEndOffset(), true)
					if err != nil {
						t.Error(err)
						return
					}
					if fr.Empty() {
						break
					}
					buf := make([]byte, fr.Len)
					err = preadFull(fr.Segment.Fd(), buf, fr.Pos)
					fr.Release()
					if err != nil {
						t.Error(err)
						return
					}
					for len(buf) > 0 {
						b, rest, err := record.ParseBatch(buf)
						if err != nil {
							break
						}
						if err := b.Validate(); err != nil || b.BaseOffset() <= last {
							t.Errorf("batch at %d after %d: %v", b.BaseOffset(), last, err)
							return
						}
						last, off, buf = b.LastOffset(), b.NextOffset(), rest
					}
				}
			}
		}()
	}
	c := clCleaner(1 << 20)
	passes := 0
loop:
	for {
		select {
		case <-done:
			break loop
		default:
		}
		if cleaned, err := c.CleanOnce([]*Log{l}); err != nil {
			t.Fatal(err)
		} else if cleaned {
			passes++
		}
	}
	wg.Wait()
	if passes == 0 {
		clClean(t, c, l)
	}
	l.Roll()
	clClean(t, c, l)
	recs, _ := clReadAll(t, l)
	if len(recs) != 20 {
		t.Fatalf("%d records after the final clean, want 20: %v", len(recs), recs)
	}
	for _, r := range recs {
		var k, v int
		fmt.Sscanf(r.key, "k%d", &k)
		fmt.Sscanf(r.value, "w%d", &v)
		if v%20 != k || v < appends-20 {
			t.Fatalf("record %v is not the latest of its key", r)
		}
	}
}

// Producer state survives cleaning: a producer's last batch keeps its
// header when all its records are overwritten.
func TestCleanKeepsProducerLastBatch(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	dir := t.TempDir()
	l, err := Open(dir, cfg, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	idem := func(seq int32, k string) []byte {
		return clBatchWith(t, record.BatchHeader{BaseTimestamp: clk.Ms(), LastOffsetDelta: -1, ProducerID: 5,
			ProducerEpoch: 2, BaseSequence: seq}, kv{k: k, v: "p"}, kv{k: k + "2", v: "p"})
	}
	clAppend(t, l, idem(0, "a")) // 0-1, seq 0-1
	clAppend(t, l, idem(2, "b")) // 2-3, seq 2-3: the producer's last
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "a", v: "n"}, kv{k: "a2", v: "n"}, kv{k: "b", v: "n"}, kv{k: "b2", v: "n"}))
	l.Roll()
	clClean(t, clCleaner(1<<20), l)
	_, batches := clReadAll(t, l)
	var got []string
	for _, b := range batches {
		got = append(got, fmt.Sprintf("%d-%d:%d/%d", b.BaseOffset(), b.LastOffset(), b.NumRecords(), b.ProducerID()))
	}
	// The first batch goes; the last keeps its header, empty.
	if fmt.Sprint(got) != "[2-3:0/5 4-7:4/-1]" {
		t.Fatalf("batches %v", got)
	}
	if batches[0].BaseSequence() != 2 || batches[0].ProducerEpoch() != 2 {
		t.Fatalf("empty batch seq %d epoch %d", batches[0].BaseSequence(), batches[0].ProducerEpoch())
	}
	l.Close()
	// Replayed from the log alone, the producer continues at sequence 4.
	snaps, _ := ListSnapshots(dir)
	for _, s := range snaps {
		os.Remove(SnapshotPath(dir, s))
	}
	l2 := clOpen(t, dir, cfg)
	if _, err := l2.Append(idem(9, "c"), OriginClient, 0); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("out of order sequence after clean and replay: %v", err)
	}
	if info, err := l2.Append(idem(2, "b"), OriginClient, 0); err != nil || !info.Duplicate || info.FirstOffset != 2 {
		t.Fatalf("retry of the last batch: %+v %v", info, err)
	}
	clAppend(t, l2, idem(4, "c"))
}

// txnData is a transactional batch of producer pid with the given keys.
func txnData(t testing.TB, clk *clClock, pid int64, seq int32, keys ...string) []byte {
	var kvs []kv
	for _, k := range keys {
		kvs = append(kvs, kv{k: k, v: fmt.Sprintf("p%d", pid)})
	}
	return clBatchWith(t, record.BatchHeader{BaseTimestamp: clk.Ms(), LastOffsetDelta: -1, ProducerID: pid,
		ProducerEpoch: 0, BaseSequence: seq, Transactional: true}, kvs...)
}

func txnMarker(t testing.TB, l *Log, clk *clClock, pid int64, typ record.ControlType) int64 {
	t.Helper()
	info, err := l.Append(record.AppendControlBatch(nil, pid, 0, 0, typ, clk.Ms()), OriginCoordinator, 0)
	if err != nil {
		t.Fatal(err)
	}
	return info.FirstOffset
}

func TestCleanTransactions(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	cfg.DeleteRetentionMs = 3600_000
	l := clOpen(t, t.TempDir(), cfg)
	clAppend(t, l, txnData(t, clk, 1, 0, "a", "b"))                                                    // 0-1 aborted
	clAppend(t, l, txnData(t, clk, 2, 0, "c"))                                                         // 2 committed
	abort := txnMarker(t, l, clk, 1, record.ControlAbort)                                              // 3
	commit := txnMarker(t, l, clk, 2, record.ControlCommit)                                            // 4
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "c", v: "later"}, kv{k: "z", v: "1"})) // 5-6
	// Producers 1 and 2 write again, so their markers are not their last.
	clAppend(t, l, txnData(t, clk, 1, 2, "q"))    // 7
	clAppend(t, l, txnData(t, clk, 2, 1, "r"))    // 8
	txnMarker(t, l, clk, 1, record.ControlCommit) // 9
	txnMarker(t, l, clk, 2, record.ControlCommit) // 10
	l.Roll()
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "x", v: "1"})) // 11 active
	if abort != 3 || commit != 4 {
		t.Fatalf("markers at %d %d", abort, commit)
	}
	c := clCleaner(1 << 20)
	if _, ok := c.plan(l); ok {
		t.Fatal("cleanable past an unresolved transaction")
	}
	clStableAll(l)
	txnEntries := func() []AbortedTxn {
		var out []AbortedTxn
		for _, s := range l.Segments() {
			if ti := s.txn.Load(); ti != nil {
				out = append(out, ti.Entries()...)
			}
		}
		return out
	}
	if e := txnEntries(); len(e) != 1 || e[0].FirstOffset != 0 || e[0].LastOffset != 3 {
		t.Fatalf("txn index before cleaning: %+v", e)
	}

	markers := func() (out []string) {
		_, batches := clReadAll(t, l)
		for _, b := range batches {
			if b.IsControl() {
				typ, _ := b.ControlType()
				out = append(out, fmt.Sprintf("%d:%s:%v", b.BaseOffset(), typ, b.HasDeleteHorizon()))
			}
		}
		return out
	}
	// Pass 1: the aborted data goes; its marker and index entry stay (the
	// pass saw data of the transaction). The commit marker of producer 2
	// stays too: its data (offset 2) was seen this pass.
	clClean(t, c, l)
	recs, _ := clReadAll(t, l)
	if got := fmt.Sprint(recs); got != "[5:c=later 6:z=1 7:q=p1 8:r=p2 11:x=1]" {
		t.Fatalf("records after pass 1: %s", got)
	}
	if got := fmt.Sprint(markers()); got != "[3:abort:false 4:commit:false 9:commit:false 10:commit:false]" {
		t.Fatalf("markers after pass 1: %s", got)
	}
	if e := txnEntries(); len(e) != 1 || e[0].FirstOffset != 0 || e[0].LastOffset != 3 {
		t.Fatalf("txn index after pass 1: %+v", e)
	}
	// Pass 2: no data of either transaction is left: both markers become
	// removable and get a delete horizon; the index entry goes.
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "x", v: "2"})) // 12
	l.Roll()
	clClean(t, c, l)
	if got := fmt.Sprint(markers()); got != "[3:abort:true 4:commit:true 9:commit:false 10:commit:false]" {
		t.Fatalf("markers after pass 2: %s", got)
	}
	if e := txnEntries(); len(e) != 0 {
		t.Fatalf("txn index after pass 2: %+v", e)
	}
	// Past the horizon they go.
	clk.Advance(61 * time.Minute)
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "x", v: "3"})) // 13
	l.Roll()
	clClean(t, c, l)
	if got := fmt.Sprint(markers()); got != "[9:commit:false 10:commit:false]" {
		t.Fatalf("markers after the horizon: %s", got)
	}
	recs, _ = clReadAll(t, l)
	if got := fmt.Sprint(recs); got != "[5:c=later 6:z=1 7:q=p1 8:r=p2 13:x=3]" {
		t.Fatalf("records at the end: %s", got)
	}
}

func TestCleanerCrashSafety(t *testing.T) {
	for _, step := range []swapStep{swapStopCleaned, swapStopSwapFiles, swapStopOldDeleted} {
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			clk := newClock()
			cfg := clConfig(clk)
			dir := t.TempDir()
			l, err := Open(dir, cfg, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			fillKeys(t, l, clk, record.CodecGzip, 300, 10, 40)
			l.Flush()
			big := cfg // one group: the crash leaves no group half done
			big.SegmentBytes = 1 << 20
			l.SetConfig(big)
			before, _ := clReadAll(t, l)
			end := l.Segments()[len(l.Segments())-1].BaseOffset()
			want := before
			if step >= swapStopSwapFiles {
				want = expectCleaned(before, end) // past the commit point
			}
			c := clCleaner(1 << 20)
			c.crashAt = step
			p, _ := c.plan(l)
			if _, err := c.cleanLog(&p); !errors.Is(err, errSimulatedCrash) {
				t.Fatalf("clean: %v", err)
			}
			// "Crash": abandon l, open the folder again as after a restart.
			l2, err := Open(dir, cfg, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			got, _ := clReadAll(t, l2)
			sameRecords(t, "after crash and reopen", got, want)
			if l2.LogEndOffset() != 300 {
				t.Fatalf("log end %d", l2.LogEndOffset())
			}
			for _, pat := range []string{"*" + CleanedSuffix, "*" + SwapSuffix, "*" + DeletedSuffix} {
				if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) > 0 {
					t.Fatalf("left over after open: %v", m)
				}
			}
			// The reopened log cleans to the same result.
			clClean(t, clCleaner(1<<20), l2)
			got, _ = clReadAll(t, l2)
			sameRecords(t, "cleaned after reopen", got, expectCleaned(before, end))
		})
	}
}

// The per-batch path allocates nothing in steady state.
func TestCleanBatchAllocs(t *testing.T) {
	clk := newClock()
	cfg := clConfig(clk)
	cfg.IndexIntervalBytes = 1 << 30
	dir := t.TempDir()
	c := clCleaner(1 << 20)
	c.m, _ = NewOffsetMap(1<<20, 0.9)
	var kvs []kv
	for i := range 20 {
		kvs = append(kvs, kv{k: fmt.Sprintf("k%d", i%10), v: strings.Repeat("v", 100)})
	}
	for _, codec := range []record.Codec{record.CodecNone, record.CodecZstd, record.CodecLZ4} {
		b := record.Batch(clBatch(t, codec, clk.Ms(), kvs...))
		c.mapBatch(b, 0) // half the records are overwritten: a rewrite
		w, err := createCleaned(dir, 0, &cfg, nil, 64<<10)
		if err != nil {
			t.Fatal(err)
		}
		x := &cleanContext{m: c.m, txn: newTxnTracker(nil), producers: map[int64]producerLast{}, now: clk.Ms(), stats: &CleanStats{}}
		allocs := testing.AllocsPerRun(200, func() {
			if err := c.cleanBatch(b, w, x); err != nil {
				t.Fatal(err)
			}
		})
		w.discard()
		if allocs > 0 && !racePoolDrops {
			t.Errorf("%s: %v allocations per batch", codec, allocs)
		}
		if x.stats.RecordsKept != x.stats.RecordsRead/2 {
			t.Fatalf("%s: kept %d of %d", codec, x.stats.RecordsKept, x.stats.RecordsRead)
		}
	}
}
