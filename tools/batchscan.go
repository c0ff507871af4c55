package tools

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"kzero/record"
)

// batchScanner walks the record batches of a segment file front to back,
// checking the framing of each before it reads it: a length that reaches
// past the end of the file is a truncated batch, never an allocation of
// what the length claims. Errors name the byte position of the batch.
type batchScanner struct {
	r    *bufio.Reader
	size int64 // bytes in the file
	pos  int64 // position of the next batch
	buf  []byte
}

func newBatchScanner(r io.Reader, size int64) *batchScanner {
	return &batchScanner{r: bufio.NewReaderSize(r, 64<<10), size: size}
}

// errEnd is the clean end of the file, after the last whole batch.
var errEnd = errors.New("end of segment")

// next returns the next whole batch and its position; with headerOnly, a
// batch that is not a control batch comes back as its 61-byte header and
// the rest is skipped. The batch aliases a buffer reused by the next call.
// At the end of the file it returns errEnd.
func (s *batchScanner) next(headerOnly bool) (record.Batch, int64, error) {
	pos, left := s.pos, s.size-s.pos
	if left == 0 {
		return nil, pos, errEnd
	}
	if left < record.LogOverhead {
		return nil, pos, fmt.Errorf("position %d: %d bytes left, too few for a batch's offset and length: truncated", pos, left)
	}
	head, err := s.r.Peek(min(int(left), record.LogOverhead+5))
	if err != nil {
		return nil, pos, fmt.Errorf("position %d: %w", pos, err)
	}
	length := int64(int32(binary.BigEndian.Uint32(head[8:])))
	if length < record.BatchHeaderSize-record.LogOverhead {
		if len(head) > 16 && length > 4 && head[16] <= 1 {
			return nil, pos, fmt.Errorf("position %d: message format v%d (before Kafka 0.11) is not supported", pos, head[16])
		}
		return nil, pos, fmt.Errorf("position %d: batch length %d is below the v2 header's %d: corrupt", pos, length, record.BatchHeaderSize-record.LogOverhead)
	}
	if total := record.LogOverhead + length; total > left {
		return nil, pos, fmt.Errorf("position %d: batch of %d bytes runs past the end of the file, %d bytes left: truncated", pos, total, left)
	}
	if m := head[16]; m != record.MagicV2 {
		return nil, pos, fmt.Errorf("position %d: magic %d, want %d: corrupt", pos, m, record.MagicV2)
	}
	total := int(record.LogOverhead + length)
	n := total
	if headerOnly {
		n = record.BatchHeaderSize
	}
	if cap(s.buf) < n {
		s.buf = make([]byte, n)
	}
	s.buf = s.buf[:n]
	if _, err := io.ReadFull(s.r, s.buf); err != nil {
		return nil, pos, fmt.Errorf("position %d: %w", pos, err)
	}
	b := record.Batch(s.buf)
	if headerOnly && b.IsControl() && total > n {
		// Control batches are tiny: read the record too, for its type.
		s.buf = append(s.buf, make([]byte, total-n)...)
		if _, err := io.ReadFull(s.r, s.buf[n:]); err != nil {
			return nil, pos, fmt.Errorf("position %d: %w", pos, err)
		}
		b, n = record.Batch(s.buf), total
	}
	if n < total {
		if _, err := s.r.Discard(total - n); err != nil {
			return nil, pos, fmt.Errorf("position %d: %w", pos, err)
		}
	}
	s.pos += int64(total)
	return b, pos, nil
}
