package log

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"

	"kzero/index"
	"kzero/record"
)

// File name suffixes of a segment, as Apache Kafka names them.
const (
	LogSuffix       = ".log"
	IndexSuffix     = ".index"
	TimeIndexSuffix = ".timeindex"
	TxnIndexSuffix  = ".txnindex"
	DeletedSuffix   = ".deleted" // renamed on deletion, removed after file.delete.delay.ms
	CleanedSuffix   = ".cleaned" // being written by the cleaner
	SwapSuffix      = ".swap"    // written by the cleaner, replacing older segments
)

// FileName is the 20-digit zero-padded base offset Kafka names segment files by.
func FileName(baseOffset int64, suffix string) string {
	return fmt.Sprintf("%020d%s", baseOffset, suffix)
}

// ParseFileName returns the base offset of a segment file name such as
// 00000000000000001234.log, and the suffix after the digits.
func ParseFileName(name string) (base int64, suffix string, ok bool) {
	if len(name) < 21 {
		return 0, "", false
	}
	n, err := strconv.ParseInt(name[:20], 10, 64)
	if err != nil || n < 0 || name[20] != '.' {
		return 0, "", false
	}
	return n, name[20:], true
}

// Segment is one file of a partition's log with its indexes.
//
// Ownership: the log's writer (which holds Log.mu) appends, truncates, rolls
// and deletes. Readers call the read methods with no lock, after acquire; a
// reader sees bytes below size, which is published after they are written.
// A segment's files stay open until the log's own reference and every
// reader's reference are released, so a segment removed by retention stays
// readable by a fetch already in flight.
//
// The log file's descriptor: the active segment's stays open (pinned) for
// the writer; a sealed segment's is opened by the first acquire that finds
// it closed and may be closed by the FileCache while no reader holds the
// segment. state packs the reference count with an fdOpen bit, so an
// acquire that finds the file open takes its reference with one CAS, and
// the cache closes a file only by a CAS from "open, the log's reference
// only".
type Segment struct {
	base    int64
	dir     string
	path    string                            // the log file's path (its name before markDeleted)
	fs      FS                                // the file system the log file is (re)opened in
	f       File                              // the log file; valid while state has fdOpen
	fd      int                               // f's descriptor, for pwritev, pread and sendfile
	files   *FileCache                        // nil: the file is never closed before the segment
	idx     atomic.Pointer[index.OffsetIndex] // replaced whole by repairIndex
	retired []*index.OffsetIndex              // replaced, unmapped at close; writer only
	tindex  *index.TimeIndex
	txn     atomic.Pointer[TxnIndex] // opened on first use
	created time.Time

	size atomic.Int64 // bytes of whole batches in the file
	next atomic.Int64 // offset after the last batch; base when empty

	// maxTs is the largest batch max timestamp (-1 before any batch);
	// maxTsOffset the last offset of the batch that has it.
	maxTs       atomic.Int64
	maxTsOffset atomic.Int64
	// firstBatchTs is the first batch's max timestamp, which segment.ms
	// rolls by (Kafka's rollingBasedTimestamp); -1 when empty.
	firstBatchTs atomic.Int64

	// lastBatches locates the last batches appended (recent.go), so
	// that a read near the log end needs no header read.
	lastBatches recentBatches

	bytesSinceIndex int  // writer only
	needsRecovery   bool // an index failed its checks on open

	// indexOK is cleared by the read that finds the offset index damaged
	// (the one that wins the CAS reports it) and set again by its rebuild.
	indexOK atomic.Bool

	state   atomic.Int64 // references (the log's plus in-flight reads) | fdOpen
	recent  atomic.Bool  // read since the cache's last sweep passed it
	openMu  sync.Mutex   // serializes reopening the log file
	pinned  bool         // under files.mu: the file must stay open
	slot    int          // under files.mu: index in the cache's ring, -1 when out
	deleted atomic.Bool  // remove the files when refs reach zero
	// orphaned: the log's folder was deleted or moved away (Log.orphan).
	// Nothing is done by path any more (no reopen, no index trim, no
	// removal): the path may name another log's file by then, a topic
	// re-created in the same dir; the folder's removal takes the files.
	orphaned atomic.Bool
	// released: the last Release is done, the files closed and, when
	// deleted, removed (tests wait for it; the count reaching zero comes
	// before the files go).
	released atomic.Bool
	renamed  bool // markDeleted renamed the log file .deleted; set before deleted
}

