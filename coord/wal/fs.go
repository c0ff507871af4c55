package wal

import "kzero/vfs"

// FS is the file system the storage keeps its files in (the WAL, the
// snapshot files and their temporary files): the seam through which tests
// inject failed writes, reads, fsyncs, renames and removes (vfs/errorfs).
// OpenFS takes one; Open uses vfs.OS. Every open, write, read, rename,
// remove and fsync of those files, and the folder's fsyncs, go through it;
// the folder's creation (MkdirAll), its listing (ReadDir) and os.Stat of
// whether it or the WAL exists (Exists) use the os package.
type FS = vfs.FS

// File is an open file of the storage.
type File = vfs.File
