package log

import "kzero/vfs"

// FS is the file system a log writes its files in (vfs.FS): the seam
// through which tests simulate a power loss (dropping what was not
// fsynced) or inject faults. The default is vfs.OS.
//
// Every file a log or its Manager writes is opened, created, truncated,
// renamed, removed and fsynced through it, and so are the folders' fsyncs:
// segment (.log) files (created by an append's roll, a truncation, the
// cleaner's .cleaned file, opened at start, reopened by the FileCache), the
// offset and time indexes (package index: opened, extended, trimmed,
// fsynced, renamed; their entries are written through the mapping and
// msync'd, and their pages allocated with fallocate on the descriptor),
// txn indexes, producer state snapshots, the leader-epoch checkpoint,
// partition.metadata, the Manager's offset checkpoints, meta.properties and
// clean-shutdown marker, and the cleaner's swap. The append and read paths
// keep using the segment file's descriptor (pwritev, pread, sendfile), so
// the seam costs the hot path nothing: a test that wants an append's write
// to fail hands out a File whose descriptor refuses writes (one opened
// read-only, or /dev/full, which answers ENOSPC).
//
// What stays on the os package: folder work (MkdirAll, ReadDir, RemoveAll,
// a partition folder's renames when it is deleted or a future log
// replaces it), os.Stat of a file's existence or size, the Manager's
// .lock file (flock), and the reads of files other packages read too
// (ReadTopicID, ReadMetaProperties).
type FS = vfs.FS

// File is an open segment file (vfs.File). Writes through Fd (pwritev, and
// reads with pread and sendfile) are the file's contents as much as
// WriteAt; an FS that tracks durability does so at Sync.
type File = vfs.File

// fs returns the file system the log's files live in.
func (c *Config) fs() FS {
	if c.FS != nil {
		return c.FS
	}
	return vfs.OS
}

// fs returns the file system the log's files live in.
func (l *Log) fs() FS { return l.cfg.Load().fs() }

// fs returns the file system of the Manager's logs (its Defaults' FS).
func (m *Manager) fs() FS { return m.cfg.Defaults.fs() }
