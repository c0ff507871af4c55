package log

import "os"

// FS is the file system a log opens its segment files in: the seam through
// which tests simulate a power loss (dropping what was not fsynced) or
// inject faults, after pebble's vfs and errorfs. The default is the
// operating system.
//
// Segment (.log) files go through it: created (by an append's roll, a
// truncation, the cleaner's .cleaned file), opened at start, and reopened
// by the FileCache when a sealed segment's file was closed while idle; so
// do the renames of segments (to .deleted, and the cleaner's swap, swap.go)
// and Segment.Sync and truncations, through the File. The append and read
// paths keep using the file's descriptor (pwritev, pread, sendfile), so the
// seam costs the hot path nothing: a test that wants an append's write to
// fail hands out a File whose descriptor refuses writes (one opened
// read-only, or /dev/full, which answers ENOSPC). Indexes (mmap'd), txn
// indexes, checkpoints, snapshots and directory syncs use the os package
// directly.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// Rename renames a segment file, as os.Rename.
	Rename(oldpath, newpath string) error
}

// File is an open segment file. *os.File implements it. Writes through Fd
// (pwritev, and reads with pread and sendfile) are the file's contents as
// much as WriteAt; an FS that tracks durability does so at Sync.
type File interface {
	Name() string
	Fd() uintptr
	Stat() (os.FileInfo, error)
	WriteAt(p []byte, off int64) (int, error)
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

// fs returns the file system segments live in.
func (c *Config) fs() FS {
	if c.FS != nil {
		return c.FS
	}
	return osFS{}
}
