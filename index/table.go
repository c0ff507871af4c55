package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"kzero/vfs"
)

// warmBytes is the size of the tail of the entries searched first. Fetches,
// follower reads and appends all look near the end of the active segment, so
// a lookup that first tries the last warmBytes of entries touches the same
// two or three pages every time, and those stay in the CPU caches, the TLB
// and the page cache.
// A plain binary search over the whole file would touch a page near the
// middle, a quarter, ... on every lookup, and those pages may have been
// evicted. Kafka's AbstractIndex keeps an 8 KiB warm section too.
const warmBytes = 8192

// maxField is the largest relative offset or file position an entry may hold.
// The format writes them as 4 unsigned bytes, but Kafka reads them as a
// signed int, so values at or above 2^31 would be misread by Kafka.
const maxField = math.MaxInt32

// table is a file of fixed-width entries mapped into memory. It holds what
// OffsetIndex and TimeIndex share: opening and checking the file, the entry
// count, the warm-section search, truncation, trimming and closing.
//
// Ownership: one writer goroutine calls the methods that change the table
// (append, truncate, reset, trim, sync, rename, close); any number of readers
// call len and read entries below it with no lock. The writer stores an
// entry's bytes before it publishes the larger count, so a reader that loaded
// the count sees complete entries below it.
//
// The table holds no file descriptor: the mapping outlives the descriptor it
// was made from, which is closed as soon as the file is mapped. Changing the
// file's length (extend, trim) goes by path (truncate(2)), and the one fsync
// a length change needs opens the file for that call. A broker with 10,000
// partitions would otherwise spend 20,000 descriptors on indexes.
type table struct {
	data  []byte // the mapping: slots*width bytes, never remapped while open
	width int    // bytes per entry
	slots int    // capacity in entries
	warm  int    // entries in the warm section
	base  int64  // the segment's base offset

	n    atomic.Int64           // published entry count
	path atomic.Pointer[string] // renamed by the writer, read by anyone

	// renaming is held by rename across the rename(2) and the path store,
	// and by sync across its open: a sync on another goroutine (a sealed
	// segment's background flush) racing the cleaner's or retention's
	// rename to .deleted would otherwise open the old name after the file
	// left it, and take the log offline for an fsync that never failed.
	renaming sync.Mutex

	// The file length changes (sizeGen counts them, the writer's) and the
	// fsyncs that made them durable (syncedGen: the sizeGen an fsync began
	// at). sync may run on a goroutine besides the writer (a sealed
	// segment's background flush and a log flush).
	sizeGen, syncedGen atomic.Int64

	// Writer only.
	size   int64 // current file length: slots*width, or less after trim
	alloc  int64 // the first alloc bytes of the file have disk blocks (reserve)
	closed bool

	fs vfs.FS // the file's opens, resizes, fsyncs and renames go through it
}

// allocChunk is how much index space reserve allocates at a time: a page,
// so an entry store never straddles into a page without blocks. A whole
// preallocated index allocated for real would cost segment.index.bytes
// twice per partition (20 MiB by default); a page at a time costs one
// fallocate per 512 offset index entries (about 2 MiB of log).
const allocChunk = 4096

// checkFunc validates the first n entries of a freshly opened table.
type checkFunc func(t *table, n int) error

