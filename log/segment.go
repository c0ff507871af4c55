package log

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"kzero/index"
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
type Segment struct {
	base    int64
	dir     string
	f       File
	fd      int
	index   *index.OffsetIndex
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

	bytesSinceIndex int  // writer only
	needsRecovery   bool // an index failed its checks on open

	refs    atomic.Int32 // the log's reference plus in-flight reads
	deleted atomic.Bool  // remove the files when refs reach zero
	renamed bool         // markDeleted renamed the log file .deleted; set before deleted
}

func segmentPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, FileName(base, suffix))
}

// createSegment makes a new empty segment, replacing leftover files of the
// same base offset.
func createSegment(dir string, base int64, cfg *Config) (*Segment, error) {
	for _, sfx := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix, TxnIndexSuffix} {
		if err := os.Remove(segmentPath(dir, base, sfx)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove leftover segment file: %w", err)
		}
	}
	return openSegment(dir, base, cfg, false, cfg.SegmentIndexBytes)
}

// openSegment opens the files of the segment at base. An index that fails
// its checks is replaced by an empty one and the segment marked
// needsRecovery; with rebuildIndexes the caller recovers the segment anyway.
// indexBytes is the index capacity: segment.index.bytes for a segment that
// will take appends or a rebuild, 0 for a sealed one (its own size).
func openSegment(dir string, base int64, cfg *Config, rebuildIndexes bool, indexBytes int) (*Segment, error) {
	f, err := cfg.fs().OpenFile(segmentPath(dir, base, LogSuffix), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open segment: %w", err)
	}
	s := &Segment{base: base, dir: dir, f: f, fd: int(f.Fd()), created: cfg.now()}
	s.refs.Store(1)
	s.maxTs.Store(-1)
	s.maxTsOffset.Store(base)
	s.firstBatchTs.Store(-1)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat segment: %w", err)
	}
	s.size.Store(st.Size())
	s.next.Store(base)

	corrupt, err := s.openIndexes(indexBytes)
	if err == nil && corrupt {
		// Rebuilding needs room in both indexes.
		s.index.Close()
		s.tindex.Close()
		_, err = s.openIndexes(cfg.SegmentIndexBytes)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if _, err := os.Stat(segmentPath(dir, base, TxnIndexSuffix)); err == nil {
		if _, err := s.txnIndex(); err != nil {
			s.closeFiles()
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
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

// openIndexes opens the offset and time index with the given capacity. An
// index that fails its checks is deleted and opened empty: corrupt says so.
func (s *Segment) openIndexes(capacity int) (corrupt bool, err error) {
	open := func(sfx string, o func(string) error) error {
		p := segmentPath(s.dir, s.base, sfx)
		err := o(p)
		if errors.Is(err, index.ErrCorrupt) {
			corrupt = true
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("remove corrupt index: %w", err)
			}
			err = o(p)
		}
		return err
	}
	if err := open(IndexSuffix, func(p string) (err error) {
		s.index, err = index.OpenOffsetIndex(p, s.base, capacity)
		return err
	}); err != nil {
		return corrupt, fmt.Errorf("open offset index: %w", err)
	}
	if err := open(TimeIndexSuffix, func(p string) (err error) {
		s.tindex, err = index.OpenTimeIndex(p, s.base, capacity)
		return err
	}); err != nil {
		s.index.Close()
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
	var h [BatchHeaderSize]byte
	first, err := s.readHeader(&h, 0)
	if err != nil {
		return fmt.Errorf("segment %d: read first batch: %w", s.base, err)
	}
	s.firstBatchTs.Store(first.MaxTimestamp())
	size := s.size.Load()
	pos := s.index.Last().Position
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
		pos += LogOverhead + int64(b.Length())
	}
	return nil
}

// readHeader reads the v2 header of the batch at pos into h. The returned
// view covers only the header: its length does not match its batch length.
func (s *Segment) readHeader(h *[BatchHeaderSize]byte, pos int64) (Batch, error) {
	n, err := unix.Pread(s.fd, h[:], pos)
	if err != nil {
		return nil, fmt.Errorf("read batch header: %w", err)
	}
	if n < LogOverhead {
		return nil, ErrShortBatch
	}
	b := Batch(h[:n])
	if l := int64(b.Length()); l < BatchHeaderSize-LogOverhead || pos+LogOverhead+l > s.size.Load() {
		return nil, ErrShortBatch
	}
	if n < BatchHeaderSize {
		return nil, ErrShortBatch
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

// Fd is the log file's descriptor, for sendfile.
func (s *Segment) Fd() int { return s.fd }

// acquire takes a reference for a reader; it fails when the segment has
// already been closed.
func (s *Segment) acquire() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release gives back a reference taken by a read. The last release closes
// the files, and removes them when the segment was deleted.
func (s *Segment) Release() {
	if s.refs.Add(-1) == 0 {
		s.closeFiles()
		if s.deleted.Load() {
			s.removeFiles()
		}
	}
}

func (s *Segment) txnIndex() (*TxnIndex, error) {
	if t := s.txn.Load(); t != nil {
		return t, nil
	}
	t, err := OpenTxnIndex(segmentPath(s.dir, s.base, TxnIndexSuffix))
	if err != nil {
		return nil, fmt.Errorf("open txn index: %w", err)
	}
	s.txn.Store(t)
	return t, nil
}

// indexBatch updates the indexes for a batch of size bytes written at pos;
// b needs only the header. Writer only.
func (s *Segment) indexBatch(b Batch, pos int64, size int, interval int) error {
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
		err := s.index.Append(b.LastOffset(), pos)
		switch {
		case err == nil:
			if err := s.tindex.MaybeAppend(s.maxTs.Load(), s.maxTsOffset.Load()); err != nil && !noSpace(err) {
				return fmt.Errorf("time index: %w", err)
			}
			s.bytesSinceIndex = 0
		case !noSpace(err):
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
	if size > cfg.SegmentBytes-n || s.index.Full() || s.tindex.Full() ||
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
		if err := s.tindex.MaybeAppend(s.maxTs.Load(), s.maxTsOffset.Load()); err != nil && !errors.Is(err, index.ErrFull) && !noSpace(err) {
			return fmt.Errorf("seal time index: %w", err)
		}
	}
	if err := s.index.Trim(); err != nil {
		return err
	}
	return s.tindex.Trim()
}

// Sync flushes the segment's file and indexes to disk.
func (s *Segment) Sync() error {
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("fsync segment: %w", err)
	}
	if err := s.index.Sync(); err != nil {
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

func (s *Segment) closeFiles() {
	s.index.Close()
	s.tindex.Close()
	if t := s.txn.Load(); t != nil {
		t.Close()
	}
	s.f.Close()
}

func (s *Segment) removeFiles() {
	// After markDeleted the log file's own name may already belong to a
	// segment that replaced this one (a cleaned segment of the same base).
	name := s.f.Name()
	if s.renamed {
		name += DeletedSuffix
	}
	for _, p := range []string{name, s.index.Path(), s.tindex.Path()} {
		os.Remove(p)
	}
	if t := s.txn.Load(); t != nil {
		t.Delete()
	}
}

// markDeleted renames the segment's files with the .deleted suffix, so a
// restart does not load them, and drops the log's reference after delay:
// the files go when the last in-flight read releases them.
func (s *Segment) markDeleted(delay time.Duration) error {
	if err := os.Rename(s.f.Name(), s.f.Name()+DeletedSuffix); err != nil {
		return fmt.Errorf("rename deleted segment: %w", err)
	}
	s.index.Rename(s.index.Path() + DeletedSuffix)
	s.tindex.Rename(s.tindex.Path() + DeletedSuffix)
	if t := s.txn.Load(); t != nil {
		t.Rename(segmentPath(s.dir, s.base, TxnIndexSuffix+DeletedSuffix))
	}
	s.renamed = true
	s.deleted.Store(true)
	if delay <= 0 {
		s.Release()
	} else {
		time.AfterFunc(delay, s.Release)
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
			return ErrShortBatch
		}
		p, off = p[n:], off+int64(n)
	}
	return nil
}
