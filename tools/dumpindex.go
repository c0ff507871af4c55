package tools

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"kzero/log"
	"kzero/record"
)

// The index files, as the index package writes them (see its doc.go), read
// here from the file's bytes rather than through index.Open*, which would
// extend a preallocated file:
//
//	.index      8 bytes an entry: relative offset int32 BE, position int32 BE
//	.timeindex 12 bytes an entry: timestamp int64 BE, relative offset int32 BE
//
// Both fields are read as signed, as Kafka reads them, so a damaged entry
// shows up as a negative value rather than a huge one.
const (
	offsetEntrySize = 8
	timeEntrySize   = 12
)

// offsetEntry is an offset index entry with its offset made absolute.
type offsetEntry struct{ Offset, Position int64 }

// timeEntry is a time index entry with its offset made absolute.
type timeEntry struct{ Timestamp, Offset int64 }

// usedSlots counts the entries of an index file of width-byte entries: a
// trailing run of all-zero slots is the free space of a preallocated index
// (the active segment's, or one left untrimmed by a crash), not entries. A
// file of a single zero slot holds one entry; a larger all-zero file none.
func usedSlots(data []byte, width int) (int, error) {
	if r := len(data) % width; r != 0 {
		return 0, fmt.Errorf("position %d: %d bytes after the last whole %d-byte entry: truncated or corrupt", len(data)-r, r, width)
	}
	last := len(data) - 1
	for last >= 0 && data[last] == 0 {
		last--
	}
	n := (last + width) / width
	if n == 0 && len(data) == width {
		n = 1
	}
	return n, nil
}

// decodeOffsetIndex parses the bytes of an .index file of the segment that
// starts at base.
func decodeOffsetIndex(data []byte, base int64) ([]offsetEntry, error) {
	n, err := usedSlots(data, offsetEntrySize)
	if err != nil {
		return nil, err
	}
	entries := make([]offsetEntry, n)
	for i := range entries {
		e := data[i*offsetEntrySize:]
		entries[i] = offsetEntry{
			Offset:   base + int64(int32(binary.BigEndian.Uint32(e))),
			Position: int64(int32(binary.BigEndian.Uint32(e[4:]))),
		}
	}
	return entries, nil
}

// decodeTimeIndex parses the bytes of a .timeindex file of the segment that
// starts at base.
func decodeTimeIndex(data []byte, base int64) ([]timeEntry, error) {
	n, err := usedSlots(data, timeEntrySize)
	if err != nil {
		return nil, err
	}
	entries := make([]timeEntry, n)
	for i := range entries {
		e := data[i*timeEntrySize:]
		entries[i] = timeEntry{
			Timestamp: int64(binary.BigEndian.Uint64(e)),
			Offset:    base + int64(int32(binary.BigEndian.Uint32(e[8:]))),
		}
	}
	return entries, nil
}

type offsetEntryLine struct {
	item
	Offset   int64 `json:"offset"`
	Position int64 `json:"position"`
}

type timeEntryLine struct {
	item
	Timestamp int64 `json:"timestamp"`
	Offset    int64 `json:"offset"`
}

func (d *dumper) offsetIndex(path string, data []byte, base int64) error {
	entries, err := decodeOffsetIndex(data, base)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if d.opts.IndexSanityCheck {
		return d.sanityCheck(path, len(entries), func(s *segmentBatches) []string {
			return s.checkOffsetIndex(entries, base)
		})
	}
	for _, e := range entries {
		if d.json {
			d.emit(offsetEntryLine{item: d.item("index_entry"), Offset: e.Offset, Position: e.Position})
		} else {
			fmt.Fprintf(d.w, "offset: %d position: %d\n", e.Offset, e.Position)
		}
	}
	return nil
}

func (d *dumper) timeIndex(path string, data []byte, base int64) error {
	entries, err := decodeTimeIndex(data, base)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if d.opts.IndexSanityCheck {
		return d.sanityCheck(path, len(entries), func(s *segmentBatches) []string {
			return s.checkTimeIndex(entries, base)
		})
	}
	for _, e := range entries {
		if d.json {
			d.emit(timeEntryLine{item: d.item("time_index_entry"), Timestamp: e.Timestamp, Offset: e.Offset})
		} else {
			fmt.Fprintf(d.w, "timestamp: %d offset: %d\n", e.Timestamp, e.Offset)
		}
	}
	return nil
}

// maxProblems caps the errors a failed check reports one by one.
const maxProblems = 10

type sanityLine struct {
	item
	Log      string   `json:"log"`
	Entries  int      `json:"entries"`
	Passed   bool     `json:"passed"`
	Problems []string `json:"problems"`
}

// sanityCheck reads the .log of the index at path and runs check on it,
// printing the verdict and returning the problems found as errors.
func (d *dumper) sanityCheck(path string, entries int, check func(*segmentBatches) []string) error {
	logPath := siblingLog(path)
	s, err := readSegmentBatches(logPath)
	if err != nil {
		return fmt.Errorf("%s: sanity check needs the segment: %w", path, err)
	}
	problems := check(s)
	if s.err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", logPath, s.err))
	}
	if d.json {
		d.emit(sanityLine{item: d.item("sanity_check"), Log: logPath, Entries: entries, Passed: len(problems) == 0, Problems: append([]string{}, problems...)})
	} else if len(problems) == 0 {
		fmt.Fprintf(d.w, "%s passed sanity check against %s (%d entries)\n", path, filepath.Base(logPath), entries)
	} else {
		fmt.Fprintf(d.w, "%s failed sanity check: %d problems\n", path, len(problems))
	}
	var errs []error
	for i, p := range problems {
		if i == maxProblems {
			errs = append(errs, fmt.Errorf("%s: and %d more problems", path, len(problems)-maxProblems))
			break
		}
		errs = append(errs, fmt.Errorf("%s: %s", path, p))
	}
	return errors.Join(errs...)
}