func openTable(fs vfs.FS, path string, base int64, maxBytes, width int, check checkFunc) (*table, error) {
	if base < 0 || base > math.MaxInt64-maxField {
		return nil, fmt.Errorf("index: open %s: base offset %d out of range", path, base)
	}
	f, err := fs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("index: open: %w", err)
	}
	t, err := mapTable(fs, f, path, base, maxBytes, width, check)
	if cerr := f.Close(); err == nil && cerr != nil {
		t.unmap()
		err = fmt.Errorf("index: close %s: %w", path, cerr)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

func mapTable(fs vfs.FS, f vfs.File, path string, base int64, maxBytes, width int, check checkFunc) (*table, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("index: stat %s: %w", path, err)
	}
	size := fi.Size()
	if size%int64(width) != 0 {
		return nil, fmt.Errorf("%w: %s: size %d is not a multiple of %d", ErrCorrupt, path, size, width)
	}
	capacity := int64(max(maxBytes, 0) / width * width)
	capacity = max(capacity, size)
	if capacity > math.MaxInt {
		return nil, fmt.Errorf("index: %s: capacity %d too large", path, capacity)
	}
	t := &table{
		width: width,
		slots: int(capacity) / width,
		warm:  warmBytes / width,
		base:  base,
		size:  size,
		fs:    fs,
	}
	// The first sync after open fsyncs once: the file may just have been
	// created or extended.
	t.sizeGen.Store(1)
	t.path.Store(&path)
	if capacity > 0 {
		// Map the whole capacity now, even past the end of the file: the
		// mapping must never move, because readers hold no lock. Only bytes
		// inside the file are read until the file is extended below.
		t.data, err = unix.Mmap(int(f.Fd()), 0, int(capacity), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			return nil, fmt.Errorf("index: mmap %s: %w", path, err)
		}
		// No readahead: a fault on the sparse preallocated tail would
		// otherwise read ahead (zero-fill) megabytes of holes per page
		// written; with 1000 partitions that was most of the broker's CPU.
		// Lookups touch a few pages (binary search, warm tail) anyway.
		if err := unix.Madvise(t.data, unix.MADV_RANDOM); err != nil {
			unix.Munmap(t.data)
			return nil, fmt.Errorf("index: madvise %s: %w", path, err)
		}
	}
	n := t.countEntries(int(t.dataEnd(f)) / width)
	if err := check(t, n); err != nil {
		unix.Munmap(t.data)
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	}
	if err := t.extend(); err != nil {
		unix.Munmap(t.data)
		return nil, err
	}
	t.n.Store(int64(n))
	return t, nil
}

// dataEnd returns where the file's first hole starts (SEEK_HOLE), or its
// size when it has none or the file system cannot tell. Entries lie before
// it: every slot the writer stored into had its blocks allocated first.
// countEntries must not read the hole through the mapping: on tmpfs even a
// read fault of a hole allocates a page, and on a full file system that
// is a SIGBUS. f is the file being mapped.
func (t *table) dataEnd(f vfs.File) int64 {
	off, err := unix.Seek(int(f.Fd()), 0, unix.SEEK_HOLE)
	if err != nil || off > t.size {
		return t.size
	}
	return off - off%int64(t.width)
}

// countEntries returns how many of the first n slots are entries: a trailing
// run of all-zero slots after slot 0 is preallocated free space, left in the
// file of an active index that was never trimmed (a crash). Slot 0 always
// counts: an all-zero first entry is a valid entry in both formats. No valid
// entry after the first can be all zero, because both formats require the
// key to increase from a first key that is at least zero.
func (t *table) countEntries(n int) int {
	b := t.data[:n*t.width]
	// A never-used 10 MiB index is all zeros: skip them a page at a time.
	for len(b) >= len(zeroPage) && bytes.Equal(b[len(b)-len(zeroPage):], zeroPage[:]) {
		b = b[:len(b)-len(zeroPage)]
	}
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	used := (len(b) + t.width - 1) / t.width
	return max(used, min(n, 1))
}

var zeroPage [4096]byte

// slot returns the bytes of slot i.
func (t *table) slot(i int) []byte {
	off := i * t.width
	return t.data[off : off+t.width : off+t.width]
}

// len returns the published entry count. Readers call it once per operation
// and read only entries below it.
func (t *table) len() int { return int(t.n.Load()) }

// key returns the sort key of entry i: the relative offset of an offset
// index entry, the timestamp of a time index entry. Both are monotonic
// increasing in the entry number.
func (t *table) key(i int) int64 {
	b := t.data[i*t.width:]
	if t.width == timeWidth {
		return int64(binary.BigEndian.Uint64(b))
	}
	return int64(binary.BigEndian.Uint32(b))
}

