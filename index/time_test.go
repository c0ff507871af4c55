package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"kzero/vfs"
)

// timeBytes builds the expected .timeindex contents by hand from the format:
// timestamp int64 BE, relative offset uint32 BE.
func timeBytes(base int64, entries ...TimestampOffset) []byte {
	var b []byte
	for _, e := range entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.Timestamp))
		b = binary.BigEndian.AppendUint32(b, uint32(e.Offset-base))
	}
	return b
}

func openTime(t *testing.T, path string, base int64, maxBytes int) *TimeIndex {
	t.Helper()
	x, err := OpenTimeIndex(vfs.OS, path, base, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func appendTimes(t *testing.T, x *TimeIndex, entries ...TimestampOffset) {
	t.Helper()
	for _, e := range entries {
		if err := x.MaybeAppend(e.Timestamp, e.Offset); err != nil {
			t.Fatalf("MaybeAppend(%d, %d): %v", e.Timestamp, e.Offset, err)
		}
	}
}

func timeEntries(x *TimeIndex) []TimestampOffset {
	var es []TimestampOffset
	for i := range x.Len() {
		es = append(es, x.Entry(i))
	}
	return es
}

func equalTimes(t *testing.T, got, want []TimestampOffset) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("entries = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("entries = %v, want %v", got, want)
		}
	}
}

func TestTimeIndexBytesOnDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "00000000000000000500.timeindex")
	const base = 500
	x := openTime(t, path, base, 12*10+11)
	if got := fileSize(t, path); got != 120 {
		t.Fatalf("preallocated size = %d, want 120", got)
	}
	entries := []TimestampOffset{{0, 500}, {1700000000000, 500}, {1700000000001, 612}, {math.MaxInt64, 500 + math.MaxInt32}}
	appendTimes(t, x, entries...)
	want := timeBytes(base, entries...)
	if err := x.Trim(); err != nil {
		t.Fatal(err)
	}
	if got := fileBytes(t, path); !bytes.Equal(got, want) {
		t.Fatalf("trimmed file = %x, want %x", got, want)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fileBytes(t, path); !bytes.Equal(got, want) {
		t.Fatalf("closed file = %x, want %x", got, want)
	}
	// The spelled-out bytes of the third entry: 1700000000001 = 0x18BCFE56801, offset 112.
	if got := fileBytes(t, path)[24:36]; !bytes.Equal(got, []byte{0, 0, 1, 0x8B, 0xCF, 0xE5, 0x68, 0x01, 0, 0, 0, 112}) {
		t.Fatalf("entry 2 = %x", got)
	}
}

func TestTimeIndexMaybeAppend(t *testing.T) {
	x := openTime(t, filepath.Join(t.TempDir(), "a.timeindex"), 100, 12*16)
	if got := x.Last(); got != (TimestampOffset{-1, 100}) {
		t.Fatalf("empty Last = %v", got)
	}
	appendTimes(t, x,
		TimestampOffset{-1, 100}, // not above the empty index's -1: skipped
		TimestampOffset{1000, 105},
		TimestampOffset{1000, 107}, // same timestamp: skipped
		TimestampOffset{999, 108},  // lower timestamp: skipped
		TimestampOffset{1500, 108},
		TimestampOffset{1600, 108}, // same offset, higher timestamp: kept
	)
	equalTimes(t, timeEntries(x), []TimestampOffset{{1000, 105}, {1500, 108}, {1600, 108}})

	if err := x.MaybeAppend(2000, 107); !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("offset below last: %v, want ErrOutOfOrder", err)
	}
	if err := x.MaybeAppend(1, 107); !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("offset below last with a low timestamp: %v, want ErrOutOfOrder", err)
	}
	if err := x.MaybeAppend(2000, 100+math.MaxInt32+1); !errors.Is(err, ErrOverflow) {
		t.Fatalf("offset overflow: %v, want ErrOverflow", err)
	}
	y := openTime(t, filepath.Join(t.TempDir(), "b.timeindex"), 100, 12*16)
	if err := y.MaybeAppend(5, 99); !errors.Is(err, ErrOverflow) {
		t.Fatalf("offset below base: %v, want ErrOverflow", err)
	}
	if x.Len() != 3 || y.Len() != 0 {
		t.Fatalf("Len = %d, %d after failed appends", x.Len(), y.Len())
	}
}

