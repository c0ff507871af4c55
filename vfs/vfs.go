// Package vfs is the file system seam of kzero's storage, after pebble's
// vfs: the log's segment files (log/fs.go says which calls go through it)
// and the metadata log's WAL and snapshots (coord/wal) are opened and
// renamed through an FS, so that tests can simulate a power loss or inject
// failed writes, fsyncs and renames (vfs/errorfs). Production code uses
// OS, the operating system's file system; the seam costs the hot paths
// nothing because appends and reads go through the file's descriptor.
package vfs

import (
	"io"
	"os"
)

// FS opens and renames files, as the os package does.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Rename(oldpath, newpath string) error
}

// File is an open file. *os.File implements it. What is written through
// Fd (pwritev) is the file's contents as much as what Write and WriteAt
// write; an FS that tracks durability does so at Sync.
type File interface {
	io.Reader
	io.Writer
	io.WriterAt
	io.Seeker
	Name() string
	Fd() uintptr
	Stat() (os.FileInfo, error)
	Truncate(size int64) error
	Sync() error
	Close() error
}

// OS is the operating system's file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // not a File holding a nil *os.File
	}
	return f, nil
}

func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