// offsets is the segment's offset index.
func (s *Segment) offsets() *index.OffsetIndex { return s.idx.Load() }

// state bits: the low 32 count references, fdOpen says fd is open.
const (
	refMask = 1<<32 - 1
	fdOpen  = 1 << 40
)

// errSegmentGone is returned by acquire on a segment whose last reference
// was released: the caller loads the segment list again.
var errSegmentGone = errors.New("segment closed")

func segmentPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, FileName(base, suffix))
}

// createSegment makes a new empty segment, replacing leftover files of the
// same base offset. It is pinned: the log's new active segment.
func createSegment(dir string, base int64, cfg *Config, files *FileCache) (*Segment, error) {
	for _, sfx := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix, TxnIndexSuffix} {
		if err := cfg.fs().Remove(segmentPath(dir, base, sfx)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove leftover segment file: %w", err)
		}
	}
	return openSegment(dir, base, cfg, files, false, cfg.SegmentIndexBytes)
}

// newSegment makes the Segment of the log file f, opened in fs, pinned,
// with one reference (the log's).
func newSegment(dir, path string, base int64, fs FS, f File, cfg *Config, files *FileCache) *Segment {
	s := &Segment{base: base, dir: dir, path: path, fs: fs, f: f, fd: int(f.Fd()), files: files,
		created: cfg.now(), pinned: true, slot: -1}
	s.state.Store(1 | fdOpen)
	s.indexOK.Store(true)
	s.maxTs.Store(-1)
	s.maxTsOffset.Store(base)
	s.firstBatchTs.Store(-1)
	s.next.Store(base)
	return s
}

// openSegment opens the files of the segment at base. An index that fails
// its checks is replaced by an empty one and the segment marked
// needsRecovery; with rebuildIndexes the caller recovers the segment anyway.
// indexBytes is the index capacity: segment.index.bytes for a segment that
// will take appends or a rebuild, 0 for a sealed one (its own size). The
// segment comes back pinned: unpin it once it is sealed. The log file is
// opened in cfg's file system (Config.FS).
func openSegment(dir string, base int64, cfg *Config, files *FileCache, rebuildIndexes bool, indexBytes int) (*Segment, error) {
	path := segmentPath(dir, base, LogSuffix)
	fs := cfg.fs()
	f, err := files.open(fs, path, os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("open segment %s: %w", path, err)
	}
	s := newSegment(dir, path, base, fs, f, cfg, files)
	var st unix.Stat_t
	if err := unix.Fstat(s.fd, &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("stat segment: %w", err)
	}
	s.size.Store(st.Size)

	corrupt, err := s.openIndexes(indexBytes)
	if err != nil {
		f.Close()
		return nil, err
	}
	tcorrupt, err := s.openTxnIndex()
	if err != nil {
		s.Release()
		return nil, err
	}
	if corrupt = corrupt || tcorrupt; corrupt {
		// Rebuilding needs room in both indexes.
		s.offsets().Close()
		s.tindex.Close()
		if _, err := s.openIndexes(cfg.SegmentIndexBytes); err != nil {
			if t := s.txn.Load(); t != nil {
				t.Close()
			}
			f.Close()
			return nil, err
		}
	}
	if rebuildIndexes {
		return s, nil // the caller recovers the segment
	}
	s.needsRecovery = corrupt
	if corrupt || s.size.Load() == 0 {
		return s, nil
	}
	if err := s.loadTail(); err != nil {
		s.Release()
		return nil, err
	}
	return s, nil
}