func TestTimeIndexFull(t *testing.T) {
	x := openTime(t, filepath.Join(t.TempDir(), "a.timeindex"), 0, 12*4)
	for i := range 3 {
		if x.Full() {
			t.Fatalf("full after %d entries", i)
		}
		appendTimes(t, x, TimestampOffset{int64(i) + 10, int64(i)})
	}
	// Three of four slots used: full, with the last slot kept for the roll.
	if !x.Full() {
		t.Fatal("not full with one slot left")
	}
	appendTimes(t, x, TimestampOffset{100, 10})
	if err := x.MaybeAppend(200, 20); !errors.Is(err, ErrFull) {
		t.Fatalf("MaybeAppend on full index: %v, want ErrFull", err)
	}
	// Nothing to append: no error even when full.
	if err := x.MaybeAppend(100, 20); err != nil {
		t.Fatalf("skipped MaybeAppend on full index: %v", err)
	}
	if x.Len() != 4 {
		t.Fatalf("Len = %d", x.Len())
	}
}

func TestTimeIndexCorrupt(t *testing.T) {
	e := func(ts int64, rel uint32) []byte {
		return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, uint64(ts)), rel)
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	cases := map[string][]byte{
		"size 8":               make([]byte, 8),
		"size 13":              cat(e(1, 1), []byte{0}),
		"timestamp equal":      cat(e(10, 1), e(10, 2)),
		"timestamp decreasing": cat(e(10, 1), e(9, 2)),
		"offset decreasing":    cat(e(10, 5), e(11, 4)),
		"negative timestamp":   cat(e(-5, 0), e(0, 0), e(3, 1)),
		"offset over int32":    cat(e(1, math.MaxInt32+1)),
		"zero in the middle":   cat(e(0, 0), e(0, 0), e(5, 1)),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.timeindex")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			x, err := OpenTimeIndex(vfs.OS, path, 0, 1200)
			if !errors.Is(err, ErrCorrupt) {
				if x != nil {
					x.Close()
				}
				t.Fatalf("open: %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestTimeIndexReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.timeindex")
	x := openTime(t, path, 10, 12*100)
	entries := []TimestampOffset{{100, 10}, {200, 15}, {300, 15}, {400, 40}}
	appendTimes(t, x, entries...)
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	// A crash: the file at full size with a zero tail.
	crashed := filepath.Join(dir, "crashed.timeindex")
	if err := os.WriteFile(crashed, fileBytes(t, path), 0o644); err != nil {
		t.Fatal(err)
	}
	y := openTime(t, crashed, 10, 12*100)
	equalTimes(t, timeEntries(y), entries)

	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	z := openTime(t, path, 10, 0)
	equalTimes(t, timeEntries(z), entries)
	if z.Last() != entries[3] {
		t.Fatalf("Last = %v", z.Last())
	}
	if got := fileSize(t, path); got != 48 {
		t.Fatalf("sealed size = %d", got)
	}
}

func linearTimeLookup(x *TimeIndex, ts int64) TimestampOffset {
	r := TimestampOffset{-1, x.BaseOffset()}
	for i := range x.Len() {
		if e := x.Entry(i); e.Timestamp <= ts {
			r = e
		}
	}
	return r
}

func TestTimeIndexLookup(t *testing.T) {
	const base = 77
	x := openTime(t, filepath.Join(t.TempDir(), "a.timeindex"), base, 12*3000)
	check := func() {
		t.Helper()
		targets := []int64{math.MinInt64, -1, 0, math.MaxInt64}
		for i := range x.Len() {
			ts := x.Entry(i).Timestamp
			targets = append(targets, ts-1, ts, ts+1)
		}
		for _, ts := range targets {
			if got, want := x.Lookup(ts), linearTimeLookup(x, ts); got != want {
				t.Fatalf("Len %d: Lookup(%d) = %v, want %v", x.Len(), ts, got, want)
			}
		}
	}
	check()
	// Warm section is 682 entries.
	for i := range 2000 {
		appendTimes(t, x, TimestampOffset{1_000_000 + int64(i)*13, base + int64(i/2)})
		if n := x.Len(); n <= 3 || n == 681 || n == 682 || n == 683 || n == 2000 {
			check()
		}
	}
}

func TestTimeIndexTruncateTo(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.timeindex")
	x := openTime(t, path, 0, 12*32)
	entries := []TimestampOffset{{100, 10}, {200, 20}, {300, 20}, {400, 30}, {500, 40}}
	appendTimes(t, x, entries...)
	x.TruncateTo(41)
	equalTimes(t, timeEntries(x), entries)
	x.TruncateTo(25) // drops 30 and 40
	equalTimes(t, timeEntries(x), entries[:3])
	x.TruncateTo(20) // both entries at offset 20 go
	equalTimes(t, timeEntries(x), entries[:1])

	crashed := filepath.Join(dir, "crashed.timeindex")
	if err := os.WriteFile(crashed, fileBytes(t, path), 0o644); err != nil {
		t.Fatal(err)
	}
	y := openTime(t, crashed, 0, 12*32)
	equalTimes(t, timeEntries(y), entries[:1])

	appendTimes(t, x, TimestampOffset{150, 12})
	x.Reset()
	if x.Len() != 0 || x.Last() != (TimestampOffset{-1, 0}) {
		t.Fatalf("after Reset: Len %d Last %v", x.Len(), x.Last())
	}
	appendTimes(t, x, TimestampOffset{5, 1})
	if err := x.Trim(); err != nil {
		t.Fatal(err)
	}
	appendTimes(t, x, TimestampOffset{6, 2})
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := fileBytes(t, path), timeBytes(0, TimestampOffset{5, 1}, TimestampOffset{6, 2}); !bytes.Equal(got, want) {
		t.Fatalf("file = %x, want %x", got, want)
	}
}

func TestTimeIndexRename(t *testing.T) {
	dir := t.TempDir()
	oldPath, newPath := filepath.Join(dir, "a.timeindex"), filepath.Join(dir, "a.timeindex.cleaned")
	x := openTime(t, oldPath, 0, 12*8)
	appendTimes(t, x, TimestampOffset{1, 1})
	if err := x.Rename(newPath); err != nil {
		t.Fatal(err)
	}
	if x.Path() != newPath {
		t.Fatalf("Path = %q", x.Path())
	}
	appendTimes(t, x, TimestampOffset{2, 2})
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := fileBytes(t, newPath), timeBytes(0, TimestampOffset{1, 1}, TimestampOffset{2, 2}); !bytes.Equal(got, want) {
		t.Fatalf("file = %x, want %x", got, want)
	}
}

func TestTimeIndexAllocs(t *testing.T) {
	x := openTime(t, filepath.Join(t.TempDir(), "a.timeindex"), 0, 12*4096)
	for i := range 2000 {
		appendTimes(t, x, TimestampOffset{int64(i) * 10, int64(i)})
	}
	var sink TimestampOffset
	if n := testing.AllocsPerRun(100, func() { sink = x.Lookup(19990) }); n != 0 {
		t.Errorf("Lookup allocates %v", n)
	}
	if n := testing.AllocsPerRun(100, func() { sink = x.Lookup(55) }); n != 0 {
		t.Errorf("cold Lookup allocates %v", n)
	}
	next := int64(100000)
	if n := testing.AllocsPerRun(100, func() {
		if err := x.MaybeAppend(next, next); err != nil {
			t.Fatal(err)
		}
		next++
	}); n != 0 {
		t.Errorf("MaybeAppend allocates %v", n)
	}
	_ = sink
}
