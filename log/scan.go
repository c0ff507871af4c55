package log

import (
	"errors"
	"fmt"

	"kzero/record"
)

// scanChunk is how much of the log Scan reads at a time (at least one
// whole batch).
const scanChunk = 1 << 20

// Scan calls fn for every batch of the log from offset from up to end, in
// order, each checked with Validate: what a coordinator reads to rebuild
// its state from an internal topic. The batch bytes are valid only during
// the call. It stops at the first error, fn's included.
func (l *Log) Scan(from, end int64, fn func(record.Batch) error) error {
	off := max(from, l.LogStartOffset())
	var buf []byte
	for off < end {
		fr, err := l.Read(off, scanChunk, end, true)
		if err != nil {
			return fmt.Errorf("read at offset %d: %w", off, err)
		}
		if fr.Empty() {
			return nil
		}
		if int64(cap(buf)) < fr.Len {
			buf = make([]byte, fr.Len)
		}
		data := buf[:fr.Len]
		err = preadFull(fr.Segment.Fd(), data, fr.Pos)
		fr.Release()
		if err != nil {
			return fmt.Errorf("read at offset %d: %w", off, err)
		}
		before := off
		for {
			b, rest, err := record.ParseBatch(data)
			if errors.Is(err, record.ErrShortBatch) || len(data) == 0 {
				break
			}
			if err != nil {
				return fmt.Errorf("batch after offset %d: %w", off, err)
			}
			data = rest
			if err := b.Validate(); err != nil {
				return fmt.Errorf("batch at offset %d: %w", b.BaseOffset(), err)
			}
			if b.NextOffset() <= off {
				continue
			}
			off = b.NextOffset()
			if err := fn(b); err != nil {
				return err
			}
		}
		if off == before {
			return fmt.Errorf("no whole batch at offset %d", off)
		}
	}
	return nil
}
