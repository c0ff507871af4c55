package log

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"kzero/record"
	"kzero/vfs"
)

func TestManagerLifecycle(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	cfg := DefaultManagerConfig(dirs...)
	cfg.Defaults = testConfig()
	m, err := OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A second broker on the same dirs is refused.
	if _, err := OpenManager(cfg); err == nil {
		t.Fatal("second manager opened locked log dirs")
	}
	tps := []TopicPartition{{"a", 0}, {"a", 1}, {"b-c", 0}, {"d", 7}}
	for _, tp := range tps {
		l, err := m.GetOrCreate(tp, testConfig())
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, makeBatch(t, 10, 10, record.CodecNone))
	}
	// New partitions spread over the dirs.
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		n := 0
		for _, e := range ents {
			if e.IsDir() {
				n++
			}
		}
		if n != 2 {
			t.Fatalf("dir %s holds %d partitions", d, n)
		}
	}
	if err := m.Delete(TopicPartition{"d", 7}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		for _, f := range []string{RecoveryPointCheckpoint, LogStartOffsetCheckpoint, cleanShutdownFile} {
			if _, err := os.Stat(filepath.Join(d, f)); err != nil {
				t.Fatalf("after close: %v", err)
			}
		}
	}
	// Reopen after a clean shutdown, then "crash" (no Close) and reopen.
	m, err = OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Logs()); got != 3 {
		t.Fatalf("%d logs after reopen", got)
	}
	l, _ := m.Get(TopicPartition{"b-c", 0})
	if l.LogEndOffset() != 10 {
		t.Fatalf("LEO %d", l.LogEndOffset())
	}
	mustAppend(t, l, makeBatch(t, 5, 10, record.CodecNone))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, cleanShutdownFile)); !os.IsNotExist(err) {
			t.Fatal("clean shutdown marker left while running")
		}
	}
	m.unlock() // the process dies: locks go, nothing is flushed or checkpointed
	m2, err := OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	l, _ = m2.Get(TopicPartition{"b-c", 0})
	if l.LogEndOffset() != 15 {
		t.Fatalf("LEO after crash %d", l.LogEndOffset())
	}
	if _, ok := m2.Get(TopicPartition{"d", 7}); ok {
		t.Fatal("deleted partition came back")
	}
}

// The manager's cleaner compacts a compacted log in the background and
// checkpoints where it stopped. In a synctest bubble its timer runs on a
// fake clock: one backoff later the first pass has run.
func TestManagerRunsCleaner(t *testing.T) {
	synctest.Test(t, testManagerRunsCleaner)
}

// cleanerManager opens a Manager in dir whose cleaner waits backoff, and a
// compacted log of 200 committed batches rewriting the same 10 keys. The
// manager is not started.
func cleanerManager(t *testing.T, dir string, backoff time.Duration) (*Manager, *Log, *bool) {
	cfg := DefaultManagerConfig(dir)
	cfg.Defaults = testConfig()
	cfg.CleanerBackoff = backoff
	cfg.CleanerDedupeBufferSize = 1 << 20
	m, err := OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	closed := new(bool)
	t.Cleanup(func() { // a failed test must not leave the bubble's goroutines
		if !*closed {
			m.Close()
		}
	})
	lc := testConfig()
	lc.Compact, lc.Delete = true, false
	lc.SegmentBytes = 4 << 10
	l, err := m.GetOrCreate(TopicPartition{"compacted", 0}, lc)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		mustAppend(t, l, makeBatch(t, 10, 50, record.CodecNone))
	}
	l.OnHighWatermark(l.LogEndOffset())
	return m, l, closed
}

func testManagerRunsCleaner(t *testing.T) {
	dir := t.TempDir()
	m, l, closed := cleanerManager(t, dir, 10*time.Millisecond)
	before := l.Size()
	m.Start()
	time.Sleep(10 * time.Millisecond)
	synctest.Wait()
	if l.FirstDirtyOffset() == 0 || l.Size() >= before {
		t.Fatalf("not cleaned: first dirty %d, size %d of %d", l.FirstDirtyOffset(), l.Size(), before)
	}
	*closed = true
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCheckpoint(vfs.OS, filepath.Join(dir, CleanerCheckpoint))
	if err != nil || got[TopicPartition{"compacted", 0}] == 0 {
		t.Fatalf("cleaner checkpoint %v %v", got, err)
	}
}

