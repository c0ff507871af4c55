package log

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"

	"kzero/record"
)

// smallTmpfs mounts a tmpfs of size bytes for the test and returns its
// path; it skips when it cannot (not root).
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillUp writes path until the file system is full.
func fillUp(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

func bigIdempotentBatch(t testing.TB, pid int64, seq int32, n, valueSize int) []byte {
	var b record.Builder
	b.Reset(record.BatchHeader{LastOffsetDelta: -1, ProducerID: pid, ProducerEpoch: 0, BaseSequence: seq, BaseTimestamp: time.Now().UnixMilli()})
	val := bytes.Repeat([]byte{'v'}, valueSize)
	for i := range n {
		b.Add(&record.Record{OffsetDelta: int32(i), Key: []byte("k"), Value: val})
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An append that runs out of space fails with KAFKA_STORAGE_ERROR and
// leaves the log as it was: the same idempotent batch is accepted, at the
// same offset and not as a duplicate, once space is freed, and the log
// never went offline.
func TestAppendOutOfSpaceAndBack(t *testing.T) {
	mnt := smallTmpfs(t, "2m")
	dir := filepath.Join(mnt, "topic-0")
	cfg := testConfig()
	cfg.IndexIntervalBytes = 1 // an index entry per batch: index pages run out too
	l := openTestLog(t, dir, cfg)
	defer func() { l.Close() }()
	seq := int32(0)
	for range 4 {
		mustAppend(t, l, bigIdempotentBatch(t, 7, seq, 4, 1000))
		seq += 4
	}
	filler := filepath.Join(mnt, "filler")
	fillUp(t, filler)

	leo := l.LogEndOffset()
	var refused []byte
	for range 1000 {
		b := bigIdempotentBatch(t, 7, seq, 4, 1000)
		_, err := l.Append(b, OriginClient, 0)
		if err != nil {
			if !errors.Is(err, kerr.KafkaStorageError) {
				t.Fatalf("append on a full file system: %v", err)
			}
			refused = bigIdempotentBatch(t, 7, seq, 4, 1000)
			break
		}
		seq += 4
		leo = l.LogEndOffset()
	}
	if refused == nil {
		t.Fatal("the file system never filled up")
	}
	if l.LogEndOffset() != leo {
		t.Fatalf("a refused append moved the log end from %d to %d", leo, l.LogEndOffset())
	}
	// Refused again while full, without harm.
	if _, err := l.Append(bytes.Clone(refused), OriginClient, 0); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("second append on a full file system: %v", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	info, err := l.Append(refused, OriginClient, 0)
	if err != nil || info.Duplicate || info.FirstOffset != leo {
		t.Fatalf("the refused batch after space was freed: %+v, %v; want it at %d", info, err, leo)
	}
	mustAppend(t, l, bigIdempotentBatch(t, 7, seq+4, 4, 1000))
	checkContiguous(t, l)

	// And the log reopens to the same end.
	end := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openTestLog(t, dir, cfg)
	if l.LogEndOffset() != end {
		t.Fatalf("reopened at %d, want %d", l.LogEndOffset(), end)
	}
	checkContiguous(t, l)
}

// checkContiguous reads the whole log and requires batches that follow
// one another from the log start to the log end, each found by an index
// lookup too.
func checkContiguous(t *testing.T, l *Log) {
	t.Helper()
	next := l.LogStartOffset()
	for next < l.LogEndOffset() {
		r, err := l.Read(next, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("read at %d: %v", next, err)
		}
		data := readRange(t, r)
		r.Segment.Release()
		offs := batchesIn(data)
		if len(offs) == 0 {
			t.Fatalf("read at %d: no whole batch", next)
		}
		for _, o := range offs {
			if o[0] != next {
				t.Fatalf("batch at %d, want %d", o[0], next)
			}
			next = o[1] + 1
		}
	}
	if next != l.LogEndOffset() {
		t.Fatalf("read up to %d, log end %d", next, l.LogEndOffset())
	}
}

// Closing log dirs on a full file system succeeds: what cannot be written
// (checkpoints, snapshots) is skipped with a warning, the dir is not marked
// clean, and the next open recovers the logs with everything appended.
func TestManagerCloseOnFullFileSystem(t *testing.T) {
	mnt := smallTmpfs(t, "1m")
	dir := filepath.Join(mnt, "logs")
	mc := DefaultManagerConfig(dir)
	mc.Defaults = testConfig()
	m, err := OpenManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	tp := TopicPartition{"t", 0}
	l, err := m.GetOrCreate(tp, mc.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustAppend(t, l, bigIdempotentBatch(t, 3, int32(4*i), 4, 1000))
	}
	end := l.LogEndOffset()
	fillUp(t, filepath.Join(mnt, "filler"))
	if err := m.Close(); err != nil {
		t.Fatalf("Close on a full file system: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, cleanShutdownFile)); err == nil {
		t.Fatal("a dir whose checkpoints were not written was marked clean")
	}

	m, err = OpenManager(mc)
	if err != nil {
		t.Fatalf("open on a full file system: %v", err)
	}
	defer m.Close()
	l, ok := m.Get(tp)
	if !ok || l.LogEndOffset() != end {
		t.Fatalf("reopened log: %v, end %d, want %d", ok, l.LogEndOffset(), end)
	}
	checkContiguous(t, l)
	// Producer state came back from the batches: a retry is a duplicate.
	if info, err := l.Append(bigIdempotentBatch(t, 3, 16, 4, 1000), OriginClient, 0); err != nil || !info.Duplicate {
		t.Fatalf("retry of the last batch after the restart: %+v, %v", info, err)
	}
}
