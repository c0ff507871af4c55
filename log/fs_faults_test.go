package log

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"kzero/record"
	"kzero/vfs"
	"kzero/vfs/errorfs"
)

// Faults in the files around the segments, which go through the FS seam
// too (fs.go): checkpoints, producer snapshots, txn indexes.

// A log dir whose checkpoint cannot be written (a torn write, a failed
// fsync or rename) keeps its older checkpoint, whole, and goes offline as
// Kafka takes the dir offline: its logs answer KAFKA_STORAGE_ERROR, the
// other dir's logs keep serving. Out of space it only keeps the older file.
// A restart finds every record.
func TestCheckpointWriteFailure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		arm     func(efs *errorfs.FS, file string)
		offline bool
	}{
		{"torn write", func(efs *errorfs.FS, file string) { efs.FailWrites(file+".tmp", 7, unix.EIO) }, true},
		{"fsync", func(efs *errorfs.FS, file string) { efs.FailSyncs(file+".tmp", unix.EIO) }, true},
		{"rename", func(efs *errorfs.FS, file string) { efs.FailRenames(file, unix.EIO) }, true},
		{"ENOSPC", func(efs *errorfs.FS, file string) { efs.FailWrites(file+".tmp", 7, unix.ENOSPC) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			efs := &errorfs.FS{}
			dirs := []string{t.TempDir(), t.TempDir()}
			m := faultManager(t, efs, dirs...)
			tpA, a, b := twoLogs(t, m)
			dirA := m.mu.dirOf[tpA]
			if dirA == m.mu.dirOf[TopicPartition{Topic: "b", Partition: 0}] {
				t.Fatal("both partitions in one log dir")
			}
			mustAppend(t, a, makeBatch(t, 5, 100, record.CodecNone))
			mustAppend(t, b, makeBatch(t, 5, 100, record.CodecNone))
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := m.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dirA, RecoveryPointCheckpoint)
			old, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}

			mustAppend(t, a, makeBatch(t, 5, 100, record.CodecNone))
			if err := a.Flush(); err != nil { // the recovery point moves: the new file differs
				t.Fatal(err)
			}
			tc.arm(efs, file)
			if err := m.Checkpoint(); err == nil {
				t.Fatal("checkpoint succeeded")
			}
			if got, err := os.ReadFile(file); err != nil || string(got) != string(old) {
				t.Fatalf("checkpoint file after the failure: %q %v, want the older %q", got, err, old)
			}
			if cp, err := ReadCheckpoint(vfs.OS, file); err != nil || cp[tpA] != 5 {
				t.Fatalf("older checkpoint reads %v %v, want %s at 5", cp, err, tpA)
			}
			if _, err := os.Stat(file + ".tmp"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("temporary checkpoint left: %v", err)
			}
			_, err = a.Append(makeBatch(t, 5, 100, record.CodecNone), OriginClient, 0)
			if tc.offline {
				mustStorageError(t, "append to a log of the failed dir", err)
				if !a.Offline() || m.OfflineLogs() != 1 {
					t.Fatalf("Offline %v, OfflineLogs %d, want the failed dir's log offline", a.Offline(), m.OfflineLogs())
				}
			} else if err != nil || a.Offline() {
				t.Fatalf("append after a full disk's failed checkpoint: %v (offline %v)", err, a.Offline())
			}
			mustAppend(t, b, makeBatch(t, 5, 100, record.CodecNone)) // the other dir serves

			efs.Disarm()
			wantEnd := a.LogEndOffset()
			if err := m.Close(); (err != nil) != tc.offline {
				t.Fatalf("Close: %v", err)
			}
			m = faultManager(t, nil, dirs...)
			defer m.Close()
			if m.ClosedCleanly() == tc.offline {
				t.Fatalf("ClosedCleanly %v with a dir that went offline: %v", m.ClosedCleanly(), tc.offline)
			}
			a, _ = m.Get(tpA)
			if a.LogEndOffset() != wantEnd || len(batchesIn(logBytes(t, a))) != int(wantEnd/5) {
				t.Fatalf("reopened: log end %d, want %d", a.LogEndOffset(), wantEnd)
			}
			mustAppend(t, a, makeBatch(t, 5, 100, record.CodecNone))
		})
	}
}

// faultLog returns an errorfs, a log config writing through it, and a
// folder for the log.
func faultLog(t *testing.T) (*errorfs.FS, Config, string) {
	efs := &errorfs.FS{}
	cfg := testConfig()
	cfg.FS = efs
	return efs, cfg, t.TempDir()
}