// SetCleanerBackoff cuts a wait under way: a cleaner waiting an hour
// cleans 10 ms after the backoff became 10 ms (log.cleaner.backoff.ms set
// at runtime).
func TestManagerCleanerBackoffChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, l, _ := cleanerManager(t, t.TempDir(), time.Hour)
		m.Start()
		time.Sleep(time.Minute)
		synctest.Wait()
		if l.FirstDirtyOffset() != 0 {
			t.Fatal("cleaned before the backoff passed")
		}
		m.SetCleanerBackoff(10 * time.Millisecond)
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if l.FirstDirtyOffset() == 0 {
			t.Fatal("not cleaned 10 ms after the backoff became 10 ms")
		}
	})
}

// A partition deleted while a read still holds its newest segment, then
// created again in the same dir: the held range stays readable, and its
// last release leaves the new log's files alone. (The old segments kept
// their paths, which name the new log's files by then: the last release
// trimmed the new segment's index to the old entries' length and removed
// its log file.)
func TestDeleteWhileReadThenRecreate(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultManagerConfig(dir)
	cfg.Defaults = testConfig()
	m, err := OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { m.Close() }() // the second manager's, once reopened
	tp := TopicPartition{Topic: "again", Partition: 0}
	old, err := m.GetOrCreate(tp, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		mustAppend(t, old, makeBatch(t, 10, 100, record.CodecNone))
	}
	held := readOffset(t, old, 0)
	want := make([]byte, held.Len)
	if err := preadFull(held.Segment.Fd(), want, held.Pos); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(tp); err != nil {
		t.Fatal(err)
	}

	l, err := m.GetOrCreate(tp, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		mustAppend(t, l, makeBatch(t, 20, 200, record.CodecNone))
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	before := logBytes(t, l)
	idx := l.active().offsets().Path()
	idxSize := fileSize(t, idx)

	got := make([]byte, held.Len)
	if err := preadFull(held.Segment.Fd(), got, held.Pos); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the held range of the deleted log reads differently: %v", err)
	}
	held.Release() // the old segment's last reference
	waitReleased(held.Segment)

	if n := fileSize(t, idx); n != idxSize {
		t.Fatalf("the new segment's index is %d bytes after the old segment's release, was %d", n, idxSize)
	}
	if _, err := os.Stat(l.active().path); err != nil {
		t.Fatalf("the new segment's file: %v", err)
	}
	if got := logBytes(t, l); !bytes.Equal(got, before) {
		t.Fatal("the new log reads differently after the old segment's release")
	}
	mustAppend(t, l, makeBatch(t, 5, 100, record.CodecNone))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, _ = m.Get(tp)
	if l == nil || l.LogEndOffset() != 65 {
		t.Fatalf("after a restart the re-created log is %v", l)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A partition deleted and created again before the next scheduled
// checkpoint: the checkpoint files on disk must not keep the deleted
// log's recovery point for it, or a crash then would open the new log
// beyond its data and skip its recovery.
func TestRecreatedPartitionCheckpointed(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultManagerConfig(dir)
	cfg.Defaults = testConfig()
	m, err := OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tp := TopicPartition{Topic: "again", Partition: 0}
	l, err := m.GetOrCreate(tp, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		mustAppend(t, l, makeBatch(t, 10, 100, record.CodecNone))
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	rp := func() int64 {
		got, err := ReadCheckpoint(vfs.OS, filepath.Join(dir, RecoveryPointCheckpoint))
		if err != nil {
			t.Fatal(err)
		}
		return got[tp]
	}
	if rp() != 100 {
		t.Fatalf("recovery point %d before the deletion, want 100", rp())
	}
	if err := m.Delete(tp); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetOrCreate(tp, testConfig()); err != nil {
		t.Fatal(err)
	}
	if got := rp(); got != 0 {
		t.Fatalf("the re-created partition's recovery point on disk is %d, the deleted log's", got)
	}
}
