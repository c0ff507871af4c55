package index

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// The writer appends entries whose fields are functions of the entry number,
// so a reader can tell a torn or unpublished entry from a good one.
func concurrentOffset(i int) OffsetPosition {
	return OffsetPosition{Offset: 1000 + int64(i)*5 + 2, Position: int64(i)*97 + 1}
}

func concurrentTime(i int) TimestampOffset {
	return TimestampOffset{Timestamp: 50_000 + int64(i)*3, Offset: 1000 + int64(i)*5 + 2}
}

// TestConcurrentReaders runs lock-free readers against one writer that
// appends to both indexes, trims the file in the middle (as a roll would, the
// mapping staying put) and appends on. Run it with -race.
func TestConcurrentReaders(t *testing.T) {
	const total = 20000
	dir := t.TempDir()
	ox := openOffset(t, filepath.Join(dir, "a.index"), 1000, 8*total)
	tx := openTime(t, filepath.Join(dir, "a.timeindex"), 1000, 12*(total+1))

	var done atomic.Bool
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- readUntilDone(&done, ox, tx, uint64(r))
		}()
	}

	for i := range total {
		e := concurrentOffset(i)
		if err := ox.Append(e.Offset, e.Position); err != nil {
			t.Fatal(err)
		}
		te := concurrentTime(i)
		if err := tx.MaybeAppend(te.Timestamp, te.Offset); err != nil {
			t.Fatal(err)
		}
		if i == total/2 {
			if err := ox.Trim(); err != nil {
				t.Fatal(err)
			}
			if err := tx.Trim(); err != nil {
				t.Fatal(err)
			}
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func readUntilDone(done *atomic.Bool, ox *OffsetIndex, tx *TimeIndex, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	var lastLen, rounds int
	for !done.Load() || rounds < 100 {
		rounds++
		n := ox.Len()
		if n < lastLen {
			return fmt.Errorf("Len went back from %d to %d", lastLen, n)
		}
		lastLen = n
		if n > 0 {
			i := rng.IntN(n)
			if got := ox.Entry(i); got != concurrentOffset(i) {
				return fmt.Errorf("Entry(%d) = %v, want %v", i, got, concurrentOffset(i))
			}
			if got := ox.Last(); got.Offset < concurrentOffset(n-1).Offset {
				return fmt.Errorf("Last = %v older than entry %d", got, n-1)
			}
			// A target anywhere up to just past the last entry read, or
			// in the tail where fetches land.
			target := 990 + rng.Int64N(int64(n)*5+20)
			if rng.IntN(2) == 0 {
				target = concurrentOffset(n-1).Offset - rng.Int64N(40)
			}
			got := ox.Lookup(target)
			if got == (OffsetPosition{1000, 0}) {
				if target >= concurrentOffset(0).Offset {
					return fmt.Errorf("Lookup(%d) found nothing", target)
				}
			} else {
				if got.Offset > target {
					return fmt.Errorf("Lookup(%d) = %v, above the target", target, got)
				}
				k := int(got.Offset-1002) / 5
				if got != concurrentOffset(k) {
					return fmt.Errorf("Lookup(%d) = %v, not an appended entry", target, got)
				}
				if k+1 < n && concurrentOffset(k+1).Offset <= target {
					return fmt.Errorf("Lookup(%d) = %v, but entry %d is closer", target, got, k+1)
				}
			}
		}
		if m := tx.Len(); m > 0 {
			ts := 49_990 + rng.Int64N(int64(m)*3+20)
			got := tx.Lookup(ts)
			if got.Timestamp > ts {
				return fmt.Errorf("time Lookup(%d) = %v, above the target", ts, got)
			}
			if got.Timestamp != -1 {
				k := int(got.Timestamp-50_000) / 3
				if got != concurrentTime(k) {
					return fmt.Errorf("time Lookup(%d) = %v, not an appended entry", ts, got)
				}
			}
		}
	}
	return nil
}

// TestSyncDuringRename runs a background fsync (as a sealed segment's flush
// does) against the writer renaming the file to .deleted and back (as the
// cleaner's swap and retention do). Every sync must find the file: before
// rename and sync's open were serialized, a sync could open the name the
// file had just left and fail with ENOENT, which took the whole log offline.
func TestSyncDuringRename(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.index"), filepath.Join(dir, "a.index.deleted")
	ox := openOffset(t, a, 0, 8*64)
	const rounds = 2000
	var wg sync.WaitGroup
	var done, stop atomic.Bool
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		for i := 0; i < rounds && !stop.Load(); i++ {
			to := b
			if i%2 == 1 {
				to = a
			}
			if err := ox.Rename(to); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for !done.Load() {
		ox.t.sizeGen.Add(1) // a length change, so the sync opens the file
		if err := ox.Sync(); err != nil {
			t.Error(err)
			break
		}
	}
	stop.Store(true)
	wg.Wait()
}