// floor returns the last of the first n entries whose key is at most target,
// or -1 when there is none. It searches the warm section (the last t.warm
// entries) first and falls back to the cold part only when the target lies
// below the warm section. It stays inside the first n entries whatever their
// contents, so a torn read during a truncation gives a wrong answer, never a
// fault.
func (t *table) floor(n int, target int64) int {
	if n <= 0 {
		return -1
	}
	warm := max(n-t.warm, 0)
	if t.key(warm) <= target {
		return t.floorIn(warm, n-1, target)
	}
	if warm == 0 || t.key(0) > target {
		return -1
	}
	return t.floorIn(0, warm-1, target)
}

// floorIn returns the largest i in [lo, hi] with key(i) <= target, given that
// key(lo) <= target. Each step halves the candidate range [lo, lo+n) and
// moves only lo. The loop is written once per entry width so the key read in
// it is a plain load. (A branch-free step measured much slower on random
// targets: it stops the CPU from speculatively loading the next probe.)
func (t *table) floorIn(lo, hi int, target int64) int {
	n := hi - lo + 1
	if t.width == timeWidth {
		return floorIn64(t.data, lo, n, target)
	}
	return floorIn32(t.data, lo, n, target)
}

// floorIn32 searches 8-byte entries keyed by the uint32 at their start.
func floorIn32(data []byte, lo, n int, target int64) int {
	for n > 1 {
		half := n >> 1
		mid := lo + half
		if int64(binary.BigEndian.Uint32(data[mid*offsetWidth:])) <= target {
			lo = mid
		}
		n -= half
	}
	return lo
}

// floorIn64 searches 12-byte entries keyed by the int64 at their start.
func floorIn64(data []byte, lo, n int, target int64) int {
	for n > 1 {
		half := n >> 1
		mid := lo + half
		if int64(binary.BigEndian.Uint64(data[mid*timeWidth:])) <= target {
			lo = mid
		}
		n -= half
	}
	return lo
}

// prepareAppend makes sure the next slot is inside the file and returns its
// bytes. n is the current entry count.
func (t *table) prepareAppend(n int) ([]byte, error) {
	if t.closed {
		return nil, errClosed
	}
	if n >= t.slots {
		return nil, fmt.Errorf("%w: %s holds %d entries", ErrFull, t.filePath(), n)
	}
	end := int64(n+1) * int64(t.width)
	if end > t.size {
		if err := t.extend(); err != nil {
			return nil, err
		}
	}
	if err := t.reserve(end); err != nil {
		return nil, err
	}
	return t.slot(n), nil
}

// reserve makes sure the first end bytes of the file have disk blocks
// before the writer stores into them through the mapping. A store into a
// hole of a shared mapping makes the kernel allocate a block in the page
// fault, and on a full file system that fault is a SIGBUS, which no error
// handling can catch; fallocate asks for the blocks first and fails with
// ENOSPC instead. On a file system without fallocate (EOPNOTSUPP) the
// free slots are written with zeros through the file, which allocates
// them just as well. end must lie inside the file.
//
// The table keeps no descriptor, so reserve opens the file by path for the
// call: one open per page of entries (512 offset index entries).
func (t *table) reserve(end int64) error {
	if end <= t.alloc {
		return nil
	}
	to := min((end+allocChunk-1)/allocChunk*allocChunk, t.size)
	f, err := t.fs.OpenFile(t.filePath(), os.O_WRONLY, 0)
	if err == nil {
		err = unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, t.alloc, to-t.alloc)
		if errors.Is(err, unix.EOPNOTSUPP) {
			err = t.zeroFree(f, to)
		}
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("index: allocate %s up to %d bytes: %w", t.filePath(), to, err)
	}
	t.alloc = to
	return nil
}

// zeroFree writes zeros through f over the free slots below to, which
// hold zeros already (never below the published entries, which readers may
// be reading).
func (t *table) zeroFree(f vfs.File, to int64) error {
	from := max(t.alloc, int64(t.len())*int64(t.width))
	for from < to {
		n, err := f.WriteAt(zeroPage[:min(int64(len(zeroPage)), to-from)], from)
		if err != nil {
			return err
		}
		from += int64(n)
	}
	return nil
}

// publish makes n entries visible to readers. The entry bytes must be written
// before.
func (t *table) publish(n int) { t.n.Store(int64(n)) }