// openTxnIndex loads the segment's txn index, if it has one. One that is
// damaged (a crash in the middle of an entry's write leaves it torn) is
// removed and corrupt says so: recovery rebuilds it from the segment's
// abort markers.
func (s *Segment) openTxnIndex() (corrupt bool, err error) {
	p := segmentPath(s.dir, s.base, TxnIndexSuffix)
	if _, err := os.Stat(p); err != nil {
		return false, nil
	}
	_, err = s.txnIndex()
	if errors.Is(err, ErrCorruptTxnIndex) {
		if err := s.fs.Remove(p); err != nil {
			return false, fmt.Errorf("remove corrupt txn index: %w", err)
		}
		return true, nil
	}
	return false, err
}

// openIndexes opens the offset and time index with the given capacity. An
// index that fails its checks is deleted and opened empty: corrupt says so.
func (s *Segment) openIndexes(capacity int) (corrupt bool, err error) {
	open := func(sfx string, o func(string) error) error {
		p := segmentPath(s.dir, s.base, sfx)
		err := o(p)
		if errors.Is(err, index.ErrCorrupt) {
			corrupt = true
			if err := s.fs.Remove(p); err != nil {
				return fmt.Errorf("remove corrupt index: %w", err)
			}
			err = o(p)
		}
		return err
	}
	if err := open(IndexSuffix, func(p string) (err error) {
		x, err := index.OpenOffsetIndex(s.fs, p, s.base, capacity)
		s.idx.Store(x)
		return err
	}); err != nil {
		return corrupt, fmt.Errorf("open offset index: %w", err)
	}
	if err := open(TimeIndexSuffix, func(p string) (err error) {
		s.tindex, err = index.OpenTimeIndex(s.fs, p, s.base, capacity)
		return err
	}); err != nil {
		s.offsets().Close()
		return corrupt, fmt.Errorf("open time index: %w", err)
	}
	return corrupt, nil
}

// loadTail finds the next offset and max timestamp of a segment whose
// indexes are trusted: it scans the batches after the last index entry.
func (s *Segment) loadTail() error {
	if t := s.tindex.Last(); t.Timestamp >= 0 {
		s.maxTs.Store(t.Timestamp)
		s.maxTsOffset.Store(t.Offset)
	}
	var h [record.BatchHeaderSize]byte
	first, err := s.readHeader(&h, 0)
	if err != nil {
		return fmt.Errorf("segment %d: read first batch: %w", s.base, err)
	}
	s.firstBatchTs.Store(first.MaxTimestamp())
	size := s.size.Load()
	pos := s.offsets().Last().Position
	for pos < size {
		b, err := s.readHeader(&h, pos)
		if err != nil {
			return fmt.Errorf("segment %d at %d: %w", s.base, pos, err)
		}
		s.next.Store(b.NextOffset())
		if b.MaxTimestamp() > s.maxTs.Load() {
			s.maxTs.Store(b.MaxTimestamp())
			s.maxTsOffset.Store(b.LastOffset())
		}
		pos += record.LogOverhead + int64(b.Length())
	}
	return nil
}

// readHeader reads the v2 header of the batch at pos into h. The returned
// view covers only the header: its length does not match its batch length.
func (s *Segment) readHeader(h *[record.BatchHeaderSize]byte, pos int64) (record.Batch, error) {
	n, err := unix.Pread(s.fd, h[:], pos)
	if err != nil {
		return nil, fmt.Errorf("read batch header: %w", err)
	}
	if n < record.LogOverhead {
		return nil, record.ErrShortBatch
	}
	b := record.Batch(h[:n])
	if l := int64(b.Length()); l < record.BatchHeaderSize-record.LogOverhead || pos+record.LogOverhead+l > s.size.Load() {
		return nil, record.ErrShortBatch
	}
	if n < record.BatchHeaderSize {
		return nil, record.ErrShortBatch
	}
	return b, nil
}

// BaseOffset is the offset the segment starts at (its file name).
func (s *Segment) BaseOffset() int64 { return s.base }

