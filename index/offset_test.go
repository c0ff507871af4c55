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

// offsetBytes builds the expected .index file contents by hand from the
// format: relative offset uint32 BE, position uint32 BE.
func offsetBytes(base int64, entries ...OffsetPosition) []byte {
	var b []byte
	for _, e := range entries {
		b = binary.BigEndian.AppendUint32(b, uint32(e.Offset-base))
		b = binary.BigEndian.AppendUint32(b, uint32(e.Position))
	}
	return b
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func openOffset(t *testing.T, path string, base int64, maxBytes int) *OffsetIndex {
	t.Helper()
	x, err := OpenOffsetIndex(vfs.OS, path, base, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func appendOffsets(t *testing.T, x *OffsetIndex, entries ...OffsetPosition) {
	t.Helper()
	for _, e := range entries {
		if err := x.Append(e.Offset, e.Position); err != nil {
			t.Fatalf("Append(%d, %d): %v", e.Offset, e.Position, err)
		}
	}
}

func offsetEntries(x *OffsetIndex) []OffsetPosition {
	var es []OffsetPosition
	for i := range x.Len() {
		es = append(es, x.Entry(i))
	}
	return es
}

func equalOffsets(t *testing.T, got, want []OffsetPosition) {
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

func TestOffsetIndexBytesOnDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "00000000000000001000.index")
	const base = 1000
	x := openOffset(t, path, base, 80+7) // rounded down to 10 entries
	if got := fileSize(t, path); got != 80 {
		t.Fatalf("preallocated size = %d, want 80", got)
	}
	entries := []OffsetPosition{{1000, 0}, {1017, 4160}, {1040, 8250}, {1000 + math.MaxInt32, math.MaxInt32}}
	appendOffsets(t, x, entries...)
	want := offsetBytes(base, entries...)
	if got := fileBytes(t, path); !bytes.Equal(got, append(want, make([]byte, 80-len(want))...)) {
		t.Fatalf("untrimmed file = %x", got)
	}
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
	// The spelled-out bytes of the second entry: 17 and 4160.
	if got := fileBytes(t, path)[8:16]; !bytes.Equal(got, []byte{0, 0, 0, 17, 0, 0, 0x10, 0x40}) {
		t.Fatalf("entry 1 = %x", got)
	}
}

func TestOffsetIndexReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.index")
	x := openOffset(t, path, 50, 800)
	entries := []OffsetPosition{{52, 100}, {60, 5000}, {75, 9000}}
	appendOffsets(t, x, entries...)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	// Sealed: opened at its own size.
	y := openOffset(t, path, 50, 0)
	equalOffsets(t, offsetEntries(y), entries)
	if got := fileSize(t, path); got != 24 {
		t.Fatalf("sealed reopen size = %d, want 24", got)
	}
	if !y.Full() {
		t.Fatal("sealed index opened at its size is not full")
	}
	if err := y.Append(80, 10000); !errors.Is(err, ErrFull) {
		t.Fatalf("Append on sealed index: %v, want ErrFull", err)
	}
	if err := y.Close(); err != nil {
		t.Fatal(err)
	}

	// Active again: extended to capacity, appends continue.
	z := openOffset(t, path, 50, 800)
	if got := fileSize(t, path); got != 800 {
		t.Fatalf("reopen size = %d, want 800", got)
	}
	equalOffsets(t, offsetEntries(z), entries)
	if z.Last() != entries[2] {
		t.Fatalf("Last = %v", z.Last())
	}
	appendOffsets(t, z, OffsetPosition{90, 12000})
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := fileBytes(t, path), offsetBytes(50, append(entries, OffsetPosition{90, 12000})...); !bytes.Equal(got, want) {
		t.Fatalf("file = %x, want %x", got, want)
	}
}

func TestOffsetIndexReopenZeroTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.index")
	x := openOffset(t, path, 0, 8*2000) // several pages of zero tail
	entries := []OffsetPosition{{0, 0}, {10, 400}, {20, 800}, {1 << 24, 1 << 24}}
	appendOffsets(t, x, entries...)
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	// A crash leaves the file at full size: copy it as it is now.
	crashed := fileBytes(t, path)
	if len(crashed) != 8*2000 {
		t.Fatalf("active file size = %d", len(crashed))
	}
	copyPath := filepath.Join(dir, "crashed.index")
	if err := os.WriteFile(copyPath, crashed, 0o644); err != nil {
		t.Fatal(err)
	}
	y := openOffset(t, copyPath, 0, 8*100)
	equalOffsets(t, offsetEntries(y), entries)
	appendOffsets(t, y, OffsetPosition{1<<24 + 1, 1<<24 + 1})

	// An all-zero file holds one entry, {base, 0}: slot 0 always counts.
	zeroPath := filepath.Join(dir, "zero.index")
	if err := os.WriteFile(zeroPath, make([]byte, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	z := openOffset(t, zeroPath, 7, 64)
	equalOffsets(t, offsetEntries(z), []OffsetPosition{{7, 0}})
}

func TestOffsetIndexCorrupt(t *testing.T) {
	e := func(rel, pos uint32) []byte {
		return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, rel), pos)
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	cases := map[string][]byte{
		"size 7":              make([]byte, 7),
		"size 12":             cat(e(1, 1), []byte{0, 0, 0, 0}),
		"offset equal":        cat(e(1, 10), e(1, 20)),
		"offset decreasing":   cat(e(5, 10), e(4, 20)),
		"position equal":      cat(e(1, 10), e(2, 10)),
		"position decreasing": cat(e(1, 10), e(2, 9)),
		"zero in the middle":  cat(e(0, 0), e(0, 0), e(5, 10)),
		"offset over int32":   cat(e(math.MaxInt32+1, 10)),
		"position over int32": cat(e(1, math.MaxInt32+1)),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.index")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			x, err := OpenOffsetIndex(vfs.OS, path, 0, 1024)
			if !errors.Is(err, ErrCorrupt) {
				if x != nil {
					x.Close()
				}
				t.Fatalf("open: %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestOffsetIndexFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.index")
	x := openOffset(t, path, 0, 4*8+5)
	for i := range 4 {
		if x.Full() {
			t.Fatalf("full after %d entries", i)
		}
		appendOffsets(t, x, OffsetPosition{int64(i + 1), int64(i+1) * 100})
	}
	if !x.Full() {
		t.Fatal("not full after 4 entries")
	}
	if err := x.Append(9, 900); !errors.Is(err, ErrFull) {
		t.Fatalf("Append on full index: %v, want ErrFull", err)
	}
	if x.Len() != 4 {
		t.Fatalf("Len = %d", x.Len())
	}

	// An index smaller than one entry is always full.
	y := openOffset(t, filepath.Join(t.TempDir(), "b.index"), 0, 7)
	if !y.Full() {
		t.Fatal("zero-capacity index not full")
	}
	if err := y.Append(1, 1); !errors.Is(err, ErrFull) {
		t.Fatalf("Append: %v, want ErrFull", err)
	}
	if got := y.Lookup(5); got != (OffsetPosition{0, 0}) {
		t.Fatalf("Lookup on empty = %v", got)
	}
}

func TestOffsetIndexAppendErrors(t *testing.T) {
	const base = 100
	x := openOffset(t, filepath.Join(t.TempDir(), "a.index"), base, 1024)
	appendOffsets(t, x, OffsetPosition{110, 500})
	cases := []struct {
		offset, position int64
		want             error
	}{
		{110, 600, ErrOutOfOrder},
		{109, 600, ErrOutOfOrder},
		{111, 500, ErrOutOfOrder},
		{111, 499, ErrOutOfOrder},
		{99, 600, ErrOverflow},
		{base + math.MaxInt32 + 1, 600, ErrOverflow},
		{111, -1, ErrOverflow},
		{111, math.MaxInt32 + 1, ErrOverflow},
	}
	for _, c := range cases {
		if err := x.Append(c.offset, c.position); !errors.Is(err, c.want) {
			t.Errorf("Append(%d, %d) = %v, want %v", c.offset, c.position, err, c.want)
		}
	}
	if x.Len() != 1 {
		t.Fatalf("Len = %d after failed appends", x.Len())
	}
	// An empty index takes the base offset at position 0.
	y := openOffset(t, filepath.Join(t.TempDir(), "b.index"), base, 1024)
	appendOffsets(t, y, OffsetPosition{base, 0})
}

// linearOffsetLookup is the obvious answer Lookup must match.
func linearOffsetLookup(x *OffsetIndex, target int64) OffsetPosition {
	r := OffsetPosition{x.BaseOffset(), 0}
	for i := range x.Len() {
		if e := x.Entry(i); e.Offset <= target {
			r = e
		}
	}
	return r
}

func TestOffsetIndexLookup(t *testing.T) {
	const base = 1 << 40
	x := openOffset(t, filepath.Join(t.TempDir(), "a.index"), base, 8*5000)
	check := func() {
		t.Helper()
		targets := []int64{0, base - 1, base, base + math.MaxInt32, base + math.MaxInt32 + 10, math.MaxInt64}
		for i := range x.Len() {
			o := x.Entry(i).Offset
			targets = append(targets, o-1, o, o+1)
		}
		for _, target := range targets {
			if got, want := x.Lookup(target), linearOffsetLookup(x, target); got != want {
				t.Fatalf("Len %d: Lookup(%d) = %v, want %v", x.Len(), target, got, want)
			}
		}
	}
	check()
	// Grow through sizes below, at and above the warm section (1024 entries).
	for i := range 3000 {
		appendOffsets(t, x, OffsetPosition{base + 3 + int64(i)*7, int64(i)*4096 + 11})
		if n := x.Len(); n <= 3 || n == 1023 || n == 1024 || n == 1025 || n == 3000 {
			check()
		}
	}
}

func TestOffsetIndexTruncateTo(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.index")
	x := openOffset(t, path, 0, 8*64)
	entries := []OffsetPosition{{10, 100}, {20, 200}, {30, 300}, {40, 400}, {50, 500}}
	appendOffsets(t, x, entries...)

	x.TruncateTo(60) // nothing at or above 60
	equalOffsets(t, offsetEntries(x), entries)
	x.TruncateTo(35)
	equalOffsets(t, offsetEntries(x), entries[:3])
	x.TruncateTo(30) // 30 itself goes
	equalOffsets(t, offsetEntries(x), entries[:2])
	if got := x.Lookup(45); got != entries[1] {
		t.Fatalf("Lookup after truncate = %v", got)
	}

	// The dropped entries are zeroed, so a crash now cannot revive them.
	crashed := filepath.Join(dir, "crashed.index")
	if err := os.WriteFile(crashed, fileBytes(t, path), 0o644); err != nil {
		t.Fatal(err)
	}
	y := openOffset(t, crashed, 0, 8*64)
	equalOffsets(t, offsetEntries(y), entries[:2])

	// Appends continue from the truncation point.
	appendOffsets(t, x, OffsetPosition{25, 250})
	x.TruncateTo(5)
	if x.Len() != 0 || x.Last() != (OffsetPosition{0, 0}) {
		t.Fatalf("after TruncateTo below all: Len %d Last %v", x.Len(), x.Last())
	}
	appendOffsets(t, x, OffsetPosition{1, 1})
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := fileBytes(t, path), offsetBytes(0, OffsetPosition{1, 1}); !bytes.Equal(got, want) {
		t.Fatalf("file = %x, want %x", got, want)
	}
}

func TestOffsetIndexReset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.index")
	x := openOffset(t, path, 0, 8*16)
	appendOffsets(t, x, OffsetPosition{10, 100}, OffsetPosition{20, 200})
	x.Reset()
	if x.Len() != 0 || x.Lookup(30) != (OffsetPosition{0, 0}) {
		t.Fatalf("after Reset: Len %d Lookup %v", x.Len(), x.Lookup(30))
	}
	if got := fileBytes(t, path); !bytes.Equal(got, make([]byte, 8*16)) {
		t.Fatalf("file after Reset = %x, want zeros", got)
	}
	appendOffsets(t, x, OffsetPosition{5, 50})
	equalOffsets(t, offsetEntries(x), []OffsetPosition{{5, 50}})
}

func TestOffsetIndexTrimThenAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.index")
	x := openOffset(t, path, 0, 8*32)
	appendOffsets(t, x, OffsetPosition{1, 10}, OffsetPosition{2, 20})
	if err := x.Trim(); err != nil {
		t.Fatal(err)
	}
	if got := fileSize(t, path); got != 16 {
		t.Fatalf("trimmed size = %d", got)
	}
	if err := x.Trim(); err != nil { // trimming twice is fine
		t.Fatal(err)
	}
	appendOffsets(t, x, OffsetPosition{3, 30})
	if got := fileSize(t, path); got != 8*32 {
		t.Fatalf("size after append = %d, want capacity", got)
	}
	if got := x.Lookup(100); got != (OffsetPosition{3, 30}) {
		t.Fatalf("Lookup = %v", got)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	want := offsetBytes(0, OffsetPosition{1, 10}, OffsetPosition{2, 20}, OffsetPosition{3, 30})
	if got := fileBytes(t, path); !bytes.Equal(got, want) {
		t.Fatalf("file = %x, want %x", got, want)
	}
}

func TestOffsetIndexRename(t *testing.T) {
	dir := t.TempDir()
	oldPath, newPath := filepath.Join(dir, "a.index"), filepath.Join(dir, "a.index.deleted")
	x := openOffset(t, oldPath, 0, 8*8)
	appendOffsets(t, x, OffsetPosition{1, 10})
	if err := x.Rename(newPath); err != nil {
		t.Fatal(err)
	}
	if x.Path() != newPath {
		t.Fatalf("Path = %q", x.Path())
	}
	if _, err := os.Stat(oldPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("old path still there: %v", err)
	}
	appendOffsets(t, x, OffsetPosition{2, 20})
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := fileBytes(t, newPath), offsetBytes(0, OffsetPosition{1, 10}, OffsetPosition{2, 20}); !bytes.Equal(got, want) {
		t.Fatalf("file = %x, want %x", got, want)
	}
	if err := x.Rename(oldPath); err == nil {
		t.Fatal("Rename after Close succeeded")
	}
}

func TestOffsetIndexOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenOffsetIndex(vfs.OS, filepath.Join(dir, "a.index"), -1, 64); err == nil {
		t.Fatal("negative base offset accepted")
	}
	if _, err := OpenOffsetIndex(vfs.OS, filepath.Join(dir, "missing", "a.index"), 0, 64); err == nil {
		t.Fatal("open in a missing directory succeeded")
	}
}

func TestOffsetIndexAllocs(t *testing.T) {
	x := openOffset(t, filepath.Join(t.TempDir(), "a.index"), 0, 8*4096)
	for i := range 2000 {
		appendOffsets(t, x, OffsetPosition{int64(i) * 3, int64(i) * 100})
	}
	var sink OffsetPosition
	if n := testing.AllocsPerRun(100, func() { sink = x.Lookup(2999) }); n != 0 {
		t.Errorf("Lookup allocates %v", n)
	}
	if n := testing.AllocsPerRun(100, func() { sink = x.Lookup(17) }); n != 0 {
		t.Errorf("cold Lookup allocates %v", n)
	}
	if n := testing.AllocsPerRun(100, func() { sink = x.Entry(5); sink = x.Last() }); n != 0 {
		t.Errorf("Entry/Last allocate %v", n)
	}
	next := int64(10000)
	if n := testing.AllocsPerRun(100, func() {
		if err := x.Append(next, next*100); err != nil {
			t.Fatal(err)
		}
		next++
	}); n != 0 {
		t.Errorf("Append allocates %v", n)
	}
	_ = sink
}
