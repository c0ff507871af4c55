package log

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzCleanSegment runs the cleaner's read and rewrite path over arbitrary
// segment bytes: it must return errors, never panic, and what it writes
// must be valid batches within the offsets it read. CRCs are fixed up
// first so the fuzzer gets past them into records.
func FuzzCleanSegment(f *testing.F) {
	clk := newClock()
	ts := clk.Ms()
	var seed []byte
	for _, codec := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		seed = append(seed, clBatch(f, codec, ts, kv{k: "a", v: "1"}, kv{k: "b", tomb: true}, kv{k: "a", v: "2"})...)
	}
	seed = append(seed, clBatchWith(f, BatchHeader{BaseTimestamp: ts, LastOffsetDelta: -1, ProducerID: 3,
		ProducerEpoch: 1, BaseSequence: 0, Transactional: true}, kv{k: "t", v: "x"})...)
	seed = append(seed, AppendControlBatch(nil, 3, 1, 0, ControlAbort, ts)...)
	// Give the batches increasing offsets.
	next := int64(0)
	for rest := seed; len(rest) > 0; {
		b, r, _ := ParseBatch(rest)
		b.SetBaseOffset(next)
		next = b.NextOffset()
		rest = r
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte{})

	cfg := clConfig(clk)
	cfg.SegmentIndexBytes = 4096
	// One folder and input file for all runs of this process: runs must
	// be cheap for the fuzzer to get anywhere.
	dir := f.TempDir()
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
		data = append([]byte(nil), data...)
		for rest := data; len(rest) > 0; {
			b, r, err := ParseBatch(rest)
			if err != nil || len(b) < BatchHeaderSize {
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
		var read []Batch
		for {
			b, _, err := c.scan.next()
			if err != nil || b == nil {
				break
			}
			read = append(read, append(Batch(nil), b...))
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
			b, rest, err := ParseBatch(out)
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
