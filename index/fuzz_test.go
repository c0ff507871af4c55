package index

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"kzero/vfs"
)

// FuzzOpenOffsetIndex opens arbitrary bytes as an offset index. Open either
// fails with ErrCorrupt or yields ordered entries that Lookup searches like a
// linear scan would; an append and a close then reopen round-trip.
func FuzzOpenOffsetIndex(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add(make([]byte, 64), uint16(16))
	f.Add(offsetBytes(0, OffsetPosition{0, 0}, OffsetPosition{3, 70}, OffsetPosition{9, 4000}), uint16(8))
	f.Add(append(offsetBytes(0, OffsetPosition{5, 7}, OffsetPosition{6, 8}), make([]byte, 40)...), uint16(2))
	f.Add(offsetBytes(0, OffsetPosition{5, 7}, OffsetPosition{4, 8}), uint16(4))
	f.Add([]byte{1, 2, 3}, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, maxEntries uint16) {
		const base = 1 << 33
		path := filepath.Join(t.TempDir(), "f.index")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		x, err := OpenOffsetIndex(vfs.OS, path, base, int(maxEntries)*8)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open failed without ErrCorrupt: %v", err)
			}
			return
		}
		defer x.Close()
		if want := usedSlots(data, 8); x.Len() != want {
			t.Fatalf("Len %d from %d bytes, want %d", x.Len(), len(data), want)
		}
		entries := offsetEntries(x)
		for i, e := range entries {
			if e.Offset < base || e.Offset-base > math.MaxInt32 || e.Position < 0 || e.Position > math.MaxInt32 {
				t.Fatalf("entry %d = %v out of range", i, e)
			}
			if i > 0 && (e.Offset <= entries[i-1].Offset || e.Position <= entries[i-1].Position) {
				t.Fatalf("entries not ordered: %v then %v", entries[i-1], e)
			}
		}
		targets := []int64{math.MinInt64, base - 1, base, math.MaxInt64}
		for _, e := range entries {
			targets = append(targets, e.Offset-1, e.Offset, e.Offset+1)
		}
		for _, target := range targets {
			if got, want := x.Lookup(target), linearOffsetLookup(x, target); got != want {
				t.Fatalf("Lookup(%d) = %v, want %v", target, got, want)
			}
		}
		if !x.Full() {
			last := x.Last()
			err := x.Append(last.Offset+1, last.Position+1)
			if err != nil && !errors.Is(err, ErrOverflow) {
				t.Fatalf("Append after %v: %v", last, err)
			}
			if err == nil {
				entries = append(entries, OffsetPosition{last.Offset + 1, last.Position + 1})
			}
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		y, err := OpenOffsetIndex(vfs.OS, path, base, 0)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer y.Close()
		equalOffsets(t, offsetEntries(y), entries)
	})
}

// FuzzOpenTimeIndex is FuzzOpenOffsetIndex for the time index.
func FuzzOpenTimeIndex(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add(make([]byte, 48), uint16(8))
	f.Add(timeBytes(0, TimestampOffset{0, 0}, TimestampOffset{10, 0}, TimestampOffset{11, 40}), uint16(8))
	f.Add(append(timeBytes(0, TimestampOffset{5, 7}, TimestampOffset{6, 8}), make([]byte, 36)...), uint16(2))
	f.Add(timeBytes(0, TimestampOffset{5, 7}, TimestampOffset{4, 8}), uint16(4))
	f.Add([]byte{1, 2, 3}, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, maxEntries uint16) {
		const base = 42
		path := filepath.Join(t.TempDir(), "f.timeindex")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		x, err := OpenTimeIndex(vfs.OS, path, base, int(maxEntries)*12)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open failed without ErrCorrupt: %v", err)
			}
			return
		}
		defer x.Close()
		if want := usedSlots(data, 12); x.Len() != want {
			t.Fatalf("Len %d from %d bytes, want %d", x.Len(), len(data), want)
		}
		entries := timeEntries(x)
		for i, e := range entries {
			if e.Timestamp < 0 || e.Offset < base || e.Offset-base > math.MaxInt32 {
				t.Fatalf("entry %d = %v out of range", i, e)
			}
			if i > 0 && (e.Timestamp <= entries[i-1].Timestamp || e.Offset < entries[i-1].Offset) {
				t.Fatalf("entries not ordered: %v then %v", entries[i-1], e)
			}
		}
		targets := []int64{math.MinInt64, -1, 0, math.MaxInt64}
		for _, e := range entries {
			targets = append(targets, e.Timestamp-1, e.Timestamp, e.Timestamp+1)
		}
		for _, ts := range targets {
			if got, want := x.Lookup(ts), linearTimeLookup(x, ts); got != want {
				t.Fatalf("Lookup(%d) = %v, want %v", ts, got, want)
			}
		}
		if last := x.Last(); last.Timestamp < math.MaxInt64 {
			err := x.MaybeAppend(last.Timestamp+1, last.Offset)
			switch {
			case err == nil:
				entries = append(entries, TimestampOffset{last.Timestamp + 1, last.Offset})
			case !errors.Is(err, ErrFull):
				t.Fatalf("MaybeAppend after %v: %v", last, err)
			}
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		y, err := OpenTimeIndex(vfs.OS, path, base, 0)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer y.Close()
		equalTimes(t, timeEntries(y), entries)
	})
}

// usedSlots counts the entries in a file the slow way: every slot, less the
// all-zero slots at the end, but never less than one slot.
func usedSlots(data []byte, width int) int {
	n := len(data) / width
	for n > 1 && bytes.Equal(data[(n-1)*width:n*width], make([]byte, width)) {
		n--
	}
	return n
}
