package log

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"kzero/index"
	"kzero/record"
	"kzero/vfs"
)

// cleanedSegment writes a cleaned segment: B.log.cleaned with its indexes
// B.index.cleaned, B.timeindex.cleaned and, when an aborted transaction
// stays in it, B.txnindex.cleaned. Its Segment is never published: the
// swap opens the renamed files afresh.
type cleanedSegment struct {
	seg      *Segment
	interval int
	buf      []byte // batches not yet written
	bufSize  int
	flushed  int64 // file position of buf[0]
	pos      int64 // file position after buf
	next     int64
	closed   bool
}

func cleanedPath(dir string, base int64, suffix string) string {
	return segmentPath(dir, base, suffix+CleanedSuffix)
}

var segmentSuffixes = []string{IndexSuffix, TimeIndexSuffix, TxnIndexSuffix, LogSuffix}

// removeSwapFiles removes the .cleaned and .swap files of base, which a
// pass leaves when it gives up before the swap commits.
func removeSwapFiles(fs FS, dir string, base int64) {
	for _, sfx := range segmentSuffixes {
		fs.Remove(cleanedPath(dir, base, sfx))
		fs.Remove(segmentPath(dir, base, sfx+SwapSuffix))
	}
}

func createCleaned(dir string, base int64, cfg *Config, buf []byte, bufSize int) (*cleanedSegment, error) {
	fs := cfg.fs()
	removeSwapFiles(fs, dir, base)
	path := cleanedPath(dir, base, LogSuffix)
	f, err := (*FileCache)(nil).open(fs, path, os.O_CREATE|os.O_EXCL)
	if err != nil {
		return nil, fmt.Errorf("create cleaned segment: %w", err)
	}
	s := newSegment(dir, path, base, fs, f, cfg, nil)
	fail := func(err error) (*cleanedSegment, error) {
		if x := s.offsets(); x != nil {
			x.Close()
		}
		if s.tindex != nil {
			s.tindex.Close()
		}
		f.Close()
		removeSwapFiles(fs, dir, base)
		return nil, fmt.Errorf("create cleaned segment %d: %w", base, err)
	}
	x, err := index.OpenOffsetIndex(fs, cleanedPath(dir, base, IndexSuffix), base, cfg.SegmentIndexBytes)
	if err != nil {
		return fail(err)
	}
	s.idx.Store(x)
	if s.tindex, err = index.OpenTimeIndex(fs, cleanedPath(dir, base, TimeIndexSuffix), base, cfg.SegmentIndexBytes); err != nil {
		return fail(err)
	}
	t, err := OpenTxnIndex(fs, cleanedPath(dir, base, TxnIndexSuffix))
	if err != nil {
		return fail(err)
	}
	s.txn.Store(t)
	return &cleanedSegment{seg: s, interval: cfg.IndexIntervalBytes, buf: buf, bufSize: bufSize, next: base}, nil
}

// append adds a batch, copying it.
func (w *cleanedSegment) append(b record.Batch) error {
	// A full index only makes the index sparser: the segment stays right.
	if err := w.seg.indexBatch(b, w.pos, len(b), w.interval); err != nil && !errors.Is(err, index.ErrFull) {
		return err
	}
	w.buf = append(w.buf, b...)
	w.pos += int64(len(b))
	w.next = b.NextOffset()
	if len(w.buf) >= w.bufSize {
		return w.flush()
	}
	return nil
}

func (w *cleanedSegment) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if err := pwriteFull(w.seg.fd, w.buf, w.flushed); err != nil {
		return fmt.Errorf("write cleaned segment %d: %w", w.seg.base, err)
	}
	w.flushed = w.pos
	w.buf = w.buf[:0]
	return nil
}