// extend sets the file length back to the whole capacity (after a trim, or on
// open). The mapping already covers it.
func (t *table) extend() error {
	want := int64(t.slots) * int64(t.width)
	if t.size >= want {
		return nil
	}
	if err := vfs.Truncate(t.fs, t.filePath(), want); err != nil {
		return fmt.Errorf("index: extend %s to %d bytes: %w", t.filePath(), want, err)
	}
	t.size = want
	t.sizeGen.Add(1)
	return nil
}

// truncate drops the entries from n on: it publishes the smaller count first,
// so new readers stop at it, then zeroes the dropped slots, so a crash before
// the next trim cannot bring them back on open. Slots hold data, so their
// blocks exist; when reserve still cannot vouch for them (a full file system
// with blocks smaller than a page, where a store into one block of a page
// needs the page's other blocks too), the zeroing is skipped: a crash then
// leaves stale entries past the count, which the log's recovery of the
// active segment rebuilds over, and trim cuts them off at the next seal.
func (t *table) truncate(n int) {
	old := t.len()
	if n >= old || n < 0 {
		return
	}
	t.publish(n)
	if t.reserve(int64(old)*int64(t.width)) == nil {
		clear(t.data[n*t.width : old*t.width])
	}
}

// trim shrinks the file to its entries. The mapping stays: readers read only
// entries, which stay inside the file.
func (t *table) trim() error {
	if t.closed {
		return errClosed
	}
	want := int64(t.len()) * int64(t.width)
	if t.size == want {
		return nil
	}
	if err := vfs.Truncate(t.fs, t.filePath(), want); err != nil {
		return fmt.Errorf("index: trim %s to %d bytes: %w", t.filePath(), want, err)
	}
	t.size = want
	t.alloc = min(t.alloc, want/allocChunk*allocChunk)
	t.sizeGen.Add(1)
	return nil
}

// sync writes the entries to disk: msync for the mapped pages (on Linux an
// fdatasync of their range, block allocation included), then, when the file
// length changed since the last sync, an fsync for the length, through a
// descriptor opened for it.
func (t *table) sync() error {
	if t.closed {
		return errClosed
	}
	if n := t.len() * t.width; n > 0 {
		if err := unix.Msync(t.data[:n], unix.MS_SYNC); err != nil {
			return fmt.Errorf("index: msync %s: %w", t.filePath(), err)
		}
	}
	gen := t.sizeGen.Load()
	if t.syncedGen.Load() >= gen {
		return nil
	}
	t.renaming.Lock()
	path := t.filePath()
	f, err := t.fs.OpenFile(path, os.O_RDONLY, 0)
	t.renaming.Unlock()
	if err != nil {
		return fmt.Errorf("index: open %s to fsync: %w", path, err)
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return fmt.Errorf("index: fsync %s: %w", t.filePath(), err)
	}
	for {
		done := t.syncedGen.Load()
		if done >= gen || t.syncedGen.CompareAndSwap(done, gen) {
			return nil
		}
	}
}

func (t *table) rename(newPath string) error {
	if t.closed {
		return errClosed
	}
	t.renaming.Lock()
	defer t.renaming.Unlock()
	if err := t.fs.Rename(t.filePath(), newPath); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	t.path.Store(&newPath)
	return nil
}

// filePath returns the file's current path.
func (t *table) filePath() string { return *t.path.Load() }

// close trims the file and unmaps it. A second close does nothing.
func (t *table) close() error {
	if t.closed {
		return nil
	}
	errTrim := t.trim()
	t.closed = true
	t.n.Store(0)
	return errors.Join(errTrim, t.unmap())
}

// release closes the table without touching its file: it unmaps, and
// trims nothing. A second release or close does nothing.
func (t *table) release() error {
	if t.closed {
		return nil
	}
	t.closed = true
	t.n.Store(0)
	return t.unmap()
}

// unmap drops the mapping.
func (t *table) unmap() error {
	if t.data == nil {
		return nil
	}
	err := unix.Munmap(t.data)
	t.data = nil
	if err != nil {
		return fmt.Errorf("index: munmap %s: %w", t.filePath(), err)
	}
	return nil
}

var errClosed = errors.New("index: closed")
