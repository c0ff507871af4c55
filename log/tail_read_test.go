package log

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"

	"kzero/record"
)

// TestTailReadNeedsNoHeaderRead: a read at the base offset of one of the
// last batches written, and a read bounded there (a HW a few batches
// behind the log end), are answered from the segment's recent batches
// without reading a batch header: headers broken on disk after the write
// do not stop them. (A read that walked the headers fails on them: those
// are the preads per fetch this saves.)
func TestTailReadNeedsNoHeaderRead(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	defer l.Close()
	for range 5 {
		mustAppend(t, l, makeBatch(t, 2, 300, record.CodecNone))
	}
	type written struct{ base, pos, len int64 }
	var last []written
	for i := range 5 {
		b := makeBatch(t, 2+i, 300, record.CodecNone)
		pos := l.Segments()[0].size.Load()
		info := mustAppend(t, l, b)
		last = append(last, written{info.FirstOffset, pos, int64(len(b))})
	}
	seg := l.Segments()[0]
	// Break the last batches' lengths on disk: a header read refuses them.
	var huge [4]byte
	binary.BigEndian.PutUint32(huge[:], 1<<30)
	for _, w := range last {
		if _, err := unix.Pwrite(seg.Fd(), huge[:], w.pos+8); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range last {
		// Max bytes 1 with min-one-batch: the range is the batch, whole.
		r, err := l.Read(w.base, 1, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("read at %d: %v", w.base, err)
		}
		if r.Pos != w.pos || r.Len != w.len {
			t.Fatalf("read at %d: [%d, +%d), want [%d, +%d)", w.base, r.Pos, r.Len, w.pos, w.len)
		}
		r.Release()

		r, err = l.Read(4, 1<<20, w.base, true)
		if err != nil {
			t.Fatalf("read bounded at %d: %v", w.base, err)
		}
		if r.Pos+r.Len != w.pos {
			t.Fatalf("read bounded at %d ends at %d, want %d", w.base, r.Pos+r.Len, w.pos)
		}
		r.Release()
	}
}

// TestRecentBatches: the ring finds the last recentSlots batches with
// their lengths, none at or past the size the reader loaded, none dropped
// by a cut, and none while a slot changes.
func TestRecentBatches(t *testing.T) {
	var r recentBatches
	pos := int64(0)
	lens := map[int64]int64{}
	for i := range 40 {
		n := int64(100 + i)
		r.add(int64(i*3), pos)
		lens[int64(i*3)] = n
		pos += n
	}
	size := pos
	for i := range 40 {
		rel := int64(i * 3)
		p, n, ok := r.find(rel, 0, size)
		if recent := i >= 40-recentSlots; ok != recent {
			t.Fatalf("batch %d (of 40): found %v", i, ok)
		}
		if ok && n != lens[rel] {
			t.Fatalf("batch %d at %d: length %d, want %d", i, p, n, lens[rel])
		}
	}
	// A reader that loaded an older size sees nothing at or past it, and
	// the last batch below it ends there.
	lastPos, _, _ := r.find(39*3, 0, size)
	if _, _, ok := r.find(39*3, 0, lastPos); ok {
		t.Fatal("found a batch at the size the reader loaded")
	}
	if p, n, ok := r.find(38*3, 0, lastPos); !ok || p+n != lastPos {
		t.Fatalf("batch before the last: %d +%d %v, want it to end at %d", p, n, ok, lastPos)
	}
	// Nothing before from.
	if _, _, ok := r.find(38*3, lastPos, size); ok {
		t.Fatal("found a batch before from")
	}
	// A cut drops what lies at or past it.
	r.dropFrom(lastPos)
	if _, _, ok := r.find(39*3, 0, size); ok {
		t.Fatal("found a batch past the cut")
	}
	if _, _, ok := r.find(38*3, 0, size); !ok {
		t.Fatal("lost a batch before the cut")
	}
	// A slot changing (odd sequence): the reader reads the headers.
	r.seq.Add(1)
	if _, _, ok := r.find(38*3, 0, size); ok {
		t.Fatal("found a batch while a slot changes")
	}
}

// TestTailReadFollowsTruncation: after a truncation the old last batch is
// not found by its offset, and the batches written after it are.
func TestTailReadFollowsTruncation(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	defer l.Close()
	for range 10 {
		mustAppend(t, l, makeBatch(t, 2, 300, record.CodecNone))
	}
	if err := l.TruncateTo(14); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(18, 1<<20, 20, true); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("read at the truncated last batch: %v, want OFFSET_OUT_OF_RANGE", err)
	}
	b := makeBatch(t, 3, 100, record.CodecNone)
	info := mustAppend(t, l, b)
	if info.FirstOffset != 14 {
		t.Fatalf("appended at %d", info.FirstOffset)
	}
	r, err := l.Read(14, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if got := batchesIn(readRange(t, r)); len(got) != 1 || got[0] != [2]int64{14, 16} || r.Len != int64(len(b)) {
		t.Fatalf("read at the new last batch: %v, %d bytes", got, r.Len)
	}
}

// TestTailReadsDuringAppends: readers near the log end, as consumers and
// followers are, always get whole batches that start at the offset they
// asked for, while appends (in groups) and rolls go on.
func TestTailReadsDuringAppends(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 32 << 10
	l := openTestLog(t, t.TempDir(), cfg)
	defer l.Close()
	mustAppend(t, l, makeBatch(t, 2, 100, record.CodecNone))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for {
				select {
				case <-stop:
					return
				default:
				}
				end := l.LogEndOffset()
				// One of the last batches' bases (every batch holds 2
				// records), within the recent ones or just past them.
				off := max(end-2*int64(1+rand.IntN(recentSlots+4)), 0)
				r, err := l.Read(off, len(buf), end, true)
				if err != nil {
					t.Error(err)
					return
				}
				if r.Empty() {
					t.Errorf("read at %d below %d: empty", off, end)
					return
				}
				n := min(int(r.Len), len(buf))
				if err := preadFull(r.Segment.Fd(), buf[:n], r.Pos); err != nil {
					t.Error(err)
				}
				r.Release()
				got := batchesIn(buf[:n])
				if len(got) == 0 || got[0][0] != off {
					t.Errorf("read at %d: batches %v", off, got)
					return
				}
			}
		})
	}
	var ap sync.WaitGroup
	for range 2 {
		ap.Go(func() {
			for range 1000 {
				mustAppend(t, l, makeBatch(t, 2, 100, record.CodecNone))
			}
		})
	}
	ap.Wait()
	close(stop)
	wg.Wait()
}
