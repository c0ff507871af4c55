package log

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"kzero/record"
	"kzero/vfs"
)

func TestEpochCacheEndOffsetFor(t *testing.T) {
	c := &epochCache{entries: []EpochEntry{{1, 0}, {3, 100}, {5, 250}}}
	for _, tc := range []struct {
		req       int32
		epoch     int32
		endOffset int64
	}{
		{-1, -1, -1}, // undefined
		{0, 0, 0},    // older than every epoch: the start of the first
		{1, 1, 100},  // ends where epoch 3 starts
		{2, 1, 100},  // not in the cache: the largest below it
		{3, 3, 250},  //
		{4, 3, 250},  //
		{5, 5, 300},  // the latest: the log end
		{6, -1, -1},  // newer than the latest
	} {
		e, o := c.endOffsetFor(tc.req, 300)
		if e != tc.epoch || o != tc.endOffset {
			t.Errorf("endOffsetFor(%d) = (%d, %d), want (%d, %d)", tc.req, e, o, tc.epoch, tc.endOffset)
		}
	}
	if e, o := (&epochCache{}).endOffsetFor(0, 10); e != -1 || o != -1 {
		t.Errorf("empty cache: (%d, %d)", e, o)
	}
}

func TestEpochCheckpointFormat(t *testing.T) {
	dir := t.TempDir()
	c, ok := loadEpochCache(vfs.OS, dir)
	if ok {
		t.Fatal("missing file loaded")
	}
	c.assign(0, 0)
	c.assign(4, 17)
	c.assign(2, 30) // older than the latest: ignored
	if err := c.write(true); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, LeaderEpochCheckpoint))
	if string(data) != "0\n2\n0 0\n4 17\n" {
		t.Fatalf("checkpoint file %q", data)
	}
	c2, ok := loadEpochCache(vfs.OS, dir)
	if !ok || !slices.Equal(c2.entries, c.entries) {
		t.Fatalf("reloaded %v", c2.entries)
	}
	for _, bad := range []string{"", "1\n0\n", "0\n2\n0 0\n", "0\n2\n4 17\n0 0\n", "0\n1\nx 0\n", "0\n1\n-1 0\n"} {
		if _, err := parseEpochCheckpoint([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzParseEpochCheckpoint(f *testing.F) {
	f.Add([]byte("0\n2\n0 0\n4 17\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseEpochCheckpoint(data)
		if err != nil {
			return
		}
		for i := 1; i < len(entries); i++ {
			if entries[i].Epoch <= entries[i-1].Epoch || entries[i].StartOffset < entries[i-1].StartOffset {
				t.Fatalf("out of order entries accepted: %v", entries)
			}
		}
	})
}

// The log keeps the cache as batches of new epochs arrive, truncates it
// with the log, and rebuilds it when the file is lost.
func TestLogLeaderEpochs(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	cfg.SegmentBytes = 2 << 10
	l := openTestLog(t, dir, cfg)
	for _, epoch := range []int32{0, 0, 3, 3, 3, 5, 5} { // 10 records each
		if _, err := l.Append(makeBatch(t, 10, 50, record.CodecNone), OriginClient, epoch); err != nil {
			t.Fatal(err)
		}
	}
	want := []EpochEntry{{0, 0}, {3, 20}, {5, 50}}
	if got := l.LeaderEpochs(); !slices.Equal(got, want) {
		t.Fatalf("epochs %v, want %v", got, want)
	}
	if e, o := l.EndOffsetForEpoch(3); e != 3 || o != 50 {
		t.Fatalf("end of epoch 3: (%d, %d)", e, o)
	}
	if e, o := l.EndOffsetForEpoch(5); e != 5 || o != 70 {
		t.Fatalf("end of epoch 5: (%d, %d)", e, o)
	}
	// Truncation drops the epochs that start past the new end.
	if err := l.TruncateTo(45); err != nil {
		t.Fatal(err)
	}
	if got := l.LeaderEpochs(); !slices.Equal(got, []EpochEntry{{0, 0}, {3, 20}}) {
		t.Fatalf("after truncation: %v", got)
	}
	// A new log start moves the first epoch's start.
	if _, err := l.DeleteRecordsBefore(25); err != nil {
		t.Fatal(err)
	}
	if got := l.LeaderEpochs(); !slices.Equal(got, []EpochEntry{{3, 25}}) {
		t.Fatalf("after delete records: %v", got)
	}
	if _, err := l.Append(makeBatch(t, 1, 1, record.CodecNone), OriginClient, 7); err != nil {
		t.Fatal(err)
	}
	l.Close()
	// Reopen from the file (with the log start the manager's checkpoint
	// would give); then lose the file and rebuild from the batches.
	reopen := func() *Log {
		l, err := Open(dir, cfg, OpenOptions{LogStartOffset: 25, CleanShutdown: true})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l = reopen()
	want = []EpochEntry{{3, 25}, {7, 40}}
	if got := l.LeaderEpochs(); !slices.Equal(got, want) {
		t.Fatalf("reopened: %v, want %v", got, want)
	}
	l.Close()
	os.Remove(filepath.Join(dir, LeaderEpochCheckpoint))
	l = reopen()
	defer l.Close()
	if got := l.LeaderEpochs(); !slices.Equal(got, want) {
		t.Fatalf("rebuilt: %v, want %v", got, want)
	}
}

// A new log writes no leader-epoch-checkpoint, nor does an append that
// starts an epoch (a file creation on the event loop); a flush writes and
// syncs it, and so does a roll's background flush before it moves the
// recovery point.
func TestEpochCheckpointWrittenBeforeRecoveryPoint(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	cfg.SegmentBytes = 2 << 10
	l := openTestLog(t, dir, cfg)
	checkpoint := func() ([]EpochEntry, bool) {
		c, ok := loadEpochCache(vfs.OS, dir)
		return c.entries, ok
	}
	if _, ok := checkpoint(); ok {
		t.Fatal("a new log wrote a checkpoint")
	}
	if _, err := l.Append(makeBatch(t, 3, 10, record.CodecNone), OriginClient, 7); err != nil {
		t.Fatal(err)
	}
	if _, ok := checkpoint(); ok {
		t.Fatal("the append wrote the checkpoint")
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if e, ok := checkpoint(); !ok || !slices.Equal(e, []EpochEntry{{7, 0}}) {
		t.Fatalf("checkpoint after the flush: %v %v", e, ok)
	}
	l.mu.Lock()
	unsynced := l.mu.epochUnsynced
	l.mu.Unlock()
	if unsynced {
		t.Fatal("flush left the checkpoint unsynced")
	}
	// Epoch 9, then appends until a roll, whose background flush must
	// write epoch 9 before the recovery point passes offset 3.
	for l.RecoveryPoint() == 3 && len(l.Segments()) == 1 {
		if _, err := l.Append(makeBatch(t, 5, 100, record.CodecNone), OriginClient, 9); err != nil {
			t.Fatal(err)
		}
	}
	l.bg.Wait()
	if l.RecoveryPoint() <= 3 {
		t.Fatalf("recovery point %d after the roll's flush", l.RecoveryPoint())
	}
	if e, ok := checkpoint(); !ok || !slices.Equal(e, []EpochEntry{{7, 0}, {9, 3}}) {
		t.Fatalf("checkpoint after the roll's flush: %v %v", e, ok)
	}
	l.mu.Lock()
	unsynced = l.mu.epochUnsynced
	l.mu.Unlock()
	if unsynced {
		t.Fatal("the roll's flush left the checkpoint unsynced")
	}
}

// After an unclean shutdown the epochs of the batches recovery reads are
// noted, though the checkpoint lacks them, and a checkpoint that names an
// epoch the surviving batches contradict gives way to them.
func TestEpochsRecoveredFromBatches(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	l := openTestLog(t, dir, cfg)
	for _, epoch := range []int32{0, 0, 2} { // 10 records each
		if _, err := l.Append(makeBatch(t, 10, 50, record.CodecNone), OriginClient, epoch); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	// The checkpoint as a power loss could leave it: epoch 0 only, or an
	// epoch 1 from offset 25 that the surviving batches do not hold.
	for _, file := range []string{"0\n1\n0 0\n", "0\n2\n0 0\n1 25\n"} {
		if err := os.WriteFile(filepath.Join(dir, LeaderEpochCheckpoint), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Open(dir, cfg, OpenOptions{RecoveryPoint: 10})
		if err != nil {
			t.Fatal(err)
		}
		want := []EpochEntry{{0, 0}, {2, 20}}
		if got := l.LeaderEpochs(); !slices.Equal(got, want) {
			t.Errorf("checkpoint %q: recovered epochs %v, want %v", file, got, want)
		}
		l.Close()
	}
}
