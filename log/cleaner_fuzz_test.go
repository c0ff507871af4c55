package log

import (
	"os"
	"path/filepath"
	"testing"

	"kzero/record"
)

// FuzzCleanSegment runs the cleaner's read and rewrite path over arbitrary
// segment bytes: it must return errors, never panic, and what it writes
// must be valid batches within the offsets it read. CRCs are fixed up
// first so the fuzzer gets past them into records.
func FuzzCleanSegment(f *testing.F) {
	clk := newClock()
	ts := clk.Ms()
	// Small seeds, one or two batches each: the fuzzer minimizes every
	// input that finds new coverage, at a cost that grows with the square
	// of its length, and fuzzes nothing meanwhile.
	var batches [][]byte
	for _, codec := range []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd} {
		batches = append(batches, clBatch(f, codec, ts, kv{k: "a", v: "1"}, kv{k: "b", tomb: true}, kv{k: "a", v: "2"}))
	}
	batches = append(batches, clBatchWith(f, record.BatchHeader{BaseTimestamp: ts, LastOffsetDelta: -1, ProducerID: 3,
		ProducerEpoch: 1, BaseSequence: 0, Transactional: true}, kv{k: "t", v: "x"}))
	batches = append(batches, record.AppendControlBatch(nil, 3, 1, 0, record.ControlAbort, ts))
	// withOffsets concatenates batches with increasing offsets.
	withOffsets := func(bs ...[]byte) []byte {
		var out []byte
		next := int64(0)
		for _, b := range bs {
			at := len(out)
			out = append(out, b...)
			record.Batch(out[at:]).SetBaseOffset(next)
			next = record.Batch(out[at:]).NextOffset()
		}
		return out
	}
	for _, b := range batches {
		f.Add(withOffsets(b))
	}
	f.Add(withOffsets(batches[0], batches[0]))             // a key overwritten across batches
	f.Add(withOffsets(batches[5], batches[0], batches[6])) // an aborted transaction around data
	f.Add([]byte{})

	cfg := clConfig(clk)
	cfg.SegmentIndexBytes = 4096
	// One folder and input file for all runs of this process: runs must
	// be cheap for the fuzzer to get anywhere. Each run still creates and
	// removes a cleaned segment's four files, which costs a millisecond
	// on ext4 and a tenth of that on tmpfs: use /dev/shm where there is one.
	dir := memTempDir(f)
	in, err := os.OpenFile(filepath.Join(dir, "input"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		f.Fatal(err)
	}
	defer in.Close()
	seg := &Segment{fd: int(in.Fd())}
	c := clCleaner(1 << 16)
	c.inflateLimit = 1 << 20 // keep each run short
	c.m, _ = NewOffsetMap(1<<16, 0.9)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4<<10 {
			return // a few batches cover every path; longer inputs only slow the fuzzer
		}
		data = append([]byte(nil), data...)
		for rest := data; len(rest) > 0; {
			b, r, err := record.ParseBatch(rest)
			if err != nil || len(b) < record.BatchHeaderSize {
				break
			}
			b.UpdateCRC()
			rest = r
		}
		if err := in.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if _, err := in.WriteAt(data, 0); err != nil {
			t.Fatal(err)
		}
		c.m.Clear()
		aborted := []AbortedTxn{{ProducerID: 3, FirstOffset: 0, LastOffset: 1 << 40}}
		// Map.
		txn := newTxnTracker(aborted)
		c.scan.reset(seg, int64(len(data)), 512, 1<<20)
		for {
			b, _, err := c.scan.next()
			if err != nil || b == nil || b.Validate() != nil {
				break
			}
			if b.IsControl() {
				txn.onControl(b, &c.rr)
			} else if !txn.onData(b) && int(b.NumRecords()) <= c.m.Free() {
				c.mapBatch(b, 0)
			}
		}
		// Clean.
		w, err := createCleaned(dir, 0, &cfg, nil, 4096)
		if err != nil {
			t.Fatal(err)
		}
		defer w.discard()
		x := &cleanContext{m: c.m, txn: newTxnTracker(aborted), producers: map[int64]producerLast{3: {lastOffset: 5, epoch: 1}},
			now: clk.Ms(), horizon: clk.Ms() + 1000, stats: &CleanStats{}}
		c.scan.reset(seg, int64(len(data)), 512, 1<<20)
		var read []record.Batch
		for {
			b, _, err := c.scan.next()
			if err != nil || b == nil {
				break
			}
			read = append(read, append(record.Batch(nil), b...))
			if err := c.cleanBatch(b, w, x); err != nil {
				break
			}
		}
		if err := w.flush(); err != nil {
			t.Fatal(err)
		}
		out, err := os.ReadFile(cleanedPath(dir, 0, LogSuffix))
		if err != nil {
			t.Fatal(err)
		}
		for len(out) > 0 {
			b, rest, err := record.ParseBatch(out)
			if err != nil {
				t.Fatalf("cleaned output does not parse: %v", err)
			}
			if err := b.Validate(); err != nil {
				t.Fatalf("cleaned batch at %d: %v", b.BaseOffset(), err)
			}
			found := false
			for _, r := range read {
				if r.BaseOffset() == b.BaseOffset() && r.LastOffset() == b.LastOffset() {
					found = true
				}
			}
			if !found {
				t.Fatalf("cleaned batch %d..%d was not read", b.BaseOffset(), b.LastOffset())
			}
			out = rest
		}
	})
}

// memTempDir is a temporary folder on /dev/shm (tmpfs) when the machine has
// one, else t.TempDir(); removed when t ends.
func memTempDir(t testing.TB) string {
	dir, err := os.MkdirTemp("/dev/shm", "kzero-fuzz-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
