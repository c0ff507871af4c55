package log

import (
	"fmt"
	"slices"
	"sync/atomic"

	"kzero/index"
	"kzero/record"
)

// indexRepairs counts offset indexes found damaged by reads, for tests and
// metrics.
var indexRepairs atomic.Int64

// IndexRepairs is the number of damaged offset indexes reads have found
// (each is rebuilt).
func IndexRepairs() int64 { return indexRepairs.Load() }

// indexDamaged is called by the one read that found s's offset index
// pointing at a position that is not the batch its entry names. Reads
// already fall back to earlier entries; this logs it once and rebuilds the
// index in the background.
func (l *Log) indexDamaged(s *Segment, offset int64) {
	indexRepairs.Add(1)
	l.logger.Warn("damaged offset index: reads fall back to earlier entries until it is rebuilt",
		"dir", l.dir, "segment", s.base, "offset", offset, "index", s.offsets().Path())
	if s.acquire() != nil {
		return
	}
	go func() {
		defer s.Release()
		l.mu.Lock()
		if l.mu.closed || l.mu.closing {
			l.mu.Unlock()
			return
		}
		l.bg.Add(1) // Close waits for the rebuild
		l.mu.Unlock()
		defer l.bg.Done()
		if err := l.repairIndex(s); err != nil {
			l.logger.Error("rebuilding a damaged offset index failed", "dir", l.dir, "segment", s.base, "err", err)
			return
		}
		l.logger.Info("rebuilt a damaged offset index", "dir", l.dir, "segment", s.base)
	}()
}

// repairIndex rebuilds s's offset index from its batch headers. The active
// segment's index is rebuilt in place under the writer's lock (it has room;
// reads check every entry they use). A sealed segment's is written beside
// it, renamed over it and swapped in: reads that still hold the old
// mapping keep it until the segment closes. s is acquired.
func (l *Log) repairIndex(s *Segment) error {
	l.mu.Lock()
	if s == l.active() {
		defer l.mu.Unlock()
		_, err := s.rebuild(l.cfg.Load(), nil)
		if err == nil {
			s.indexOK.Store(true)
		}
		return err
	}
	l.mu.Unlock()

	size := s.size.Load()
	entries, err := s.indexEntries(size, l.cfg.Load().IndexIntervalBytes)
	if err != nil {
		return err
	}
	path := s.offsets().Path()
	tmp := path + ".tmp" // removed by Open if a crash leaves it
	fs := l.fs()
	if err := writeOffsetIndex(fs, tmp, s.base, entries); err != nil {
		fs.Remove(tmp)
		return err
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	segs := l.Segments()
	if l.mu.closed || !slices.Contains(segs[:len(segs)-1], s) || s.size.Load() != size {
		fs.Remove(tmp)
		return nil // the segment changed under the rebuild: nothing to repair
	}
	if err := fs.Rename(tmp, path); err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("replace offset index: %w", err)
	}
	x, err := index.OpenOffsetIndex(fs, path, s.base, 0)
	if err != nil {
		return fmt.Errorf("open rebuilt offset index: %w", err)
	}
	s.retired = append(s.retired, s.offsets())
	s.idx.Store(x)
	s.indexOK.Store(true)
	return nil
}

// startPosition is the position of a batch at or before the one holding
// offset, from the index entry for it, checked as translate checks it (for
// the colder paths that scan from it: lookups by time, producer replay).
func (s *Segment) startPosition(offset int64) int64 {
	x := s.offsets()
	e := x.Lookup(offset)
	var h [record.BatchHeaderSize]byte
	for e.Position > 0 {
		b, err := s.readHeader(&h, e.Position)
		if err == nil && b.BaseOffset() <= e.Offset && e.Offset <= b.LastOffset() {
			break
		}
		e = x.Lookup(e.Offset - 1)
	}
	return e.Position
}

// indexEntries lists the offset index entries of the batches below size,
// as appends write them (one every index.interval.bytes).
func (s *Segment) indexEntries(size int64, interval int) ([]index.OffsetPosition, error) {
	var entries []index.OffsetPosition
	var h [record.BatchHeaderSize]byte
	since := 0
	for pos := int64(0); pos < size; {
		b, err := s.readHeader(&h, pos)
		if err != nil {
			return nil, fmt.Errorf("rebuild offset index of segment %d at %d: %w", s.base, pos, err)
		}
		n := record.LogOverhead + int(b.Length())
		if since > interval {
			entries = append(entries, index.OffsetPosition{Offset: b.LastOffset(), Position: pos})
			since = 0
		}
		since += n
		pos += int64(n)
	}
	return entries, nil
}

// writeOffsetIndex writes a sealed offset index of entries at path, synced.
func writeOffsetIndex(fs FS, path string, base int64, entries []index.OffsetPosition) error {
	fs.Remove(path)
	x, err := index.OpenOffsetIndex(fs, path, base, len(entries)*8)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := x.Append(e.Offset, e.Position); err != nil {
			x.Close()
			return err
		}
	}
	err = x.Sync()
	if cerr := x.Close(); err == nil {
		err = cerr
	}
	return err
}
