package index

import (
	"encoding/binary"
	"fmt"
	"sort"

	"kzero/vfs"
)

// timeWidth is the size of a time index entry: timestamp, 8 bytes, then
// relative offset, 4 bytes, both big-endian.
const timeWidth = 12

// noTimestamp is Kafka's "no timestamp" (RecordBatch.NO_TIMESTAMP), the
// timestamp Lookup and Last report when there is no entry.
const noTimestamp = -1

// TimestampOffset is a time index entry: Timestamp is the largest timestamp
// seen in the segment before Offset, so any record with a larger timestamp
// comes at or after Offset.
type TimestampOffset struct{ Timestamp, Offset int64 }

// TimeIndex maps timestamps to offsets in one segment (a Kafka .timeindex
// file). One goroutine writes it; any number read it with no lock (see the
// package doc).
type TimeIndex struct{ t *table }

// OpenTimeIndex opens or creates the time index at path for the segment
// starting at baseOffset. The file is extended to maxBytes (rounded down to a
// multiple of 12) when smaller; pass 0 to open a sealed index at its own
// size. A file that fails the checks returns an error wrapping ErrCorrupt.
// The file is opened, resized, fsynced and renamed in fs.
func OpenTimeIndex(fs vfs.FS, path string, baseOffset int64, maxBytes int) (*TimeIndex, error) {
	t, err := openTable(fs, path, baseOffset, maxBytes, timeWidth, checkTimes)
	if err != nil {
		return nil, err
	}
	return &TimeIndex{t: t}, nil
}

// checkTimes requires timestamps that are not negative (Kafka never writes
// one: an entry needs a timestamp above the -1 of an empty index) and strictly
// increase, and relative offsets that fit Kafka's signed int and never
// decrease.
func checkTimes(t *table, n int) error {
	var prevTs int64
	var prevRel uint32
	for i := range n {
		b := t.slot(i)
		ts, rel := int64(binary.BigEndian.Uint64(b)), binary.BigEndian.Uint32(b[8:])
		switch {
		case rel > maxField:
			return fmt.Errorf("entry %d: relative offset %d overflows", i, rel)
		case ts < 0:
			return fmt.Errorf("entry %d: negative timestamp %d", i, ts)
		case i > 0 && ts <= prevTs:
			return fmt.Errorf("entry %d: timestamp %d not above %d", i, ts, prevTs)
		case i > 0 && rel < prevRel:
			return fmt.Errorf("entry %d: relative offset %d below %d", i, rel, prevRel)
		}
		prevTs, prevRel = ts, rel
	}
	return nil
}

// MaybeAppend adds the entry (timestamp, offset) when timestamp is above the
// last entry's timestamp (an empty index's is -1), and does nothing
// otherwise. offset (absolute) must not be below the last entry's offset
// (ErrOutOfOrder) and must fit the format (ErrOverflow). It returns ErrFull
// only when every slot is used; Full reports full one slot earlier, so the
// entry for the segment's largest timestamp always fits when the segment
// rolls (Kafka reserves that slot the same way). Writer only.
func (x *TimeIndex) MaybeAppend(timestamp, offset int64) error {
	t := x.t
	n := t.len()
	last := x.Last()
	if n > 0 && offset < last.Offset {
		return fmt.Errorf("%w: offset %d below last offset %d in %s", ErrOutOfOrder, offset, last.Offset, t.filePath())
	}
	if timestamp <= last.Timestamp {
		return nil
	}
	rel := offset - t.base
	if rel < 0 || rel > maxField {
		return fmt.Errorf("%w: offset %d (base %d) in %s", ErrOverflow, offset, t.base, t.filePath())
	}
	b, err := t.prepareAppend(n)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(b, uint64(timestamp))
	binary.BigEndian.PutUint32(b[8:], uint32(rel))
	t.publish(n + 1)
	return nil
}

// Lookup returns the last entry whose timestamp is at most ts, or
// {-1, BaseOffset()} when there is none: the offset to start scanning the
// segment from for the first record with a timestamp at or above ts.
func (x *TimeIndex) Lookup(ts int64) TimestampOffset {
	i := x.t.floor(x.t.len(), ts)
	if i < 0 {
		return TimestampOffset{noTimestamp, x.t.base}
	}
	return x.entry(i)
}

// Entry returns entry i, which must be below Len().
func (x *TimeIndex) Entry(i int) TimestampOffset {
	if n := x.t.len(); i < 0 || i >= n {
		panic(fmt.Sprintf("index: entry %d out of range [0, %d)", i, n))
	}
	return x.entry(i)
}

func (x *TimeIndex) entry(i int) TimestampOffset {
	b := x.t.slot(i)
	return TimestampOffset{
		Timestamp: int64(binary.BigEndian.Uint64(b)),
		Offset:    x.t.base + int64(binary.BigEndian.Uint32(b[8:])),
	}
}

// Len returns the number of entries.
func (x *TimeIndex) Len() int { return x.t.len() }

// Last returns the last entry, or {-1, BaseOffset()} when there is none.
func (x *TimeIndex) Last() TimestampOffset {
	if n := x.t.len(); n > 0 {
		return x.entry(n - 1)
	}
	return TimestampOffset{noTimestamp, x.t.base}
}

// Full reports whether the index has at most one free slot left. That last
// slot is kept for the entry written when the segment rolls; see MaybeAppend.
func (x *TimeIndex) Full() bool { return x.t.len() >= x.t.slots-1 }

// BaseOffset returns the segment's base offset.
func (x *TimeIndex) BaseOffset() int64 { return x.t.base }

// TruncateTo drops the entries whose offset is at least offset. The same
// caveat about readers as OffsetIndex.TruncateTo applies. Writer only.
func (x *TimeIndex) TruncateTo(offset int64) {
	t := x.t
	n := t.len()
	keep := sort.Search(n, func(i int) bool { return x.entry(i).Offset >= offset })
	t.truncate(keep)
}

// Reset drops every entry, to rebuild the index from the segment. Writer only.
func (x *TimeIndex) Reset() { x.t.truncate(0) }

// Trim shrinks the file to its entries (Len()*12 bytes). The next append
// extends it again. The caveat of OffsetIndex.Trim applies. Writer only.
func (x *TimeIndex) Trim() error { return x.t.trim() }

// Sync flushes the entries to disk. Writer only.
func (x *TimeIndex) Sync() error { return x.t.sync() }

// Rename moves the file to newPath; the mapping and readers are unaffected.
// Writer only.
func (x *TimeIndex) Rename(newPath string) error { return x.t.rename(newPath) }

// Path returns the file's current path.
func (x *TimeIndex) Path() string { return x.t.filePath() }

// Close trims the file and unmaps it; it does not sync (call Sync
// first when the entries must be durable). No reader may use the index during
// or after Close. A second Close does nothing.
func (x *TimeIndex) Close() error { return x.t.close() }

// Unmap drops the mapping and leaves the file alone: for an index whose
// folder was deleted or moved (its path may name another log's file by
// then). No reader may use the index during or after Unmap. A second
// Unmap or Close does nothing.
func (x *TimeIndex) Unmap() error { return x.t.release() }