// finish writes what is buffered, trims the indexes, fsyncs and closes
// the files.
func (w *cleanedSegment) finish() error {
	if err := w.flush(); err != nil {
		return err
	}
	s := w.seg
	s.size.Store(w.pos)
	s.next.Store(w.next)
	if err := s.seal(); err != nil {
		return err
	}
	if err := s.Sync(); err != nil {
		return err
	}
	w.closed = true
	s.Release()
	return nil
}

// discard closes and removes the cleaned files.
func (w *cleanedSegment) discard() {
	if !w.closed {
		w.closed = true
		w.seg.Release()
	}
	removeSwapFiles(w.seg.fs, w.seg.dir, w.seg.base)
}

// swapStep names the points a test may stop a swap at, as if the broker
// crashed there.
type swapStep int

const (
	swapComplete       swapStep = iota
	swapStopCleaned             // the .cleaned files are written
	swapStopSwapFiles           // renamed to .swap: the commit point
	swapStopOldDeleted          // the replaced segments are renamed .deleted
)

var errSimulatedCrash = errors.New("simulated crash")

// replaceSegmentsLocked replaces old, adjacent segments of the log whose
// sizes were sizes when the cleaner read them, by the cleaned segment at
// base, following swap.go's steps. When the log changed since (a segment
// deleted, truncated or made active, the log closed) it removes the cleaned
// files and returns errCleanAborted. A failure after the commit point
// takes the log offline: the next Open completes the swap.
func (l *Log) replaceSegmentsLocked(old []*Segment, sizes []int64, base int64, stop swapStep) error {
	if stop == swapStopCleaned {
		return errSimulatedCrash
	}
	segs := l.Segments()
	i := slices.Index(segs, old[0])
	ok := !l.mu.closed && i >= 0 && i+len(old) < len(segs)
	for k := 0; ok && k < len(old); k++ {
		ok = segs[i+k] == old[k] && old[k].size.Load() == sizes[k]
	}
	fs := l.fs()
	if !ok {
		removeSwapFiles(fs, l.dir, base)
		return errCleanAborted
	}

	for _, sfx := range segmentSuffixes {
		err := fs.Rename(cleanedPath(l.dir, base, sfx), segmentPath(l.dir, base, sfx+SwapSuffix))
		if err != nil && !(sfx == TxnIndexSuffix && errors.Is(err, os.ErrNotExist)) {
			removeSwapFiles(fs, l.dir, base)
			return fmt.Errorf("rename cleaned segment to swap: %w", err)
		}
	}
	offline := func(err error) error {
		err = fmt.Errorf("swap cleaned segment %d: %w", base, err)
		l.goOfflineLocked("segment swap failed", err)
		return err
	}
	if err := vfs.Fsync(fs, l.dir); err != nil {
		return offline(err)
	}
	if stop == swapStopSwapFiles {
		return errSimulatedCrash
	}
	// Renamed now, released once the new list is out: a swap that fails
	// from here leaves the log offline with the old segments still
	// readable (a reader finding a released segment in the list would
	// load the list again forever).
	for _, s := range old {
		if err := s.renameDeleted(); err != nil {
			return offline(err)
		}
	}
	if stop == swapStopOldDeleted {
		return errSimulatedCrash
	}
	if err := renameSwapped(fs, l.dir, base); err != nil {
		return offline(err)
	}
	cfg := l.cfg.Load()
	s, err := openSegment(l.dir, base, cfg, l.files, false, 0)
	if err != nil {
		return offline(err)
	}
	if s.needsRecovery {
		// The indexes were just written and fsynced; rebuild them anyway.
		if _, err := s.rebuild(cfg, nil); err == nil {
			err = s.seal()
		}
		if err != nil {
			s.Release()
			return offline(err)
		}
	}
	s.unpin()
	next := make([]*Segment, 0, len(segs)-len(old)+1)
	next = append(append(append(next, segs[:i]...), s), segs[i+len(old):]...)
	l.setSegments(next)
	delay := durationMs(cfg.FileDeleteDelayMs)
	for _, s := range old {
		s.dropAfter(delay)
	}
	return nil
}
