package tools

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"

	"kzero/log"
	"kzero/record"
)

// checkDumpError requires an error from damaged bytes to be one line that
// says where.
func checkDumpError(t *testing.T, err error, wantPrefix string) {
	t.Helper()
	if err == nil {
		return
	}
	lines := ErrorLines(err)
	if len(lines) != 1 || lines[0] != err.Error() {
		t.Fatalf("error is not one line: %q", err.Error())
	}
	if !strings.HasPrefix(lines[0], wantPrefix) {
		t.Fatalf("error %q does not start with %q", lines[0], wantPrefix)
	}
}

// FuzzDumpLog feeds arbitrary bytes to dump-log as a .log segment, in
// every mode: it may refuse them, with a one-line error naming the
// position, but never panic or read past what the length fields allow.
//
// The seeds are single batches and one pair, not the whole hand-built
// segment: the fuzzer minimizes every input that finds new coverage, at a
// cost that grows with the square of its length, and fuzzes nothing
// meanwhile (with the 1.5 KiB segment as a seed it ran 7 inputs in 30 s).
func FuzzDumpLog(f *testing.F) {
	batches := specSegment(f)
	for _, b := range batches {
		f.Add(b)
	}
	pair := bytes.Join(batches[:2], nil)
	f.Add(pair)
	f.Add(pair[:len(pair)-7])
	f.Add(record.AppendControlBatch(nil, 7, 1, 3, record.ControlCommit, T0))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 8<<10 {
			return // a few batches reach every path; longer inputs only slow the fuzzer
		}
		for _, json := range []bool{false, true} {
			d := &dumper{w: bufio.NewWriter(io.Discard), json: json, file: "x.log",
				opts: DumpOptions{PrintDataLog: true, MaxBatchBytes: 1 << 20}}
			err := d.dumpLog(bytes.NewReader(data), int64(len(data)), 0)
			d.rr.Release()
			checkDumpError(t, err, "position ")
		}
		s := scanSegmentBatches(bytes.NewReader(data), int64(len(data)))
		for i := 1; i < len(s.batches); i++ {
			if s.batches[i].Pos <= s.batches[i-1].Pos {
				t.Fatalf("batch positions out of order: %+v", s.batches)
			}
		}
	})
}

// FuzzDumpIndex feeds arbitrary bytes to the decoders of the index-like
// files, and the decoded index entries to the sanity checks against the
// hand-built segment.
func FuzzDumpIndex(f *testing.F) {
	files := struct{ index, time, txn, snap []byte }{}
	pos := positions(specSegment(f))
	files.index = offsetIndex([2]uint32{4, pos[1]}, [2]uint32{7, pos[3]})
	files.time = timeIndex(specTime{T0 + 1000, 4}, specTime{T0 + 2000, 6})
	files.txn = txnIndex([4]int64{42, 105, 107, 105})
	files.snap = snapshot(specProducer{ProducerID: 1, LastSequence: 4, LastOffset: 9, OffsetDelta: 4, TxnFirstOffset: -1})
	for kind, data := range [][]byte{files.index, files.time, files.txn, files.snap} {
		f.Add(uint8(kind), data)
		f.Add(uint8(kind), data[:len(data)-1])
		f.Add(uint8(kind), append(bytes.Clone(data), make([]byte, 64)...))
	}
	seg := bytes.Join(specSegment(f), nil)
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		s := scanSegmentBatches(bytes.NewReader(seg), int64(len(seg)))
		d := &dumper{w: bufio.NewWriter(io.Discard), file: "x"}
		switch kind % 4 {
		case 0:
			entries, err := decodeOffsetIndex(data, 100)
			checkDumpError(t, err, "position ")
			s.checkOffsetIndex(entries, 100)
			if err == nil && len(entries) > len(data)/offsetEntrySize {
				t.Fatalf("%d entries from %d bytes", len(entries), len(data))
			}
			checkDumpError(t, d.offsetIndex("x", data, 100), "x: position ")
		case 1:
			entries, err := decodeTimeIndex(data, 100)
			checkDumpError(t, err, "position ")
			s.checkTimeIndex(entries, 100)
			checkDumpError(t, d.timeIndex("x", data, 100), "x: position ")
		case 2:
			if entries, err := log.DecodeTxnIndex(data); err == nil {
				s.checkTxnIndex(entries, 100)
			}
			checkDumpError(t, d.txnIndex("x", data, 100), "x: ")
		case 3:
			checkDumpError(t, d.snapshot("x", data, 0), "x: position ")
		}
	})
}
