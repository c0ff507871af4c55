package index

import (
	"encoding/binary"
	"fmt"
	"sort"

	"kzero/vfs"
)

// offsetWidth is the size of an offset index entry: relative offset, then
// file position, each 4 bytes big-endian.
const offsetWidth = 8

// OffsetPosition is an offset index entry: a record batch's offset and the
// byte position in the segment file of a batch at or before it.
type OffsetPosition struct{ Offset, Position int64 }

// OffsetIndex maps offsets to file positions in one segment (a Kafka .index
// file). One goroutine writes it; any number read it with no lock (see the
// package doc).
type OffsetIndex struct{ t *table }

// OpenOffsetIndex opens or creates the offset index at path for the segment
// starting at baseOffset. The file is extended to maxBytes (rounded down to a
// multiple of 8) when smaller; pass 0 to open a sealed index at its own size.
// A file that fails the checks returns an error wrapping ErrCorrupt. The
// file is opened, resized, fsynced and renamed in fs (see the package doc).
func OpenOffsetIndex(fs vfs.FS, path string, baseOffset int64, maxBytes int) (*OffsetIndex, error) {
	t, err := openTable(fs, path, baseOffset, maxBytes, offsetWidth, checkOffsets)
	if err != nil {
		return nil, err
	}
	return &OffsetIndex{t: t}, nil
}

// checkOffsets requires relative offsets and positions that fit Kafka's
// signed int and strictly increase.
func checkOffsets(t *table, n int) error {
	var prevRel, prevPos uint32
	for i := range n {
		b := t.slot(i)
		rel, pos := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
		switch {
		case rel > maxField || pos > maxField:
			return fmt.Errorf("entry %d (relative offset %d, position %d) overflows", i, rel, pos)
		case i > 0 && rel <= prevRel:
			return fmt.Errorf("entry %d: relative offset %d not above %d", i, rel, prevRel)
		case i > 0 && pos <= prevPos:
			return fmt.Errorf("entry %d: position %d not above %d", i, pos, prevPos)
		}
		prevRel, prevPos = rel, pos
	}
	return nil
}

// Append adds an entry for offset (absolute) at position. The offset and the
// position must be above the last entry's (ErrOutOfOrder), fit the format
// (ErrOverflow), and the index must have room (ErrFull). Writer only.
func (x *OffsetIndex) Append(offset, position int64) error {
	t := x.t
	rel := offset - t.base
	if rel < 0 || rel > maxField || position < 0 || position > maxField {
		return fmt.Errorf("%w: offset %d (base %d), position %d in %s", ErrOverflow, offset, t.base, position, t.filePath())
	}
	n := t.len()
	if n > 0 {
		last := x.entry(n - 1)
		if offset <= last.Offset || position <= last.Position {
			return fmt.Errorf("%w: offset %d at %d after offset %d at %d in %s",
				ErrOutOfOrder, offset, position, last.Offset, last.Position, t.filePath())
		}
	}
	b, err := t.prepareAppend(n)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(b, uint32(rel))
	binary.BigEndian.PutUint32(b[4:], uint32(position))
	t.publish(n + 1)
	return nil
}

// Lookup returns the last entry whose offset is at most target, or
// {BaseOffset(), 0} when there is none: the position to start scanning the
// segment from to find target.
func (x *OffsetIndex) Lookup(target int64) OffsetPosition {
	t := x.t
	if target < t.base {
		return OffsetPosition{t.base, 0}
	}
	rel := min(target-t.base, maxField+1)
	i := t.floor(t.len(), rel)
	if i < 0 {
		return OffsetPosition{t.base, 0}
	}
	return x.entry(i)
}

// Entry returns entry i, which must be below Len().
func (x *OffsetIndex) Entry(i int) OffsetPosition {
	if n := x.t.len(); i < 0 || i >= n {
		panic(fmt.Sprintf("index: entry %d out of range [0, %d)", i, n))
	}
	return x.entry(i)
}

func (x *OffsetIndex) entry(i int) OffsetPosition {
	b := x.t.slot(i)
	return OffsetPosition{
		Offset:   x.t.base + int64(binary.BigEndian.Uint32(b)),
		Position: int64(binary.BigEndian.Uint32(b[4:])),
	}
}

// Len returns the number of entries.
func (x *OffsetIndex) Len() int { return x.t.len() }

// Last returns the last entry, or {BaseOffset(), 0} when there is none.
func (x *OffsetIndex) Last() OffsetPosition {
	if n := x.t.len(); n > 0 {
		return x.entry(n - 1)
	}
	return OffsetPosition{x.t.base, 0}
}

// Full reports whether Append would return ErrFull.
func (x *OffsetIndex) Full() bool { return x.t.len() >= x.t.slots }

// BaseOffset returns the segment's base offset.
func (x *OffsetIndex) BaseOffset() int64 { return x.t.base }

// TruncateTo drops the entries whose offset is at least offset, as when the
// log is truncated to offset. Readers that loaded the count before the call
// may still be reading the dropped entries: the caller must not let them use
// what they read (the log lowers its end offset first). Writer only.
func (x *OffsetIndex) TruncateTo(offset int64) {
	t := x.t
	n := t.len()
	rel := offset - t.base
	keep := sort.Search(n, func(i int) bool { return t.key(i) >= rel })
	t.truncate(keep)
}

// Reset drops every entry, to rebuild the index from the segment. Writer only.
func (x *OffsetIndex) Reset() { x.t.truncate(0) }

// Trim shrinks the file to its entries (Len()*8 bytes), as Kafka leaves a
// sealed segment's index. The next Append extends it again. Do not trim right
// after TruncateTo while readers may still read the dropped entries: they
// would read past the end of the file. Writer only.
func (x *OffsetIndex) Trim() error { return x.t.trim() }

// Sync flushes the entries to disk. Writer only.
func (x *OffsetIndex) Sync() error { return x.t.sync() }

// Rename moves the file to newPath; the mapping and readers are unaffected.
// Writer only.
func (x *OffsetIndex) Rename(newPath string) error { return x.t.rename(newPath) }

// Path returns the file's current path.
func (x *OffsetIndex) Path() string { return x.t.filePath() }

// Close trims the file and unmaps it; it does not sync (call Sync first
// when the entries must be durable). No reader may use the index during or
// after Close. A second Close does nothing.
func (x *OffsetIndex) Close() error { return x.t.close() }

// Unmap drops the mapping and leaves the file alone: for an index whose file
// was replaced by a rebuilt one (renamed over it) while readers may still
// have been using this mapping, or whose folder was deleted or moved (its
// path may name another log's file by then). No reader may use the index during or after
// Unmap. A second Unmap or Close does nothing.
func (x *OffsetIndex) Unmap() error { return x.t.release() }