// siblingLog is the .log file of the segment an index file belongs to,
// keeping a .deleted, .cleaned or .swap suffix.
func siblingLog(path string) string {
	dir, name := filepath.Split(path)
	kind := fileKind(name)
	i := strings.LastIndex(name, kind)
	return filepath.Join(dir, name[:i]+log.LogSuffix+name[i+len(kind):])
}

// batchInfo is what the checks need of one batch.
type batchInfo struct {
	Pos, Base, Last, MaxTimestamp int64
	ProducerID                    int64
	Control                       bool
	ControlType                   record.ControlType
	ControlErr                    error
}

// segmentBatches is the batch headers of a .log file, in file order.
type segmentBatches struct {
	batches []batchInfo
	size    int64
	err     error // a damaged frame that ended the read early
}

func readSegmentBatches(path string) (*segmentBatches, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return scanSegmentBatches(f, st.Size()), nil
}

// scanSegmentBatches reads the batch headers of a segment of size bytes; a
// damaged frame ends the scan and is kept in err.
func scanSegmentBatches(r io.Reader, size int64) *segmentBatches {
	s := &segmentBatches{size: size}
	sc := newBatchScanner(r, size)
	for {
		b, pos, err := sc.next(true)
		if err == errEnd {
			return s
		}
		if err != nil {
			s.err = err
			return s
		}
		bi := batchInfo{Pos: pos, Base: b.BaseOffset(), Last: b.LastOffset(), MaxTimestamp: b.MaxTimestamp(),
			ProducerID: b.ProducerID(), Control: b.IsControl()}
		if bi.Control {
			bi.ControlType, bi.ControlErr = b.ControlType()
		}
		s.batches = append(s.batches, bi)
	}
}

// at returns the batch that starts at position pos.
func (s *segmentBatches) at(pos int64) (batchInfo, bool) {
	i := sort.Search(len(s.batches), func(i int) bool { return s.batches[i].Pos >= pos })
	if i < len(s.batches) && s.batches[i].Pos == pos {
		return s.batches[i], true
	}
	return batchInfo{}, false
}

// holding returns the batch whose offset range holds off.
func (s *segmentBatches) holding(off int64) (batchInfo, bool) {
	i := sort.Search(len(s.batches), func(i int) bool { return s.batches[i].Last >= off })
	if i < len(s.batches) && s.batches[i].Base <= off {
		return s.batches[i], true
	}
	return batchInfo{}, false
}

// checkOffsetIndex checks each entry names the last offset of the batch at
// its position (Kafka indexes a batch by its last offset), with offsets and
// positions increasing.
func (s *segmentBatches) checkOffsetIndex(entries []offsetEntry, base int64) []string {
	var problems []string
	for i, e := range entries {
		where := fmt.Sprintf("entry %d (offset %d, position %d)", i, e.Offset, e.Position)
		switch {
		case e.Offset < base:
			problems = append(problems, fmt.Sprintf("%s: offset below the segment's base offset %d", where, base))
			continue
		case e.Position < 0:
			problems = append(problems, fmt.Sprintf("%s: negative position", where))
			continue
		case i > 0 && e.Offset <= entries[i-1].Offset:
			problems = append(problems, fmt.Sprintf("%s: offset not above the previous entry's %d", where, entries[i-1].Offset))
		case i > 0 && e.Position <= entries[i-1].Position:
			problems = append(problems, fmt.Sprintf("%s: position not above the previous entry's %d", where, entries[i-1].Position))
		}
		if e.Position >= s.size {
			problems = append(problems, fmt.Sprintf("%s: position past the end of the segment (%d bytes)", where, s.size))
			continue
		}
		b, ok := s.at(e.Position)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: no batch starts at that position", where))
		case b.Last != e.Offset:
			problems = append(problems, fmt.Sprintf("%s: the batch there holds offsets %d-%d, its last offset is not the entry's", where, b.Base, b.Last))
		}
	}
	return problems
}

// checkTimeIndex checks each entry names a batch holding its offset whose
// max timestamp is the entry's, with timestamps increasing and offsets not
// decreasing.
func (s *segmentBatches) checkTimeIndex(entries []timeEntry, base int64) []string {
	var problems []string
	for i, e := range entries {
		where := fmt.Sprintf("entry %d (timestamp %d, offset %d)", i, e.Timestamp, e.Offset)
		switch {
		case e.Offset < base:
			problems = append(problems, fmt.Sprintf("%s: offset below the segment's base offset %d", where, base))
			continue
		case e.Timestamp < 0:
			problems = append(problems, fmt.Sprintf("%s: negative timestamp", where))
		case i > 0 && e.Timestamp <= entries[i-1].Timestamp:
			problems = append(problems, fmt.Sprintf("%s: timestamp not above the previous entry's %d", where, entries[i-1].Timestamp))
		case i > 0 && e.Offset < entries[i-1].Offset:
			problems = append(problems, fmt.Sprintf("%s: offset below the previous entry's %d", where, entries[i-1].Offset))
		}
		b, ok := s.holding(e.Offset)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: no batch of the segment holds that offset", where))
		case b.MaxTimestamp != e.Timestamp:
			problems = append(problems, fmt.Sprintf("%s: the batch holding it (offsets %d-%d) has max timestamp %d", where, b.Base, b.Last, b.MaxTimestamp))
		}
	}
	return problems
}
