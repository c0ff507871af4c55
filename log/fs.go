package log

import "kzero/vfs"

// FS is the file system a log opens its segment files in (vfs.FS): the
// seam through which tests simulate a power loss (dropping what was not
// fsynced) or inject faults. The default is vfs.OS.
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
type FS = vfs.FS

// File is an open segment file (vfs.File). Writes through Fd (pwritev, and
// reads with pread and sendfile) are the file's contents as much as
// WriteAt; an FS that tracks durability does so at Sync.
type File = vfs.File

// fs returns the file system segments live in.
func (c *Config) fs() FS {
	if c.FS != nil {
		return c.FS
	}
	return vfs.OS
}
