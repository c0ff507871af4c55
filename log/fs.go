package log

import "os"

// FS is the file system a log opens its segment files in: the seam through
// which tests simulate a power loss (dropping what was not fsynced) or
// inject faults, after pebble's vfs. The default is the operating system.
//
// Only segment (.log) files go through it so far: created, opened at
// start, and reopened by the FileCache when a sealed segment's file was
// closed while idle; Segment.Sync and truncations go through the File. The
// append and read paths keep using the file's descriptor (pwritev, pread,
// sendfile), so the seam costs the hot path nothing. Indexes (mmap'd), txn
// indexes, checkpoints, snapshots, directory syncs and the cleaner's
// .cleaned files use the os package directly.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
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

// fs returns the file system segments live in.
func (c *Config) fs() FS {
	if c.FS != nil {
		return c.FS
	}
	return osFS{}
}
