// Package errorfs is the operating system's file system with faults a
// test arms, after pebble's vfs/errorfs: opens that fail, writes that fail
// after part of their bytes (a torn write), failed reads, truncations,
// fsyncs, renames and removes, each for the files whose name ends in a
// suffix; and a file's
// descriptor swapped for one that refuses writes (File.BreakWrites), for
// code that writes through the descriptor (the log's pwritev), which no
// wrapper sees. Hooks are read under a lock, so a test may arm them while
// the code under test runs.
package errorfs

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"kzero/vfs"
)

// FS is vfs.OS with armable faults. The zero value injects none.
type FS struct {
	mu     sync.Mutex
	open   func(name string) error
	write  func(name string, p []byte) (int, error)
	sync   func(name string) error
	read   func(name string) error
	trunc  func(name string) error
	remove func(name string) error
	rename func(from, to string) error
	opened func(f *File)    // called with each file opened
	files  map[string]*File // the last file opened under each name
}

// FailOpens fails the opening of files whose name ends in suffix with
// err; a nil err disarms.
func (fs *FS) FailOpens(suffix string, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.open = nil
	if err != nil {
		fs.open = func(name string) error {
			if strings.HasSuffix(name, suffix) {
				return err
			}
			return nil
		}
	}
}

// OnOpen calls fn with each file opened whose name ends in suffix; a nil
// fn disarms.
func (fs *FS) OnOpen(suffix string, fn func(f *File)) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.opened = nil
	if fn != nil {
		fs.opened = func(f *File) {
			if strings.HasSuffix(f.Name(), suffix) {
				fn(f)
			}
		}
	}
}

// Opened returns the file last opened as name.
func (fs *FS) Opened(t testing.TB, name string) *File {
	t.Helper()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.files[name]
	if f == nil {
		t.Fatalf("errorfs: %s was not opened", name)
	}
	return f
}

// OpenedUnder returns the open files last opened under each name in the
// folder dir or its subfolders.
func (fs *FS) OpenedUnder(dir string) []*File {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []*File
	for name, f := range fs.files {
		if strings.HasPrefix(name, strings.TrimSuffix(dir, "/")+"/") && f.Fd() != ^uintptr(0) {
			out = append(out, f)
		}
	}
	return out
}

// FailWrites fails writes to files whose name ends in suffix with err,
// after writing keep bytes of each; a nil err disarms.
func (fs *FS) FailWrites(suffix string, keep int, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.write = nil
	if err != nil {
		fs.write = func(name string, p []byte) (int, error) {
			if !strings.HasSuffix(name, suffix) {
				return len(p), nil
			}
			return min(keep, len(p)), err
		}
	}
}

// FailSyncs fails fsyncs of files whose name ends in suffix with err; a
// nil err disarms.
func (fs *FS) FailSyncs(suffix string, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.sync = nil
	if err != nil {
		fs.sync = func(name string) error {
			if strings.HasSuffix(name, suffix) {
				return err
			}
			return nil
		}
	}
}

// FailReads fails reads (Read, ReadAt) of files whose name ends in
// suffix with err; a nil err disarms.
func (fs *FS) FailReads(suffix string, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.read = suffixHook(suffix, err)
}

// FailTruncates fails File.Truncate of files whose name ends in suffix
// with err; a nil err disarms. With FailWrites it leaves a torn write in
// place, as a crash between the write and the code's cleanup would.
func (fs *FS) FailTruncates(suffix string, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.trunc = suffixHook(suffix, err)
}

// FailRemoves fails removes of names that end in suffix with err; a nil
// err disarms.
func (fs *FS) FailRemoves(suffix string, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.remove = suffixHook(suffix, err)
}

// suffixHook returns a hook failing names that end in suffix with err,
// or nil for a nil err.
func suffixHook(suffix string, err error) func(name string) error {
	if err == nil {
		return nil
	}
	return func(name string) error {
		if strings.HasSuffix(name, suffix) {
			return err
		}
		return nil
	}
}

// hook returns the hook *h under the lock.
func (fs *FS) hook(h *func(name string) error) func(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return *h
}

// FailRenames fails renames to names that end in suffix with err; a nil
// err disarms.
func (fs *FS) FailRenames(suffix string, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.rename = nil
	if err != nil {
		fs.rename = func(_, to string) error {
			if strings.HasSuffix(to, suffix) {
				return err
			}
			return nil
		}
	}
}

