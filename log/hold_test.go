package log

import (
	"errors"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/record"
)

// awaitHeld waits until n writes wait for ReleaseWrites, and fails if a
// write is done before.
func awaitHeld(t *testing.T, l *Log, n int, done ...chan error) {
	t.Helper()
	for l.HeldWrites() < n {
		for _, c := range done {
			if len(c) > 0 {
				t.Fatalf("a write went on while held: %v", <-c)
			}
		}
		runtime.Gosched()
	}
}

// Held writes (an append, a truncation, DeleteRecordsBefore) change
// nothing until ReleaseWrites, then go on; reads go on meanwhile.
func TestHoldWrites(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	defer l.Close()
	for range 4 {
		mustAppend(t, l, makeBatch(t, 2, 10, record.CodecNone))
	}
	l.HoldWrites()
	appended := make(chan error, 1)
	go func() {
		_, err := l.Append(makeBatch(t, 2, 10, record.CodecNone), OriginClient, 0)
		appended <- err
	}()
	deleted := make(chan error, 1)
	go func() {
		_, err := l.DeleteRecordsBefore(2)
		deleted <- err
	}()
	awaitHeld(t, l, 2, appended, deleted)
	if end, start := l.LogEndOffset(), l.LogStartOffset(); end != 8 || start != 0 {
		t.Fatalf("held: log [%d, %d), want [0, 8)", start, end)
	}
	r, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil || r.Empty() {
		t.Fatalf("read while held: %v", err)
	}
	r.Release()
	l.ReleaseWrites()
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	if end, start := l.LogEndOffset(), l.LogStartOffset(); end != 10 || start != 2 {
		t.Fatalf("released: log [%d, %d), want [2, 10)", start, end)
	}

	l.HoldWrites()
	truncated := make(chan error, 1)
	go func() { truncated <- l.TruncateTo(6) }()
	awaitHeld(t, l, 1, truncated)
	if end := l.LogEndOffset(); end != 10 {
		t.Fatalf("held truncation: log end %d", end)
	}
	l.ReleaseWrites()
	if err := <-truncated; err != nil || l.LogEndOffset() != 6 {
		t.Fatalf("truncation: %v, log end %d", err, l.LogEndOffset())
	}
}

// A write held while the log closes (a move swapped another log in)
// fails as on a closed log once released: KAFKA_STORAGE_ERROR.
func TestHeldWriteOnClosedLog(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	mustAppend(t, l, makeBatch(t, 2, 10, record.CodecNone))
	l.HoldWrites()
	appended := make(chan error, 1)
	go func() {
		_, err := l.Append(makeBatch(t, 2, 10, record.CodecNone), OriginClient, 0)
		appended <- err
	}()
	awaitHeld(t, l, 1, appended)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l.ReleaseWrites()
	if err := <-appended; !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("append on a log closed while held: %v", err)
	}
}
