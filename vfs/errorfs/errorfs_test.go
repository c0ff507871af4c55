package errorfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// An armed write keeps its first bytes and fails (a torn write), for the
// files of its suffix only; armed fsyncs and renames fail; Disarm ends
// every fault.
func TestFaults(t *testing.T) {
	dir := t.TempDir()
	fs := &FS{}
	open := func(name string) (string, *os.File) {
		t.Helper()
		path := filepath.Join(dir, name)
		f, err := fs.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return path, f.(*File).File
	}
	walPath, _ := open("raft.wal")
	f, _ := fs.OpenFile(walPath, os.O_RDWR, 0)
	defer f.Close()
	otherPath, _ := open("other")
	g, _ := fs.OpenFile(otherPath, os.O_RDWR, 0)
	defer g.Close()

	fs.FailWrites(".wal", 3, unix.EIO)
	fs.FailSyncs(".wal", unix.EIO)
	fs.FailRenames(".wal", unix.EIO)
	if n, err := f.Write([]byte("abcdef")); n != 3 || !errors.Is(err, unix.EIO) {
		t.Fatalf("armed write: %d %v, want 3 bytes and EIO", n, err)
	}
	if b, _ := os.ReadFile(walPath); string(b) != "abc" {
		t.Fatalf("torn write left %q, want abc", b)
	}
	if err := f.Sync(); !errors.Is(err, unix.EIO) {
		t.Fatalf("armed sync: %v", err)
	}
	if err := fs.Rename(otherPath, otherPath+".wal"); !errors.Is(err, unix.EIO) {
		t.Fatalf("armed rename: %v", err)
	}
	if n, err := g.Write([]byte("abcdef")); n != 6 || err != nil || g.Sync() != nil {
		t.Fatalf("a file of another suffix: %d %v", n, err)
	}

	fs.Disarm()
	if _, err := f.WriteAt([]byte("xyz"), 3); err != nil || f.Sync() != nil {
		t.Fatalf("disarmed write: %v", err)
	}
	if b, _ := os.ReadFile(walPath); string(b) != "abcxyz" {
		t.Fatalf("file holds %q, want abcxyz", b)
	}
	if err := fs.Rename(otherPath, otherPath+".wal"); err != nil {
		t.Fatal(err)
	}
}

// BreakWrites with /dev/full makes the descriptor's writes fail with
// ENOSPC (a full disk), with "" with EBADF (the file read-only, reads
// still working); restore puts the file back.
func TestBreakWrites(t *testing.T) {
	fs := &FS{}
	path := filepath.Join(t.TempDir(), "seg")
	f, err := fs.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ef := fs.Opened(t, path)
	for _, tc := range []struct {
		dev  string
		want error
	}{{"/dev/full", unix.ENOSPC}, {"", unix.EBADF}} {
		restore := ef.BreakWrites(t, tc.dev)
		if _, err := unix.Pwrite(int(f.Fd()), []byte("x"), 0); !errors.Is(err, tc.want) {
			t.Errorf("dev %q: pwrite %v, want %v", tc.dev, err, tc.want)
		}
		restore()
		if _, err := unix.Pwrite(int(f.Fd()), []byte("x"), 0); err != nil {
			t.Fatalf("after restore: %v", err)
		}
	}
}