// NextOffset is the offset after the segment's last batch.
func (s *Segment) NextOffset() int64 { return s.next.Load() }

// Size is the number of bytes of whole batches in the segment.
func (s *Segment) Size() int64 { return s.size.Load() }

// MaxTimestamp is the largest batch timestamp in the segment, -1 when empty.
func (s *Segment) MaxTimestamp() int64 { return s.maxTs.Load() }

// Fd is the log file's descriptor, for sendfile. It is valid while the
// caller holds a reference (a FileRange not yet released): a sealed
// segment's file may be closed, and reopened under another number, once
// no reference remains.
func (s *Segment) Fd() int { return s.fd }

// acquire takes a reference for a reader, with the log file open until
// Release. It fails with errSegmentGone when the segment has already been
// closed, and with a KAFKA_STORAGE_ERROR when its file cannot be reopened.
// Allocation-free when the file is open.
func (s *Segment) acquire() error {
	for {
		st := s.state.Load()
		if st&refMask == 0 {
			return errSegmentGone
		}
		if st&fdOpen == 0 {
			return s.reopen()
		}
		if s.state.CompareAndSwap(st, st+1) {
			if !s.recent.Load() {
				s.recent.Store(true)
			}
			return nil
		}
	}
}

// reopen opens the log file the cache closed and takes a reference.
func (s *Segment) reopen() error {
	s.openMu.Lock()
	defer s.openMu.Unlock()
	var f File
	for {
		st := s.state.Load()
		if st&refMask == 0 {
			if f != nil {
				f.Close()
			}
			return errSegmentGone
		}
		if st&fdOpen != 0 { // reopened by the previous holder of openMu
			if f != nil {
				f.Close()
				f = nil
			}
			if s.state.CompareAndSwap(st, st+1) {
				return nil
			}
			continue
		}
		if f == nil {
			if s.orphaned.Load() {
				return fmt.Errorf("reopen segment %s: its log was deleted or moved: %w", s.path, kerr.KafkaStorageError)
			}
			var err error
			f, err = s.files.open(s.fs, s.path, 0)
			if errors.Is(err, unix.ENOENT) && s.deleted.Load() {
				f, err = s.files.open(s.fs, s.path+DeletedSuffix, 0)
			}
			if err != nil {
				return fmt.Errorf("reopen segment %s: %w: %w", s.path, err, kerr.KafkaStorageError)
			}
			if s.files != nil {
				s.files.opened.Add(1)
			}
		}
		// Nobody reads f or fd while fdOpen is clear.
		s.f, s.fd = f, int(f.Fd())
		if s.state.CompareAndSwap(st, (st+1)|fdOpen) {
			s.recent.Store(true)
			if s.files != nil {
				s.files.add(s)
			}
			return nil
		}
	}
}

// closeIdle closes the log file when only the log holds the segment. gone
// reports that the file is no longer open through the cache's ring (closed
// now or before), closed that this call closed it. Under the cache lock.
func (s *Segment) closeIdle() (gone, closed bool) {
	st := s.state.Load()
	if st&fdOpen == 0 || st&refMask == 0 {
		return true, false
	}
	if st&refMask != 1 || s.pinned {
		return false, false
	}
	f := s.f
	if !s.state.CompareAndSwap(st, st&^fdOpen) {
		return false, false
	}
	f.Close()
	return true, true
}

// pin keeps the log file open until unpin: the segment becomes the log's
// active one. Writer only.
func (s *Segment) pin() error {
	if s.files == nil {
		return nil
	}
	s.files.pin(s)
	if err := s.acquire(); err != nil {
		return err
	}
	s.Release()
	return nil
}

// unpin lets the cache close the log file while no read holds it: the
// segment is sealed. Writer only.
func (s *Segment) unpin() {
	if s.files != nil {
		s.files.unpin(s)
	}
}

