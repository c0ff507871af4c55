package log

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"kzero/kzerotest/await"
	"kzero/record"
)

// repairFixture writes a log of one-record batches in several segments,
// with an offset index entry every 20 batches (as in the report:
// one entry covers 20 offsets), closes it cleanly and returns its folder,
// config and end offset.
func repairFixture(t *testing.T) (string, Config, int64) {
	t.Helper()
	dir := t.TempDir()
	batch := makeBatch(t, 1, 50, record.CodecNone)
	cfg := testConfig()
	cfg.IndexIntervalBytes = 19*len(batch) + 1
	cfg.SegmentBytes = int64(2200 * len(batch)) // 110 entries a segment
	l := openTestLog(t, dir, cfg)
	for range 4 * 2200 {
		mustAppend(t, l, batch)
	}
	end := l.LogEndOffset()
	if n := len(l.Segments()); n < 4 {
		t.Fatalf("%d segments, want at least 4", n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, cfg, end
}

// cloneDir copies the regular files of from into a new temporary folder.
func cloneDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// checkEveryOffset reads every offset below end, from several goroutines,
// and fails unless each read starts at the batch holding that offset.
func checkEveryOffset(t *testing.T, l *Log, end int64) {
	t.Helper()
	const readers = 4
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for off := int64(r); off < end; off += readers {
				fr, err := l.Read(off, 1, end, true)
				if err != nil {
					errs <- fmt.Errorf("read %d: %w", off, err)
					return
				}
				buf := make([]byte, fr.Len)
				err = preadFull(fr.Segment.Fd(), buf, fr.Pos)
				fr.Release()
				if err != nil {
					errs <- fmt.Errorf("read %d: %w", off, err)
					return
				}
				b, _, err := record.ParseBatch(buf)
				if err == nil {
					err = b.Validate()
				}
				if err != nil || b.BaseOffset() != off {
					errs <- fmt.Errorf("read %d: got a batch at %d, %v", off, b.BaseOffset(), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A sealed .index damaged so that it still passes the checks on open (a
// position moved inside a batch or past the end, a relative offset moved
// to a neighbour) is caught by the reads that use the entry: every offset
// still reads right, and the index is rebuilt in the background, equal to
// the one appends wrote. Byte 830 with 0x06 is the reproduction.
func TestDamagedSealedIndexFallsBackAndIsRebuilt(t *testing.T) {
	dir, cfg, end := repairFixture(t)
	cases := []struct {
		name    string
		segment int // which segment's index (all sealed)
		at      int // byte to flip; negative: from the end
		mask    byte
	}{
		{"issue repro: position of entry 103", 0, 830, 0x06},
		{"position off by one", 1, 10*8 + 7, 0x01},
		{"position moved 1 KiB", 0, 40*8 + 6, 0x04},
		{"relative offset of entry 70", 2, 70*8 + 3, 0x02},
		{"last entry's position past the end", 1, -4, 0x40},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := cloneDir(t, dir)
			bases, err := (&Log{dir: d}).cleanDir()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(d, FileName(bases[c.segment], IndexSuffix))
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			at := c.at
			if at < 0 {
				at += len(good)
			}
			if at < 0 || at >= len(good) {
				t.Fatalf("index of %d bytes, cannot flip byte %d", len(good), c.at)
			}
			bad := bytes.Clone(good)
			bad[at] ^= c.mask
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			found := IndexRepairs()
			l, err := Open(d, cfg, OpenOptions{CleanShutdown: true})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if l.Segments()[c.segment].needsRecovery {
				t.Fatal("the damage was caught on open; this case must pass the open checks")
			}
			checkEveryOffset(t, l, end)
			if IndexRepairs() == found {
				t.Fatal("no read reported the damaged index")
			}
			await.True(t, 30*time.Second, func() bool {
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				return bytes.Equal(got, good)
			}, "the damaged index rebuilt")
			checkEveryOffset(t, l, end) // through the swapped-in index
			if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
				t.Fatalf("rebuild left its temporary file: %v", err)
			}
		})
	}
}
