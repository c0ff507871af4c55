package log

import (
	"bytes"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"

	"kzero/record"
	"kzero/vfs/errorfs"
)

// Faults injected through the FS seam (errorfs_test.go): what a log does
// when the disk fails under it, beyond a full disk (space_test.go).

// logBytes returns every byte of the log from its start to its end.
func logBytes(t *testing.T, l *Log) []byte {
	t.Helper()
	var out []byte
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		r, err := l.Read(off, 1<<30, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		buf := readRange(t, r)
		r.Release()
		bs := batchesIn(buf)
		if len(bs) == 0 {
			t.Fatalf("read at %d: no whole batch", off)
		}
		out = append(out, buf...)
		off = bs[len(bs)-1][1] + 1
	}
	return out
}

func mustStorageError(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("%s: %v, want KAFKA_STORAGE_ERROR", what, err)
	}
}

func faultManager(t *testing.T, fs FS, dirs ...string) *Manager {
	t.Helper()
	cfg := DefaultManagerConfig(dirs...)
	cfg.Defaults = testConfig()
	cfg.Defaults.FS = fs
	cfg.Logger = slog.New(slog.DiscardHandler)
	m, err := OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// twoLogs creates the partitions a-0 and b-0 in m.
func twoLogs(t *testing.T, m *Manager) (tpA TopicPartition, a, b *Log) {
	t.Helper()
	tpA = TopicPartition{Topic: "a", Partition: 0}
	a, err := m.GetOrCreate(tpA, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if b, err = m.GetOrCreate(TopicPartition{Topic: "b", Partition: 0}, testConfig()); err != nil {
		t.Fatal(err)
	}
	return tpA, a, b
}

// openQuiet opens the log in dir with cfg, logging nothing.
func openQuiet(t *testing.T, dir string, cfg Config) *Log {
	t.Helper()
	l, err := Open(dir, cfg, OpenOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A write the disk refuses (not for lack of space) takes the log offline:
// that append and every later one fail with KAFKA_STORAGE_ERROR, even once
// the disk works again, and so do rolls and flushes; what was written
// before stays readable; the Manager's other logs keep working. The broker
// restart recovers the log (its dir was not marked clean) and it takes
// appends again.
func TestWriteFailureTakesLogOffline(t *testing.T) {
	efs := &errorfs.FS{}
	dir := t.TempDir()
	m := faultManager(t, efs, dir)
	tpA, a, b := twoLogs(t, m)
	for range 3 {
		mustAppend(t, a, makeBatch(t, 5, 100, record.CodecNone))
		mustAppend(t, b, makeBatch(t, 5, 100, record.CodecNone))
	}
	before := logBytes(t, a)

	restore := efs.Opened(t, a.active().path).BreakWrites(t, "")
	_, err := a.Append(makeBatch(t, 5, 100, record.CodecNone), OriginClient, 0)
	mustStorageError(t, "append with failing writes", err)
	restore() // the disk works again; the log stays offline
	_, err = a.Append(makeBatch(t, 5, 100, record.CodecNone), OriginClient, 0)
	mustStorageError(t, "append to an offline log", err)
	if n := m.OfflineLogs(); n != 1 {
		t.Fatalf("OfflineLogs = %d with one log offline, want 1", n)
	}
	mustStorageError(t, "roll of an offline log", a.Roll())
	mustStorageError(t, "flush of an offline log", a.Flush())
	mustStorageError(t, "truncation of an offline log", a.TruncateTo(5))
	if a.LogEndOffset() != 15 {
		t.Fatalf("log end offset %d after failed appends, want 15", a.LogEndOffset())
	}
	if got := logBytes(t, a); !bytes.Equal(got, before) {
		t.Fatal("an offline log reads differently")
	}

	// The other log of the Manager is unaffected.
	if info := mustAppend(t, b, makeBatch(t, 5, 100, record.CodecNone)); info.FirstOffset != 15 {
		t.Fatalf("other log appended at %d", info.FirstOffset)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(batchesIn(logBytes(t, b))); n != 4 {
		t.Fatalf("other log reads %d batches, want 4", n)
	}

	if n := m.OfflineLogs(); n != 1 {
		t.Fatalf("OfflineLogs = %d after more failures of the same log, want 1", n)
	}
	mustStorageError(t, "Manager.Close with an offline log", m.Close())
	m = faultManager(t, nil, dir)
	defer m.Close()
	if m.ClosedCleanly() {
		t.Fatal("a log dir with an offline log was marked cleanly shut down")
	}
	a, _ = m.Get(tpA)
	if got := logBytes(t, a); !bytes.Equal(got, before) {
		t.Fatal("the log reads differently after the restart")
	}
	if info := mustAppend(t, a, makeBatch(t, 5, 100, record.CodecNone)); info.FirstOffset != 15 {
		t.Fatalf("append after the restart at %d, want 15", info.FirstOffset)
	}
	if n := m.OfflineLogs(); n != 0 {
		t.Fatalf("OfflineLogs = %d after the restart, want 0", n)
	}
}

// A deleted offline log leaves the Manager's offline count.
func TestDeletedOfflineLogUncounted(t *testing.T) {
	efs := &errorfs.FS{}
	m := faultManager(t, efs, t.TempDir())
	defer m.Close()
	tp := TopicPartition{Topic: "a", Partition: 0}
	a, err := m.GetOrCreate(tp, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, a, makeBatch(t, 5, 100, record.CodecNone))
	restore := efs.Opened(t, a.active().path).BreakWrites(t, "")
	_, err = a.Append(makeBatch(t, 5, 100, record.CodecNone), OriginClient, 0)
	mustStorageError(t, "append with failing writes", err)
	restore()
	if n := m.OfflineLogs(); n != 1 {
		t.Fatalf("OfflineLogs = %d, want 1", n)
	}
	if err := m.Delete(tp); err != nil {
		t.Fatal(err)
	}
	if n := m.OfflineLogs(); n != 0 {
		t.Fatalf("OfflineLogs = %d after the offline log was deleted, want 0", n)
	}
}

// A failed fsync takes the log offline, as Kafka takes the log dir
// offline: after a failed fsync the kernel may have dropped the dirty
// pages, so retrying cannot say whether the data is on disk. Whether the
// fsync was asked for by flush.messages (the append that asked fails), by
// Flush, or by the background flush of a rolled segment (the recovery
// point stays below it).
func TestFsyncFailureTakesLogOffline(t *testing.T) {
	for _, tc := range []string{"flush.messages", "Flush", "roll"} {
		t.Run(tc, func(t *testing.T) {
			efs := &errorfs.FS{}
			cfg := testConfig()
			cfg.FS = efs
			if tc == "flush.messages" {
				cfg.FlushMessages = 10
			}
			dir := t.TempDir()
			l, err := Open(dir, cfg, OpenOptions{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			mustAppend(t, l, makeBatch(t, 5, 100, record.CodecNone))
			before := logBytes(t, l)
			efs.FailSyncs(LogSuffix, unix.EIO)
			switch tc {
			case "flush.messages":
				_, err := l.Append(makeBatch(t, 5, 100, record.CodecNone), OriginClient, 0)
				mustStorageError(t, "append whose fsync failed", err)
				// The records are in the log (Kafka's too: the flush follows the
				// write) but were not acknowledged.
				before = logBytes(t, l)
			case "Flush":
				if err := l.Flush(); !errors.Is(err, unix.EIO) {
					t.Fatalf("Flush: %v, want EIO", err)
				}
			case "roll":
				if err := l.Roll(); err != nil {
					t.Fatal(err)
				}
				l.bg.Wait() // the sealed segment's background fsync
				if rp := l.RecoveryPoint(); rp != 0 {
					t.Fatalf("recovery point %d past a segment whose fsync failed", rp)
				}
			}
			efs.FailSyncs(LogSuffix, nil)
			_, err = l.Append(makeBatch(t, 5, 100, record.CodecNone), OriginClient, 0)
			mustStorageError(t, "append after a failed fsync", err)
			if got := logBytes(t, l); !bytes.Equal(got, before) {
				t.Fatal("the log reads differently")
			}
		})
	}
}

// A roll that cannot create the new segment: for lack of space the log
// lives through it (the append fails, the next one once there is room
// rolls and goes through at the same offset); for another I/O error the
// log goes offline. Either way a restart finds every acknowledged record.
func TestFailedRoll(t *testing.T) {
	for _, tc := range []struct {
		err     error
		offline bool
	}{{unix.ENOSPC, false}, {unix.EIO, true}} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			efs := &errorfs.FS{}
			cfg := testConfig()
			cfg.FS = efs
			cfg.SegmentBytes = 2000 // two batches a segment
			dir := t.TempDir()
			open := func() *Log { return openQuiet(t, dir, cfg) }
			l := open()
			for range 2 {
				mustAppend(t, l, makeBatch(t, 5, 150, record.CodecNone))
			}
			before := logBytes(t, l)
			efs.FailOpens(LogSuffix, tc.err)
			_, err := l.Append(makeBatch(t, 5, 150, record.CodecNone), OriginClient, 0)
			mustStorageError(t, "append whose roll failed", err)
			efs.FailOpens(LogSuffix, nil)
			if len(l.Segments()) != 1 || l.LogEndOffset() != 10 {
				t.Fatalf("after a failed roll: %d segments, log end %d", len(l.Segments()), l.LogEndOffset())
			}
			if got := logBytes(t, l); !bytes.Equal(got, before) {
				t.Fatal("the log reads differently after a failed roll")
			}
			info, err := l.Append(makeBatch(t, 5, 150, record.CodecNone), OriginClient, 0)
			if tc.offline {
				mustStorageError(t, "append after a failed roll", err)
			} else {
				if err != nil || info.FirstOffset != 10 || len(l.Segments()) != 2 {
					t.Fatalf("append once there is room: %+v, %v, %d segments", info, err, len(l.Segments()))
				}
				before = logBytes(t, l)
			}
			if err := l.Close(); (err != nil) != tc.offline {
				t.Fatalf("Close: %v", err)
			}
			l = open()
			defer l.Close()
			if got := logBytes(t, l); !bytes.Equal(got, before) {
				t.Fatal("the log reads differently after a restart")
			}
		})
	}
}

// A cleaner pass that fails leaves the log readable and whole: out of
// space writing the cleaned segment, or failing to rename it into the swap
// (before the commit point), it gives up, removes its files and the log
// goes on; failing after the commit point the log goes offline and the
// next Open completes the swap. Reopened, the log holds what it held, or
// what the clean would have made of it.
func TestCleanerFaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		arm     func(t *testing.T, efs *errorfs.FS, dir string)
		offline bool
	}{
		{"ENOSPC writing the cleaned segment", func(t *testing.T, efs *errorfs.FS, _ string) {
			efs.OnOpen(LogSuffix+CleanedSuffix, func(f *errorfs.File) { f.BreakWrites(t, "/dev/full") })
		}, false},
		{"rename to swap", func(t *testing.T, efs *errorfs.FS, _ string) {
			efs.FailRenames(LogSuffix+SwapSuffix, unix.EIO)
		}, false},
		{"folder fsync at the commit point", func(t *testing.T, efs *errorfs.FS, dir string) {
			efs.FailSyncs(dir, unix.EIO) // the folder's name: no file in it ends so
		}, true},
		{"rename of a replaced segment's index to deleted", func(t *testing.T, efs *errorfs.FS, _ string) {
			efs.FailRenames(IndexSuffix+DeletedSuffix, unix.EIO)
		}, true},
		{"rename from swap", func(t *testing.T, efs *errorfs.FS, _ string) {
			efs.FailRenames(LogSuffix, unix.EIO)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			efs := &errorfs.FS{}
			clk := newClock()
			cfg := clConfig(clk)
			cfg.FS = efs
			dir := t.TempDir()
			l, err := Open(dir, cfg, OpenOptions{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			fillKeys(t, l, clk, record.CodecNone, 300, 10, 40)
			before, _ := clReadAll(t, l)

			tc.arm(t, efs, dir)
			c := clCleaner(1 << 20)
			p, ok := c.plan(l)
			if !ok {
				t.Fatal("nothing to clean")
			}
			if _, err := c.cleanLog(&p); err == nil {
				t.Fatal("clean succeeded")
			}
			got, _ := clReadAll(t, l)
			sameRecords(t, "after the failed clean", got, before)
			_, err = l.Append(clBatch(t, record.CodecNone, clk.Ms(), kv{k: "k0", v: "new"}), OriginClient, 0)
			if tc.offline {
				mustStorageError(t, "append after a failed swap", err)
			} else if err != nil {
				t.Fatalf("append after a failed clean: %v", err)
			} else {
				for _, pat := range []string{"*" + CleanedSuffix, "*" + SwapSuffix} {
					if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) > 0 {
						t.Fatalf("left over: %v", m)
					}
				}
				before, _ = clReadAll(t, l)
			}
			efs.Disarm()
			if err := l.Close(); (err != nil) != tc.offline {
				t.Fatalf("Close: %v", err)
			}
			l, err = Open(dir, cfg, OpenOptions{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			got, _ = clReadAll(t, l)
			if !tc.offline {
				sameRecords(t, "reopened", got, before)
				return
			}
			// The swap was completed: part of the log may be cleaned.
			compactedFrom(t, "reopened", got, before)
			if len(got) >= len(before) {
				t.Fatalf("reopened: %d records of %d: the swap was not completed", len(got), len(before))
			}
		})
	}
}

// A cleaner pass on a full file system (a real one: a small tmpfs) fails
// for lack of space, removes what it wrote and leaves the log as it was;
// once space is freed the log takes appends, and reopened it reads the
// same.
func TestCleanerOutOfSpace(t *testing.T) {
	mnt := smallTmpfs(t, "1m")
	dir := filepath.Join(mnt, "topic-0")
	clk := newClock()
	cfg := clConfig(clk)
	l, err := Open(dir, cfg, OpenOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	fillKeys(t, l, clk, record.CodecNone, 300, 10, 40)
	before, _ := clReadAll(t, l)
	filler := filepath.Join(mnt, "filler")
	fillUp(t, filler)

	c := clCleaner(1 << 20)
	p, ok := c.plan(l)
	if !ok {
		t.Fatal("nothing to clean")
	}
	if _, err := c.cleanLog(&p); !noSpace(err) {
		t.Fatalf("clean on a full file system: %v, want ENOSPC", err)
	}
	// The groups before the one that ran out of space were swapped in.
	got, _ := clReadAll(t, l)
	compactedFrom(t, "after the failed clean", got, before)
	for _, pat := range []string{"*" + CleanedSuffix, "*" + SwapSuffix} {
		if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) > 0 {
			t.Fatalf("left over: %v", m)
		}
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	clAppend(t, l, clBatch(t, record.CodecNone, clk.Ms(), kv{k: "k0", v: "after"}))
	before, _ = clReadAll(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(dir, cfg, OpenOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, _ = clReadAll(t, l)
	sameRecords(t, "reopened", got, before)
}

// compactedFrom fails the test unless got is what compaction may make of
// before: every record read was written at that offset, and each key's
// latest record is there.
func compactedFrom(t *testing.T, what string, got, before []clRec) {
	t.Helper()
	byOff := map[int64]clRec{}
	for _, r := range before {
		byOff[r.off] = r
	}
	for _, r := range got {
		if r != byOff[r.off] {
			t.Fatalf("%s: %v was never written", what, r)
		}
	}
	if g, w := clLatest(got), clLatest(before); !maps.Equal(g, w) {
		t.Fatalf("%s: latest records %v, want %v", what, g, w)
	}
}

// A read the disk fails is answered with that error, wrapped: no panic,
// no retry loop, and the log stays as it was (a failed read changes
// nothing on disk, so unlike a failed write it does not take the log
// offline); once the disk reads again so does the log.
func TestReadFailure(t *testing.T) {
	efs := &errorfs.FS{}
	cfg := testConfig()
	cfg.FS = efs
	dir := t.TempDir()
	l, err := Open(dir, cfg, OpenOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// More batches than the segment locates without reading (recent.go),
	// so that the read at 5 reads headers.
	for range recentSlots + 3 {
		mustAppend(t, l, makeBatch(t, 5, 100, record.CodecNone))
	}
	before := logBytes(t, l)
	restore := efs.Opened(t, l.active().path).BreakWrites(t, dir)
	if _, err := l.Read(5, 1<<20, l.LogEndOffset(), true); !errors.Is(err, unix.EISDIR) {
		t.Fatalf("read from a failing disk: %v, want EISDIR", err)
	}
	restore()
	if got := logBytes(t, l); !bytes.Equal(got, before) {
		t.Fatal("the log reads differently after a failed read")
	}
	if info := mustAppend(t, l, makeBatch(t, 5, 100, record.CodecNone)); info.FirstOffset != 5*(recentSlots+3) {
		t.Fatalf("append after a failed read at %d", info.FirstOffset)
	}
}

// Close whose own fsync fails says so, takes the log offline and closes
// its files once: a second Close and a Delete find nothing left to close.
func TestCloseFsyncFailure(t *testing.T) {
	efs := &errorfs.FS{}
	cfg := testConfig()
	cfg.FS = efs
	dir := t.TempDir()
	l, err := Open(dir, cfg, OpenOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, makeBatch(t, 5, 100, record.CodecNone))
	seg := l.active()
	efs.FailSyncs(LogSuffix, unix.EIO)
	if err := l.Close(); !errors.Is(err, unix.EIO) {
		t.Fatalf("Close with a failing fsync: %v, want EIO", err)
	}
	if refs := seg.state.Load() & refMask; refs != 0 {
		t.Fatalf("the active segment holds %d references after Close", refs)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := l.Delete(); err != nil {
		t.Fatal(err)
	}
	if refs := seg.state.Load() & refMask; refs != 0 {
		t.Fatalf("%d references after Delete", refs)
	}
}

// TestSyncOfDeletedSegmentKeepsLogOnline: the background fsync of sealed
// segments skips one deleted meanwhile whose files are gone (two deleted
// generations of one base offset, a segment and the cleaned one that
// replaced it, share their .deleted names: the first removed takes the
// other's index files): the log stays online. It went offline, failing
// TestCleanOffsetMapFull once under -race ("open ...timeindex.deleted to
// fsync: no such file or directory", then "cleaning aborted").
func TestSyncOfDeletedSegmentKeepsLogOnline(t *testing.T) {
	cfg := testConfig()
	cfg.FileDeleteDelayMs = 60_000 // the log's reference stays: only the files go
	l := openTestLog(t, t.TempDir(), cfg)
	defer l.Close()
	for range 3 {
		mustAppend(t, l, makeBatch(t, 5, 100, record.CodecNone))
	}
	old := l.active()
	old.acquire()
	defer old.Release()
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, makeBatch(t, 5, 100, record.CodecNone))
	l.mu.Lock()
	err := old.markDeleted(time.Duration(cfg.FileDeleteDelayMs) * time.Millisecond)
	l.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	// The other generation's removal took this one's time index; its
	// length changed since its last fsync, so a sync opens it by name.
	old.tindex.MaybeAppend(time.Now().UnixMilli()+1000, 14)
	if err := os.Remove(old.tindex.Path()); err != nil {
		t.Fatal(err)
	}
	l.recoveryPoint.Store(0)
	l.syncSealedUpTo(old)
	if l.Offline() {
		t.Fatal("the log went offline over the fsync of a deleted segment")
	}
}
