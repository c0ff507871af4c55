package log

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"
)

// A log goes offline after an I/O error it cannot undo, as Kafka takes a
// log dir offline (its LogDirFailureChannel): a failed write other than a
// full disk (space.go), a failed fsync, a failed step of the cleaner's swap
// after its commit point, a truncation that failed half way. Offline, the
// log refuses appends, rolls, truncations and flushes with
// KAFKA_STORAGE_ERROR until the broker restarts and Open recovers it
// (Close says the log went offline, so the Manager does not mark its dir
// cleanly shut down). Reads of what was written before keep working from
// the open files here; the replica layer, which decides what a partition
// answers, refuses them as Kafka does (Offline). An fsync is not retried: after
// a failed one Linux may have dropped the dirty pages and report the next
// fsync clean, so the data's fate is unknown.

// errOffline is the answer to appends to a log that went offline, and
// Close's: the log dir was not shut down cleanly.
var errOffline = fmt.Errorf("log went offline after an I/O error: %w", kerr.KafkaStorageError)

// goOfflineLocked takes the log offline after err; what says which
// operation failed. Writer lock held.
func (l *Log) goOfflineLocked(what string, err error) {
	if !l.mu.closed {
		l.logger.Error(what+": log goes offline", "dir", l.dir, "err", err)
		l.mu.closed, l.mu.offline = true, true
		if !l.wentOffline.Swap(true) && l.offlineCount != nil {
			l.offlineCount.Add(1)
		}
	}
}

// forgetOffline takes the log out of its Manager's offline count: it left
// the Manager (deleted). The count stays exact because the log stops
// counting itself before it checks whether it went offline.
func (l *Log) forgetOffline() {
	if c := l.offlineCount; c != nil {
		l.mu.Lock()
		l.offlineCount = nil
		if l.wentOffline.Load() {
			c.Add(-1)
		}
		l.mu.Unlock()
	}
}

// Offline reports whether an I/O error took the log offline: the replica
// layer then answers KAFKA_STORAGE_ERROR for it, reads included, as Kafka
// does for a replica on an offline log dir.
func (l *Log) Offline() bool { return l.wentOffline.Load() }

// releaseOfflineLocked closes the files of an offline log: Close of a log
// that went offline. Writer lock held.
func (l *Log) releaseOfflineLocked() {
	l.mu.offline = false
	for _, s := range l.Segments() {
		s.Release()
	}
}

// fsyncFailed reports whether a Sync error is the disk's: not a segment
// that went away meanwhile, nor a file that could not be reopened for lack
// of descriptors.
func fsyncFailed(err error) bool {
	return !errors.Is(err, errSegmentGone) && !errors.Is(err, unix.EMFILE) && !errors.Is(err, unix.ENFILE)
}

// truncateFailedLocked takes the log offline after a truncation failed
// half way and returns err for the caller. Writer lock held.
func (l *Log) truncateFailedLocked(err error) error {
	err = fmt.Errorf("truncate log: %w: %w", err, kerr.KafkaStorageError)
	l.goOfflineLocked("truncation failed", err)
	return err
}
