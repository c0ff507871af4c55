// Package index holds a log segment's two sparse indexes, byte-compatible with
// Apache Kafka's files: the offset index (.index), which maps an offset to the
// byte position in the segment file of a record batch at or before it, and
// the time index (.timeindex), which maps a timestamp to the offset from which
// records with a larger timestamp begin.
//
// # Formats
//
// A file is a plain array of fixed-width big-endian entries, no header, no
// checksum (a damaged index is rebuilt from its segment). Offsets are stored
// relative to the segment's base offset, the number in the file name.
//
//	.index, 8 bytes an entry:
//
//	 0               4               8
//	+---------------+---------------+
//	| relative off. | file position |   relative offset = offset - baseOffset
//	|  uint32 BE    |  uint32 BE    |
//	+---------------+---------------+
//
//	.timeindex, 12 bytes an entry:
//
//	 0                               8               12
//	+-------------------------------+---------------+
//	|          timestamp            | relative off. |
//	|           int64 BE            |  uint32 BE    |
//	+-------------------------------+---------------+
//
// Offset index entries have strictly increasing relative offsets and
// positions; time index entries have strictly increasing timestamps (never
// negative) and non-decreasing offsets. Relative offsets and positions are
// written as 4 unsigned bytes, but Kafka reads them as a signed int, so
// appends refuse values at or above 2^31 (ErrOverflow) and open treats them
// as corruption.
//
// # Files
//
// Open creates a missing file and extends it to maxBytes (rounded down to
// the entry width) when smaller: an active index is preallocated and its
// tail is zeros. A sealed segment's index is trimmed to its entries (Trim,
// Close), as Kafka leaves it. On open, trailing all-zero entries after the
// first are free space, not entries, so an untrimmed index left by a crash
// opens with its real entries. A size that is not a multiple of the entry
// width, or entries out of order, fail with an error wrapping ErrCorrupt.
// Pass maxBytes 0 to open a sealed index at its own size.
//
// The preallocated tail is sparse, and a store into a hole of a shared
// mapping allocates a block inside the page fault: on a full file system
// that is a SIGBUS (on tmpfs even a load from a hole is). So the writer
// allocates each page for real (fallocate) before its first entry goes
// there, and an append that finds no space fails with an error wrapping
// ENOSPC; open counts entries only up to the first hole (SEEK_HOLE) and
// never reads the sparse tail. A page at a time, not the whole capacity:
// segment.index.bytes of real disk per index would cost 20 MiB a
// partition.
//
// An open index holds no file descriptor: the file is closed as soon as it
// is mapped (a mapping outlives its descriptor). Extending and trimming
// open the file for the call and truncate it, and so does the fallocate of
// a new page (once per page of entries); Sync is msync, which on Linux
// writes the mapped range's data and the blocks it needs, plus an fsync
// through a descriptor opened for it when the file's length changed since
// the last Sync. So 10,000 partitions cost no index descriptors.
//
// Every open, resize, fsync and rename goes through the vfs.FS the index
// was opened in (the log's), so tests inject their faults (vfs/errorfs).
// What no FS sees: the entries, stored through the shared mapping and
// written back by msync, and the fallocate, on the descriptor.
//
// TimeIndex.Full reports full with one slot still free, as Kafka's time index
// does: the log rolls the segment when either index is full, and the entry
// for the segment's largest timestamp, written at the roll, must still fit.
//
// # Ownership and concurrency
//
// One writer goroutine calls the methods that change an index: Append,
// MaybeAppend, TruncateTo, Reset, Trim, Sync, Rename, Close. Any number of
// readers call Lookup, Entry, Len, Last, Full, BaseOffset and Path at the
// same time, with no lock. The entry count is an atomic: the writer stores
// an entry's bytes, then publishes the larger count, so a reader that loads
// the count sees whole entries below it. Lookup and Append allocate nothing.
//
// The whole capacity is mapped once (mmap, MAP_SHARED) when the index opens
// and is never remapped while it is open, because a lock-free reader may hold
// a pointer into the mapping at any time. Trim only shortens the file; the
// mapping stays, and readers read only entries, which lie inside the file.
// The next append extends the file to its capacity again. Close unmaps: the
// caller guarantees that no reader remains.
//
// Truncation is the one place a reader can see a change under it: a reader
// that loaded the count before TruncateTo may read entries being dropped or
// overwritten. Reads stay inside the mapping and return wrong but harmless
// values; the log lowers its end offset before truncating the index and so
// never uses them. Do not Trim right after TruncateTo while such readers may
// remain: they would read past the end of the file (SIGBUS).
//
// Lookup is a binary search over the mapped entries that first tries the
// last 8 KiB of entries, where nearly every fetch lands, so hot lookups touch
// the same few pages.
package index