// A producer snapshot whose rename fails leaves no file, temporary or
// torn, and the older snapshots as they were; the roll goes on, and so do
// appends. A restart rebuilds the producer state from the older snapshot
// and the batches: a retried batch is still a duplicate.
func TestProducerSnapshotRenameFailure(t *testing.T) {
	efs, cfg, dir := faultLog(t)
	l := openQuiet(t, dir, cfg)
	mustAppend(t, l, idempotentBatch(t, 7, 0, 0, 5))
	if err := l.Roll(); err != nil { // the snapshot at 5
		t.Fatal(err)
	}
	l.bg.Wait()
	older, err := os.ReadFile(SnapshotPath(dir, 5))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, idempotentBatch(t, 7, 0, 5, 5))

	efs.FailRenames(SnapshotSuffix, unix.EIO)
	if err := l.Roll(); err != nil { // its snapshot at 10 fails; the roll does not
		t.Fatal(err)
	}
	l.bg.Wait()
	last := mustAppend(t, l, idempotentBatch(t, 7, 0, 10, 5))
	if err := l.Close(); !errors.Is(err, unix.EIO) { // its snapshot at 15 fails too
		t.Fatalf("Close: %v, want the snapshot's EIO", err)
	}
	for _, pat := range []string{"*" + SnapshotSuffix, "*" + snapshotTempSuffix} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		if want := pat == "*"+SnapshotSuffix; len(m) != map[bool]int{true: 1, false: 0}[want] {
			t.Fatalf("%s: %v, want only the older snapshot", pat, m)
		}
	}
	if got, err := os.ReadFile(SnapshotPath(dir, 5)); err != nil || string(got) != string(older) {
		t.Fatalf("older snapshot changed: %v", err)
	}

	efs.Disarm()
	l = openQuiet(t, dir, cfg)
	defer l.Close()
	if d := mustAppend(t, l, idempotentBatch(t, 7, 0, 10, 5)); !d.Duplicate || d.FirstOffset != last.FirstOffset {
		t.Fatalf("retry after the restart: %+v, want a duplicate of %+v", d, last)
	}
	mustAppend(t, l, idempotentBatch(t, 7, 0, 15, 1))
}

// A txn index entry torn by a failed write, the torn bytes left in the file
// (the truncation that would cut them fails too, as if the broker crashed
// between the two), fails the abort marker's append. Reopened, the log
// recovers the damaged index from the segment's markers (it would not open
// before): it lists the aborted transactions the log holds.
func TestTornTxnIndexWrite(t *testing.T) {
	efs, cfg, dir := faultLog(t)
	l := openQuiet(t, dir, cfg)
	mustAppend(t, l, txnBatch(t, 1, 0, 3)) // 0-2
	if _, err := l.Append(record.AppendControlBatch(nil, 1, 0, 0, record.ControlAbort, 1), OriginCoordinator, 0); err != nil {
		t.Fatal(err) // 3
	}
	mustAppend(t, l, txnBatch(t, 2, 0, 2)) // 4-5
	want := []AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 3, LastStableOffset: 4}}
	if got, err := l.AbortedTxns(nil, 0, l.LogEndOffset()); err != nil || len(got) != 1 || got[0] != want[0] {
		t.Fatalf("aborted txns: %+v %v, want %+v", got, err, want)
	}

	efs.FailWrites(TxnIndexSuffix, 10, unix.EIO)
	efs.FailTruncates(TxnIndexSuffix, unix.EIO)
	_, err := l.Append(record.AppendControlBatch(nil, 2, 0, 0, record.ControlAbort, 1), OriginCoordinator, 0)
	mustStorageError(t, "abort marker with a torn txn index write", err)
	path := segmentPath(dir, 0, TxnIndexSuffix)
	if st, err := os.Stat(path); err != nil || st.Size() != txnEntrySize+10 {
		t.Fatalf("txn index after the torn write: %v %v, want %d bytes", st, err, txnEntrySize+10)
	}
	efs.Disarm()
	end := l.LogEndOffset()
	if end != 6 {
		t.Fatalf("log end %d after the failed marker, want 6: the marker is not in the log", end)
	}
	l.Close()

	l, err = Open(dir, cfg, OpenOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("reopen with a torn txn index: %v", err)
	}
	defer l.Close()
	if l.LogEndOffset() != end {
		t.Fatalf("reopened: log end %d, want %d", l.LogEndOffset(), end)
	}
	got, err := l.AbortedTxns(nil, 0, l.LogEndOffset())
	if err != nil || len(got) != len(want) {
		t.Fatalf("aborted txns after reopen: %+v %v, want %+v", got, err, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("aborted txns after reopen: %+v, want %+v", got, want)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Size()%txnEntrySize != 0 {
		t.Fatalf("txn index after reopen: %v %v, want whole entries", st, err)
	}
}
