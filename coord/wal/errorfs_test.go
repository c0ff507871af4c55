package wal

import (
	"os"
	"strings"
	"sync"
)

// ErrorFS is the operating system's file system with faults a test arms,
// after pebble's vfs/errorfs: a write that fails (after writing part of
// its bytes: a torn write), a failed fsync, a failed rename. Hooks are read
// under mu, so a test may arm them while a raft loop runs.
type errorFS struct {
	mu sync.Mutex
	// write, when set, is asked before each write of a file whose name
	// ends in suffix: it returns how many of the bytes reach the file and
	// the error to fail with (nil: the write goes through whole).
	write  func(name string, p []byte) (int, error)
	sync   func(name string) error
	rename func(from, to string) error
}

// failWrites fails writes to files whose name ends in suffix with err,
// after writing keep bytes of each; nil err disarms.
func (fs *errorFS) failWrites(suffix string, keep int, err error) {
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

func (fs *errorFS) failSyncs(suffix string, err error) {
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

func (fs *errorFS) failRenames(suffix string, err error) {
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

func (fs *errorFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: fs}, nil
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

type errorFile struct {
	*os.File
	fs *errorFS
}

func (f *errorFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	hook := f.fs.write
	f.fs.mu.Unlock()
	if hook != nil {
		if n, err := hook(f.Name(), p); err != nil {
			n, _ = f.File.Write(p[:n])
			return n, &os.PathError{Op: "write", Path: f.Name(), Err: err}
		}
	}
	return f.File.Write(p)
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