// Disarm removes every fault.
func (fs *FS) Disarm() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.open, fs.write, fs.sync, fs.rename, fs.opened = nil, nil, nil, nil, nil
	fs.read, fs.trunc, fs.remove = nil, nil, nil
}

func (fs *FS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	fs.mu.Lock()
	hook := fs.open
	fs.mu.Unlock()
	if hook != nil {
		if err := hook(name); err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	ef := &File{File: f, fs: fs}
	fs.mu.Lock()
	if fs.files == nil {
		fs.files = map[string]*File{}
	}
	fs.files[name] = ef
	opened := fs.opened
	fs.mu.Unlock()
	if opened != nil {
		opened(ef)
	}
	return ef, nil
}

func (fs *FS) Rename(from, to string) error {
	fs.mu.Lock()
	hook := fs.rename
	fs.mu.Unlock()
	if hook != nil {
		if err := hook(from, to); err != nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
	}
	return os.Rename(from, to)
}

func (fs *FS) Remove(name string) error {
	if hook := fs.hook(&fs.remove); hook != nil {
		if err := hook(name); err != nil {
			return &os.PathError{Op: "remove", Path: name, Err: err}
		}
	}
	return os.Remove(name)
}

// File injects its FS's faults into Write, WriteAt, Read, ReadAt,
// Truncate and Sync. Writes
// through the descriptor (Fd) bypass it: see BreakWrites.
type File struct {
	*os.File
	fs *FS
}

func (f *File) writeFault(p []byte) (int, error) {
	f.fs.mu.Lock()
	hook := f.fs.write
	f.fs.mu.Unlock()
	if hook == nil {
		return len(p), nil
	}
	return hook(f.Name(), p)
}

func (f *File) Write(p []byte) (int, error) {
	if keep, err := f.writeFault(p); err != nil {
		n, _ := f.File.Write(p[:keep])
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: err}
	}
	return f.File.Write(p)
}

func (f *File) WriteAt(p []byte, off int64) (int, error) {
	if keep, err := f.writeFault(p); err != nil {
		n, _ := f.File.WriteAt(p[:keep], off)
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: err}
	}
	return f.File.WriteAt(p, off)
}

func (f *File) Read(p []byte) (int, error) {
	if err := f.fault(&f.fs.read, "read"); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fault(&f.fs.read, "read"); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *File) Truncate(size int64) error {
	if err := f.fault(&f.fs.trunc, "truncate"); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

// fault returns the error the hook *h injects into op on the file, if any.
func (f *File) fault(h *func(name string) error, op string) error {
	if hook := f.fs.hook(h); hook != nil {
		if err := hook(f.Name()); err != nil {
			return &os.PathError{Op: op, Path: f.Name(), Err: err}
		}
	}
	return nil
}

func (f *File) Sync() error {
	f.fs.mu.Lock()
	hook := f.fs.sync
	f.fs.mu.Unlock()
	if hook != nil {
		if err := hook(f.Name()); err != nil {
			return &os.PathError{Op: "sync", Path: f.Name(), Err: err}
		}
	}
	return f.File.Sync()
}

// BreakWrites swaps the file's descriptor, in place (dup3), for one that
// refuses writes: with dev "/dev/full" they fail with ENOSPC (and reads
// see zeros), with dev "" the same file opened read-only answers EBADF
// (and reads keep working), with dev a directory reads and writes fail
// with EISDIR. The returned function puts the file back.
func (f *File) BreakWrites(t testing.TB, dev string) (restore func()) {
	t.Helper()
	fd := int(f.Fd())
	saved, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var bad *os.File
	if dev == "" {
		bad, err = os.Open(fmt.Sprintf("/proc/self/fd/%d", fd)) // the file itself, read-only
	} else if bad, err = os.OpenFile(dev, os.O_RDWR, 0); err != nil {
		// Opened for writing where it can be (/dev/full), so that its
		// writes fail as the device fails them, not for the descriptor's
		// mode; a directory opens read-only.
		bad, err = os.Open(dev)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if err := unix.Dup3(int(bad.Fd()), fd, unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	restore = func() {
		once.Do(func() {
			if err := unix.Dup3(saved, fd, unix.O_CLOEXEC); err != nil {
				t.Error(err)
			}
			unix.Close(saved)
		})
	}
	// Not restore: by then the file may be closed and its number reused.
	t.Cleanup(func() { once.Do(func() { unix.Close(saved) }) })
	return restore
}
