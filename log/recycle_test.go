package log

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"kzero/record"
)

// waitReady waits until the pool has n files ready for reuse.
func waitReady(t *testing.T, r *Recycler, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ready := r.Bytes(); ready >= n {
			return
		}
		if time.Now().After(deadline) {
			held, ready := r.Bytes()
			t.Fatalf("pool: %d bytes held, %d ready; want %d ready", held, ready, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// staleSegment writes a segment file full of valid batches of equal size
// (offsets 0, 5, 10, ...) in another partition's folder of logDir, closes
// that log and gives its file to r, as retention would: the worst a
// recycled file can hold. It returns the batch size.
func staleSegment(t *testing.T, logDir string, r *Recycler, batches int) int64 {
	t.Helper()
	cfg := testConfig()
	other := openTestLog(t, filepath.Join(logDir, "other-0"), cfg)
	for i := 0; i < batches; i++ {
		mustAppend(t, other, makeBatch(t, 5, 100, record.CodecNone))
	}
	size := other.active().Size() / int64(batches)
	if size*int64(batches) != other.active().Size() {
		t.Fatalf("batches of unequal size")
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if !r.give(filepath.Join(logDir, "other-0", FileName(0, LogSuffix))) {
		t.Fatal("pool refused the file")
	}
	waitReady(t, r, 1)
	return size
}

// TestRecycledStaleBatchesNeverRecovered: a log's first segment is a
// recycled file that held valid batches of equal size whose offsets
// continue exactly where the new data stops. After a crash (no clean
// shutdown) at a batch boundary, or in the middle of a batch's write,
// recovery must keep only what the log wrote. Without the pool clearing
// the file, recovery takes the stale batches for data (LEO 250, not 50).
func TestRecycledStaleBatchesNeverRecovered(t *testing.T) {
	for _, crash := range []string{"boundary", "torn"} {
		t.Run(crash, func(t *testing.T) {
			logDir := t.TempDir()
			r, err := NewRecycler(logDir, 1<<30, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			batchSize := staleSegment(t, logDir, r, 50)

			dir := filepath.Join(logDir, "mine-0")
			cfg := testConfig()
			l, err := Open(dir, cfg, OpenOptions{Recycler: r})
			if err != nil {
				t.Fatal(err)
			}
			if !l.active().recycled {
				t.Fatal("the new log's segment is not the recycled file")
			}
			for i := 0; i < 10; i++ {
				mustAppend(t, l, makeBatch(t, 5, 100, record.CodecNone))
			}
			if l.active().Size() != 10*batchSize {
				t.Fatalf("size %d, want %d", l.active().Size(), 10*batchSize)
			}
			segPath := filepath.Join(dir, FileName(0, LogSuffix))
			if st, _ := os.Stat(segPath); st.Size() != 50*batchSize {
				t.Fatalf("recycled file is %d bytes, want the old %d", st.Size(), 50*batchSize)
			}
			// Reads never go past what was appended.
			rg, err := l.Read(0, 1<<30, 1<<40, true)
			if err != nil {
				t.Fatal(err)
			}
			if rg.Len != 10*batchSize {
				t.Fatalf("read %d bytes, want %d", rg.Len, 10*batchSize)
			}
			rg.Release()
			if crash == "torn" {
				// The 11th batch's write reached the file only in part.
				half := makeBatch(t, 5, 100, record.CodecNone)
				record.Batch(half).SetBaseOffset(50)
				f, err := os.OpenFile(segPath, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteAt(half[:len(half)/2], 10*batchSize)
				f.Close()
			}
			// The crash: the log is dropped without Close (which would
			// trim the file and mark nothing clean either way); a new
			// one recovers the folder from offset 0.
			l2, err := Open(dir, cfg, OpenOptions{RecoveryPoint: 0})
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			if got := l2.LogEndOffset(); got != 50 {
				t.Fatalf("LEO after recovery %d, want 50", got)
			}
			if st, _ := os.Stat(segPath); st.Size() != 10*batchSize {
				t.Fatalf("file %d bytes after recovery, want %d", st.Size(), 10*batchSize)
			}
			rg, err = l2.Read(0, 1<<30, l2.LogEndOffset(), true)
			if err != nil {
				t.Fatal(err)
			}
			defer rg.Release()
			if got := batchesIn(readRange(t, rg)); len(got) != 10 || got[9][1] != 49 {
				t.Fatalf("batches after recovery: %v", got)
			}
		})
	}
}

// TestRecyclerClearsEveryByte: a file handed out holds only zeros.
func TestRecyclerClearsEveryByte(t *testing.T) {
	logDir := t.TempDir()
	r, err := NewRecycler(logDir, 1<<30, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := filepath.Join(logDir, "x")
	data := bytes.Repeat([]byte{0xab}, 3*recycleChunk+17)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if !r.give(p) {
		t.Fatal("refused")
	}
	waitReady(t, r, 1)
	q, ok := r.take()
	if !ok {
		t.Fatal("nothing to take")
	}
	got, err := os.ReadFile(q)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(data) || !bytes.Equal(got, make([]byte, len(data))) {
		t.Fatalf("handed-out file is not all zeros (%d bytes)", len(got))
	}
	if held, _ := r.Bytes(); held != 0 {
		t.Fatalf("pool still counts %d bytes", held)
	}
}

// TestRecyclerBound: a file that would take the pool past its bound is
// removed, not kept.
func TestRecyclerBound(t *testing.T) {
	logDir := t.TempDir()
	r, err := NewRecycler(logDir, 1000, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, n := range []int{600, 600} {
		p := filepath.Join(logDir, "x")
		os.WriteFile(p, make([]byte, n), 0o644)
		if got := r.give(p); got != (i == 0) {
			t.Fatalf("file %d: kept %v", i, got)
		}
	}
	if held, _ := r.Bytes(); held != 600 {
		t.Fatalf("held %d, want 600", held)
	}
}

// TestManagerRecyclesDeletedSegments: retention and a partition's deletion
// put their segment files in the log dir's pool, new segments (a new
// partition's, a roll's) take them, and a clean shutdown trims a recycled
// segment to its data, so a restart finds the log as written.
func TestManagerRecyclesDeletedSegments(t *testing.T) {
	logDir := t.TempDir()
	mc := DefaultManagerConfig(logDir)
	mc.Defaults = testConfig()
	mc.Defaults.SegmentBytes = 64 << 10
	mc.RecycleBytes = 1 << 30
	m, err := OpenManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	r := m.Recycler(logDir)
	a, err := m.GetOrCreate(TopicPartition{Topic: "a", Partition: 0}, mc.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		mustAppend(t, a, makeBatch(t, 10, 1000, record.CodecNone))
	}
	segs := len(a.Segments())
	if segs < 5 {
		t.Fatalf("%d segments", segs)
	}
	// Retention: DeleteRecords past the first three segments.
	if _, err := a.DeleteRecordsBefore(a.Segments()[3].BaseOffset()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DeleteOldSegments(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, r, 3)
	// The partition's deletion.
	if err := m.Delete(TopicPartition{Topic: "a", Partition: 0}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, r, segs)
	b, err := m.GetOrCreate(TopicPartition{Topic: "b", Partition: 0}, mc.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	if !b.active().recycled {
		t.Fatal("b's first segment is not recycled")
	}
	for i := 0; i < 30; i++ {
		mustAppend(t, b, makeBatch(t, 10, 1000, record.CodecNone))
	}
	if _, ready := r.Bytes(); ready >= segs {
		t.Fatalf("rolls took no file from the pool (%d ready)", ready)
	}
	end := b.LogEndOffset()
	var sizes []int64
	for _, s := range b.Segments() {
		sizes = append(sizes, s.Size())
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for i, s := range b.Segments() {
		st, err := os.Stat(filepath.Join(logDir, "b-0", FileName(s.BaseOffset(), LogSuffix)))
		if err != nil || st.Size() != sizes[i] {
			t.Fatalf("segment %d: file %v bytes, want %d (%v)", i, st.Size(), sizes[i], err)
		}
	}
	m, err = OpenManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if held, ready := m.Recycler(logDir).Bytes(); held != 0 || ready != 0 {
		t.Fatalf("pool after restart: %d bytes, %d files", held, ready)
	}
	b, _ = m.Get(TopicPartition{Topic: "b", Partition: 0})
	if b.LogEndOffset() != end {
		t.Fatalf("LEO %d after restart, want %d", b.LogEndOffset(), end)
	}
	rg, err := b.Read(0, 1<<30, end, true)
	if err != nil {
		t.Fatal(err)
	}
	defer rg.Release()
	for buf := readRange(t, rg); len(buf) > 0; {
		bt, rest, err := record.ParseBatch(buf)
		if err != nil || bt.Validate() != nil {
			t.Fatalf("bad batch after restart: %v", err)
		}
		buf = rest
	}
}
