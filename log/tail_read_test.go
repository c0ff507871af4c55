package log

import (
	"encoding/binary"
	"errors"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"

	"kzero/record"
)

// TestTailReadNeedsNoHeaderRead: a read at the base offset of the last
// batch written, and a read bounded there (a HW one batch behind the log
// end), are answered from Segment.tail without reading a batch header: a
// header broken on disk after the write does not stop them. (A read that
// walked the headers fails on it: that is the pread per fetch the tail
// saves.)
func TestTailReadNeedsNoHeaderRead(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	defer l.Close()
	for range 5 {
		mustAppend(t, l, makeBatch(t, 2, 300, record.CodecNone))
	}
	last := makeBatch(t, 2, 300, record.CodecNone)
	info := mustAppend(t, l, last)
	seg := l.Segments()[0]
	size := seg.size.Load()
	pos := size - int64(len(last))
	// Break the last batch's length on disk: a header read refuses it.
	var huge [4]byte
	binary.BigEndian.PutUint32(huge[:], 1<<30)
	if _, err := unix.Pwrite(seg.Fd(), huge[:], pos+8); err != nil {
		t.Fatal(err)
	}

	r, err := l.Read(info.FirstOffset, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatalf("read at the last batch: %v", err)
	}
	if r.Pos != pos || r.Len != int64(len(last)) {
		t.Fatalf("read at the last batch: [%d, +%d), want [%d, +%d)", r.Pos, r.Len, pos, len(last))
	}
	r.Release()

	r, err = l.Read(4, 1<<20, info.FirstOffset, true)
	if err != nil {
		t.Fatalf("read bounded at the last batch: %v", err)
	}
	if r.Pos+r.Len != pos {
		t.Fatalf("read bounded at the last batch ends at %d, want %d", r.Pos+r.Len, pos)
	}
	r.Release()
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

// TestTailReadsDuringAppends: readers at the log end, as consumers and
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
				off := end - 2 // the last batch's base: every batch holds 2 records
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
