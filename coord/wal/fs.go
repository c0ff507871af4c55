package wal

import "kzero/vfs"

// FS is the file system the storage writes its files in (the WAL, the
// snapshot files and their temporary files): the seam through which tests
// inject failed writes, fsyncs and renames (vfs/errorfs). OpenFS takes
// one; Open uses vfs.OS. Reads of a snapshot, the folder listing and its
// fsync use the os package directly.
type FS = vfs.FS

// File is an open file of the storage.
type File = vfs.File
