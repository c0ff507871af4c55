package wal

import (
	"io"
	"os"
)

// FS is the file system the storage writes its files in (the WAL, the
// snapshot files and their temporary files): the seam through which tests
// inject failed writes, fsyncs and renames, after pebble's vfs. OpenFS
// takes one; Open uses the operating system's. Reads of a snapshot, the
// folder listing and its fsync use the os package directly.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Rename(oldpath, newpath string) error
}

// File is an open file of the storage. *os.File implements it.
type File interface {
	io.Reader
	io.Writer
	io.Seeker
	Stat() (os.FileInfo, error)
	Truncate(size int64) error
	Sync() error
	Close() error
}

// osFS is the operating system's file system.
type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // not a File holding a nil *os.File
	}
	return f, nil
}

func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
