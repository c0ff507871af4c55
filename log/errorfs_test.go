package log

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// errorFS is the operating system's file system with faults a test arms,
// after pebble's vfs/errorfs: OpenFile, Rename and File.Sync fail when
// their hook returns an error, and a file's descriptor can be swapped for
// one that refuses writes (the log appends with pwritev on the descriptor,
// which no wrapper sees). Hooks are read under mu, so a test may arm and
// disarm them while the log runs.
type errorFS struct {
	mu     sync.Mutex
	open   func(name string, flag int) error
	rename func(from, to string) error
	sync   func(name string) error
	opened func(f *errorFile)    // called on each file opened
	files  map[string]*errorFile // the last file opened under each name
}

func newErrorFS() *errorFS { return &errorFS{files: map[string]*errorFile{}} }

// failOpen makes OpenFile of a name with suffix fail with err (nil
// disarms).
func (fs *errorFS) failOpen(suffix string, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.open = nil
	if err != nil {
		fs.open = func(name string, _ int) error {
			if strings.HasSuffix(name, suffix) {
				return err
			}
			return nil
		}
	}
}

// onOpen calls fn with each file opened whose name has suffix (nil fn
// disarms).
func (fs *errorFS) onOpen(suffix string, fn func(f *errorFile)) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.opened = nil
	if fn != nil {
		fs.opened = func(f *errorFile) {
			if strings.HasSuffix(f.Name(), suffix) {
				fn(f)
			}
		}
	}
}

// clear disarms every fault.
func (fs *errorFS) clear() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.open, fs.rename, fs.sync, fs.opened = nil, nil, nil, nil
}

// failRename makes Rename to a name with suffix fail with err (nil
// disarms).
func (fs *errorFS) failRename(suffix string, err error) {
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

// failSync makes Sync of a file whose name has prefix fail with err (nil
// disarms).
func (fs *errorFS) failSync(prefix string, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.sync = nil
	if err != nil {
		fs.sync = func(name string) error {
			if strings.HasPrefix(name, prefix) {
				return err
			}
			return nil
		}
	}
}

func (fs *errorFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	fs.mu.Lock()
	hook := fs.open
	fs.mu.Unlock()
	if hook != nil {
		if err := hook(name, flag); err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	ef := &errorFile{File: f, fs: fs}
	fs.mu.Lock()
	fs.files[name] = ef
	opened := fs.opened
	fs.mu.Unlock()
	if opened != nil {
		opened(ef)
	}
	return ef, nil
}

func (fs *errorFS) Rename(from, to string) error {
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

// file returns the file last opened as name.
func (fs *errorFS) file(t testing.TB, name string) *errorFile {
	t.Helper()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.files[name]
	if f == nil {
		t.Fatalf("errorFS: %s was not opened", name)
	}
	return f
}

type errorFile struct {
	*os.File
	fs *errorFS
}

func (f *errorFile) Sync() error {
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

// breakWrites swaps the file's descriptor, in place (dup3), for one that
// refuses writes: with dev "/dev/full" they fail with ENOSPC (and reads
// see zeros), with dev "" the same file opened read-only answers EBADF
// (and reads keep working), with dev a directory reads and writes fail
// with EISDIR. The returned function puts the file back.
func (f *errorFile) breakWrites(t testing.TB, dev string) (restore func()) {
	t.Helper()
	fd := int(f.Fd())
	saved, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if dev == "" {
		dev = fmt.Sprintf("/proc/self/fd/%d", fd)
	}
	bad, err := os.Open(dev)
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
