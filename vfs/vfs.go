// Package vfs is the file system seam of kzero's storage, after pebble's
// vfs: the files of the log (log/fs.go says which calls go through it),
// its indexes (package index) and the metadata log's WAL and snapshots
// (coord/wal) are opened, renamed, removed and fsynced through an FS, so
// that tests can simulate a power loss or inject failed writes, reads,
// fsyncs, renames and removes (vfs/errorfs). Production code uses
// OS, the operating system's file system; the seam costs the hot paths
// nothing because appends and reads go through the file's descriptor.
package vfs

import (
	"io"
	"os"
)

// FS opens, renames and removes files, as the os package does. A folder
// opens read-only through OpenFile too, for its fsync (SyncDir).
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
}

// File is an open file. *os.File implements it. What is written through
// Fd (pwritev) is the file's contents as much as what Write and WriteAt
// write; an FS that tracks durability does so at Sync.
type File interface {
	io.Reader
	io.ReaderAt
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

func (osFS) Remove(name string) error { return os.Remove(name) }

// ReadFile reads the whole file name in fs, as os.ReadFile does.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// WriteFile replaces the contents of the file name in fs with data, as
// os.WriteFile does, and fsyncs it first when sync is set.
func WriteFile(fs FS, name string, data []byte, sync bool) error {
	f, err := fs.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// Fsync fsyncs the file or folder name, opened read-only in fs: a folder's
// fsync makes the names created, renamed or removed in it durable.
func Fsync(fs FS, name string) error {
	d, err := fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Truncate sets the length of the file name in fs, as os.Truncate does.
func Truncate(fs FS, name string, size int64) error {
	f, err := fs.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
