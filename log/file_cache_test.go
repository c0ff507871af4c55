package log

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"kzero/record"
)

// openFilesUnder counts this process's descriptors open on files in dir
// whose names end with suffix.
func openFilesUnder(t *testing.T, dir, suffix string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(os.PathSeparator)) && strings.HasSuffix(target, suffix) {
			n++
		}
	}
	return n
}

// cacheLog writes segments segments of 10 one-record batches each, through
// a log whose sealed files the cache closes, and returns it open.
func cacheLog(t *testing.T, files *FileCache, segments int) (*Log, string) {
	t.Helper()
	dir := t.TempDir()
	batch := makeBatch(t, 1, 100, record.CodecNone)
	cfg := testConfig()
	cfg.SegmentBytes = int64(10 * len(batch))
	l, err := Open(dir, cfg, OpenOptions{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for range segments * 10 {
		mustAppend(t, l, batch)
	}
	l.bg.Wait() // the rolls' flushes hold their segments for a moment
	if n := len(l.Segments()); n != segments {
		t.Fatalf("%d segments, want %d", n, segments)
	}
	return l, dir
}

// readOffset reads the batch at off and fails unless it is that offset's.
func readOffset(t testing.TB, l *Log, off int64) FileRange {
	t.Helper()
	fr, err := tryReadOffset(l, off)
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

func tryReadOffset(l *Log, off int64) (FileRange, error) {
	fr, err := l.Read(off, 1, l.LogEndOffset(), true)
	if err != nil {
		return fr, err
	}
	buf := make([]byte, fr.Len)
	err = preadFull(fr.Segment.Fd(), buf, fr.Pos)
	var b record.Batch
	if err == nil {
		b, _, err = record.ParseBatch(buf)
	}
	if err != nil || b.BaseOffset() != off {
		fr.Release()
		return FileRange{}, fmt.Errorf("read %d: %v", off, err)
	}
	return fr, nil
}

// Sealed segments keep at most the cache's bound of files open, however
// many of them reads visit; the active segment's stays open.
func TestFileCacheBoundsSealedFiles(t *testing.T) {
	files := NewFileCache(3)
	l, dir := cacheLog(t, files, 20)
	if n := openFilesUnder(t, dir, LogSuffix); n > 3+1 {
		t.Fatalf("%d segment files open after writing, want at most 4", n)
	}
	for off := int64(0); off < l.LogEndOffset(); off++ {
		readOffset(t, l, off).Release()
		if n := openFilesUnder(t, dir, LogSuffix); n > 3+1 {
			t.Fatalf("%d segment files open after reading offset %d, want at most 4", n, off)
		}
	}
	st := files.Stats()
	if st.Opened == 0 || st.Evicted == 0 || st.Open > 3 {
		t.Fatalf("cache stats %+v: want files reopened and evicted, at most 3 open", st)
	}

	// The log reopens with its sealed files closed beyond the bound too.
	l.Close()
	l2, err := Open(dir, l.Config(), OpenOptions{Files: files, CleanShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if n := openFilesUnder(t, dir, LogSuffix); n > 3+1 {
		t.Fatalf("%d segment files open after reopening, want at most 4", n)
	}
	readOffset(t, l2, 0).Release()
}

// A file range keeps its segment's file open while the cache evicts around
// it (a range queued for sendfile); once released, the file may close.
func TestFileRangeOutlivesEviction(t *testing.T) {
	files := NewFileCache(1)
	l, dir := cacheLog(t, files, 8)
	held := readOffset(t, l, 0)
	want := readRange(t, held)
	for off := int64(10); off < 70; off += 10 {
		readOffset(t, l, off).Release()
	}
	if got := readRange(t, held); !bytes.Equal(got, want) {
		t.Fatal("a held range's file was closed or replaced under it")
	}
	if n := openFilesUnder(t, dir, FileName(0, LogSuffix)); n != 1 {
		t.Fatalf("held segment's file open %d times, want 1", n)
	}
	held.Release()
	for off := int64(10); off < 70; off += 10 {
		readOffset(t, l, off).Release()
	}
	if n := openFilesUnder(t, dir, FileName(0, LogSuffix)); n != 0 {
		t.Fatalf("released segment's file still open (%d) after the cache moved on", n)
	}
}

// Readers across many segments, a cache of two and appends that roll:
// every read returns its offset's batch (run with -race).
func TestFileCacheConcurrentReads(t *testing.T) {
	files := NewFileCache(2)
	l, _ := cacheLog(t, files, 12)
	batch := makeBatch(t, 1, 100, record.CodecNone)
	end := l.LogEndOffset()
	var wg sync.WaitGroup
	for r := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for range 400 {
				fr, err := tryReadOffset(l, rng.Int64N(end))
				if err != nil {
					t.Error(err)
					return
				}
				fr.Release()
			}
		}()
	}
	for range 100 {
		mustAppend(t, l, batch)
	}
	wg.Wait()
	// The rolls' background flushes hold segment files too: wait them out
	// (under load some are still running here).
	l.bg.Wait()
	if st := files.Stats(); st.Open > 2+6 {
		t.Fatalf("cache stats %+v: more files open than the bound plus the readers", st)
	}
}

// The reads of a sealed segment allocate nothing when its file is open.
func TestReadSealedAllocatesNothing(t *testing.T) {
	if racePoolDrops {
		t.Skip("the race detector instruments allocations")
	}
	l, _ := cacheLog(t, NewFileCache(4), 4)
	readOffset(t, l, 5).Release()
	if n := testing.AllocsPerRun(200, func() {
		fr, err := l.Read(5, 1<<20, l.LogEndOffset(), true)
		if err != nil || fr.Empty() {
			t.Fatal(err)
		}
		fr.Release()
	}); n != 0 {
		t.Fatalf("Read of a sealed segment allocates %.1f per call", n)
	}
}
