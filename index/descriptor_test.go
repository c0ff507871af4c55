package index

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kzero/vfs"
)

// openUnder counts this process's descriptors open on files in dir.
func openUnder(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(os.PathSeparator)) {
			n++
		}
	}
	return n
}

// An open index holds no descriptor: the mapping outlives it. Appends,
// trims, appends after a trim (the file grows back), syncs and a reopen
// all still work through the path.
func TestIndexHoldsNoDescriptor(t *testing.T) {
	dir := t.TempDir()
	var xs []*OffsetIndex
	var ts []*TimeIndex
	for i := range 10 {
		x, err := OpenOffsetIndex(vfs.OS, filepath.Join(dir, fileNameForTest(i, ".index")), int64(i)*1000, 4096)
		if err != nil {
			t.Fatal(err)
		}
		ti, err := OpenTimeIndex(vfs.OS, filepath.Join(dir, fileNameForTest(i, ".timeindex")), int64(i)*1000, 4096)
		if err != nil {
			t.Fatal(err)
		}
		xs, ts = append(xs, x), append(ts, ti)
	}
	if n := openUnder(t, dir); n != 0 {
		t.Fatalf("%d descriptors open on 20 open indexes, want 0", n)
	}
	x, ti := xs[3], ts[3]
	for i := range 5 {
		if err := x.Append(3000+int64(i)*10, int64(i)*100+1); err != nil {
			t.Fatal(err)
		}
		if err := ti.MaybeAppend(int64(i)+1, 3000+int64(i)*10); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Trim(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(x.Path()); err != nil || st.Size() != 5*8 {
		t.Fatalf("trimmed index: %v, %v", st, err)
	}
	if err := x.Append(3100, 1000); err != nil { // extends the file again
		t.Fatal(err)
	}
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := ti.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := openUnder(t, dir); n != 0 {
		t.Fatalf("%d descriptors open after appends, trim and sync, want 0", n)
	}
	for i := range xs {
		if err := xs[i].Close(); err != nil {
			t.Fatal(err)
		}
		if err := ts[i].Close(); err != nil {
			t.Fatal(err)
		}
	}
	x, err := OpenOffsetIndex(vfs.OS, x.Path(), 3000, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.Len() != 6 || x.Last() != (OffsetPosition{3100, 1000}) {
		t.Fatalf("reopened: %d entries, last %+v", x.Len(), x.Last())
	}
}

func fileNameForTest(i int, suffix string) string {
	return strings.Repeat("0", 19) + string(rune('0'+i)) + suffix
}