// Release gives back a reference taken by a read. The last release closes
// the files, and removes them when the segment was deleted.
//
// A release that leaves only the log's reference while the cache holds
// more files than its bound lets the cache evict: files held by reads (or
// a flush) when they were added are closed once those let go, not only at
// the next add.
func (s *Segment) Release() {
	st := s.state.Add(-1)
	if st&refMask != 0 {
		if st&refMask == 1 && s.files != nil && s.files.over() {
			s.files.evict()
		}
		return
	}
	if s.files != nil {
		s.files.remove(s)
	}
	if st&fdOpen != 0 {
		s.f.Close()
	}
	switch {
	case s.orphaned.Load():
		s.unmapIndexes()
	case s.deleted.Load():
		s.closeIndexes()
		s.removeFiles()
	default:
		s.closeIndexes()
	}
	s.released.Store(true)
}

func (s *Segment) txnIndex() (*TxnIndex, error) {
	if t := s.txn.Load(); t != nil {
		return t, nil
	}
	t, err := OpenTxnIndex(s.fs, segmentPath(s.dir, s.base, TxnIndexSuffix))
	if err != nil {
		return nil, fmt.Errorf("open txn index: %w", err)
	}
	s.txn.Store(t)
	return t, nil
}

// indexBatch updates the indexes for a batch of size bytes written at pos;
// b needs only the header. Writer only.
func (s *Segment) indexBatch(b record.Batch, pos int64, size int, interval int) error {
	if ts := b.MaxTimestamp(); ts > s.maxTs.Load() {
		s.maxTs.Store(ts)
		s.maxTsOffset.Store(b.LastOffset())
	}
	if s.firstBatchTs.Load() < 0 {
		s.firstBatchTs.Store(b.MaxTimestamp())
	}
	if s.bytesSinceIndex > interval {
		// An entry that finds no space for its page is left out (the
		// next batch tries again): the indexes are sparse anyway.
		err := s.offsets().Append(b.LastOffset(), pos)
		switch {
		case err == nil:
			if err := s.tindex.MaybeAppend(s.maxTs.Load(), s.maxTsOffset.Load()); err != nil && !skippableIndexErr(err) {
				return fmt.Errorf("time index: %w", err)
			}
			s.bytesSinceIndex = 0
		case !skippableIndexErr(err):
			return fmt.Errorf("offset index: %w", err)
		}
	}
	s.bytesSinceIndex += size
	return nil
}

// full reports whether an append of n bytes ending at lastOffset must go to
// a new segment.
func (s *Segment) full(cfg *Config, n int64, lastOffset int64, maxTs int64, now int64) bool {
	size := s.size.Load()
	if size == 0 {
		return false
	}
	if size > cfg.SegmentBytes-n || s.offsets().Full() || s.tindex.Full() ||
		lastOffset-s.base > 1<<31-1 {
		return true
	}
	// segment.ms counts from the first batch's timestamp, like Kafka, or
	// from creation when timestamps are missing.
	waited := now - s.created.UnixMilli()
	if first := s.firstBatchTs.Load(); first >= 0 && maxTs >= 0 {
		waited = maxTs - first
	}
	return waited > cfg.SegmentMs-cfg.SegmentJitterMs
}

// seal is called when the segment stops being the active one: the time
// index gets the segment's max timestamp (Kafka does the same, so a lookup
// by time finds it) and the indexes shrink to their entries.
func (s *Segment) seal() error {
	if s.size.Load() > 0 {
		if err := s.tindex.MaybeAppend(s.maxTs.Load(), s.maxTsOffset.Load()); err != nil && !errors.Is(err, index.ErrFull) && !skippableIndexErr(err) {
			return fmt.Errorf("seal time index: %w", err)
		}
	}
	if err := s.offsets().Trim(); err != nil {
		return err
	}
	return s.tindex.Trim()
}

