package index

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"kzero/vfs"
)

// smallTmpfs mounts a tmpfs of size bytes and returns its path; it skips
// when it cannot (not root). tmpfs is the strictest case: there even a read
// fault on a hole of a shared mapping allocates a page, so on a full tmpfs
// both reads and writes of holes are a SIGBUS.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file at path until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// On a full file system an index never faults: appends that need a new
// page fail with ENOSPC, an untrimmed preallocated index opens (its sparse
// tail is never read through the mapping), truncation and rebuilding over
// existing entries work, and appends go on once space is freed.
func TestIndexOnFullFileSystem(t *testing.T) {
	dir := smallTmpfs(t, "1m")
	path := filepath.Join(dir, "00000000000000000000.index")
	x, err := OpenOffsetIndex(vfs.OS, path, 0, 512<<10) // 512 KiB, sparse
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := x.Append(int64(i), int64(i)*100); err != nil {
			t.Fatal(err)
		}
	}
	fill(t, filepath.Join(dir, "filler"))

	// The first page is allocated: appends inside it still work.
	n := 100
	for ; n < allocChunk/offsetWidth; n++ {
		if err := x.Append(int64(n), int64(n)*100); err != nil {
			t.Fatalf("append %d inside the allocated page: %v", n, err)
		}
	}
	err = x.Append(int64(n), int64(n)*100)
	if !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("append into a new page on a full file system: %v, want ENOSPC", err)
	}
	if x.Len() != n || x.Last().Offset != int64(n-1) {
		t.Fatalf("after the refused append: %d entries, last %v", x.Len(), x.Last())
	}
	x.TruncateTo(300)
	if x.Len() != 300 {
		t.Fatalf("after TruncateTo(300): %d entries", x.Len())
	}

	// A crash leaves the index untrimmed: open it (no trim on close here:
	// the file stays at its capacity, as after a kill; the index holds
	// no descriptor to close).
	if err := x.Unmap(); err != nil {
		t.Fatal(err)
	}
	y, err := OpenOffsetIndex(vfs.OS, path, 0, 512<<10)
	if err != nil {
		t.Fatalf("reopen on a full file system: %v", err)
	}
	defer y.Close()
	if y.Len() != 300 || y.Lookup(250) != (OffsetPosition{250, 25000}) {
		t.Fatalf("reopened: %d entries, Lookup(250) = %v", y.Len(), y.Lookup(250))
	}
	// A rebuild writes the same slots again.
	y.Reset()
	for i := range 300 {
		if err := y.Append(int64(i), int64(i)*100); err != nil {
			t.Fatalf("rebuild entry %d: %v", i, err)
		}
	}
	for i := 300; i < allocChunk/offsetWidth; i++ {
		if err := y.Append(int64(i), int64(i)*100); err != nil {
			t.Fatalf("append %d inside the allocated page after reopen: %v", i, err)
		}
	}
	if err := y.Append(1000, 100000); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("append into a new page after reopen: %v, want ENOSPC", err)
	}

	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
	for i := 1000; i < 3000; i++ {
		if err := y.Append(int64(i), int64(i)*100); err != nil {
			t.Fatalf("append %d after space was freed: %v", i, err)
		}
	}
	if got := y.Lookup(2500); got != (OffsetPosition{2500, 250000}) {
		t.Fatalf("Lookup(2500) = %v", got)
	}
}