// Sync flushes the segment's file and indexes to disk.
func (s *Segment) Sync() error {
	if err := s.acquire(); err != nil {
		return fmt.Errorf("fsync segment %s: %w", s.path, err)
	}
	// The reference is held to the end: released, a dropped segment's
	// last reference closes its indexes, and their Sync would fail
	// (closed) and take the log offline for an fsync that never failed.
	defer s.Release()
	err := s.f.Sync() // through the File: a test FS tracks durability here
	if err != nil {
		return fmt.Errorf("fsync segment: %w", err)
	}
	if err := s.offsets().Sync(); err != nil {
		return err
	}
	if err := s.tindex.Sync(); err != nil {
		return err
	}
	if t := s.txn.Load(); t != nil {
		return t.Sync()
	}
	return nil
}

// unmapIndexes closes the indexes of an orphaned segment: unmapped, their
// files left alone.
func (s *Segment) unmapIndexes() {
	s.offsets().Unmap()
	for _, x := range s.retired {
		x.Unmap()
	}
	s.tindex.Unmap()
	if t := s.txn.Load(); t != nil {
		t.Close()
	}
}

// closeIndexes closes the indexes; the log file is closed by Release.
func (s *Segment) closeIndexes() {
	s.offsets().Close()
	for _, x := range s.retired {
		x.Unmap()
	}
	s.tindex.Close()
	if t := s.txn.Load(); t != nil {
		t.Close()
	}
}

func (s *Segment) removeFiles() {
	// After markDeleted the log file's own name may already belong to a
	// segment that replaced this one (a cleaned segment of the same base).
	name := s.path
	if s.renamed {
		name += DeletedSuffix
	}
	for _, p := range []string{name, s.offsets().Path(), s.tindex.Path()} {
		s.fs.Remove(p)
	}
	if t := s.txn.Load(); t != nil {
		t.Delete()
	}
}

// markDeleted renames the segment's files with the .deleted suffix, so a
// restart does not load them, and drops the log's reference after delay:
// the files go when the last in-flight read releases them.
func (s *Segment) markDeleted(delay time.Duration) error {
	if err := s.renameDeleted(); err != nil {
		return err
	}
	s.dropAfter(delay)
	return nil
}

// renameDeleted is markDeleted's first half: the files get the .deleted
// suffix, the segment stays readable. The cleaner's swap renames every
// replaced segment before it publishes the new list, and drops them after.
func (s *Segment) renameDeleted() error {
	if err := s.fs.Rename(s.path, s.path+DeletedSuffix); err != nil {
		return fmt.Errorf("rename deleted segment: %w", err)
	}
	s.renamed = true
	// An index left under its name would be removed with the segment
	// later, by then maybe the file of a segment that took its base
	// offset (a cleaned one): the caller fails as for the log file.
	err := s.offsets().Rename(s.offsets().Path() + DeletedSuffix)
	err = errors.Join(err, s.tindex.Rename(s.tindex.Path()+DeletedSuffix))
	if t := s.txn.Load(); t != nil {
		err = errors.Join(err, t.Rename(segmentPath(s.dir, s.base, TxnIndexSuffix+DeletedSuffix)))
	}
	if err != nil {
		return fmt.Errorf("rename deleted segment's indexes: %w", err)
	}
	return nil
}

// dropAfter is markDeleted's second half, once the segment left the log's
// list: the log's reference goes after delay, and the files with the last.
func (s *Segment) dropAfter(delay time.Duration) {
	s.deleted.Store(true)
	if delay <= 0 {
		s.Release()
	} else {
		time.AfterFunc(delay, s.Release)
	}
}

// pwriteFull writes p at off, or fails.
func pwriteFull(fd int, p []byte, off int64) error {
	for len(p) > 0 {
		n, err := unix.Pwrite(fd, p, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		p, off = p[n:], off+int64(n)
	}
	return nil
}

// preadFull reads len(p) bytes at off, or fails.
func preadFull(fd int, p []byte, off int64) error {
	for len(p) > 0 {
		n, err := unix.Pread(fd, p, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return record.ErrShortBatch
		}
		p, off = p[n:], off+int64(n)
	}
	return nil
}
