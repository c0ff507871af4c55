package replica

import (
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
)

// A replica moves to another log dir (AlterReplicaLogDirs) as Kafka's
// ReplicaAlterLogDirsThread moves it: a copier appends the partition's
// batches into a future log in the destination dir (log/future.go) the
// way a follower appends its leader's, so offsets, leader epochs,
// producer state and the transaction index come out the same; once it
// has caught up, it holds the log's writes (log.Log.HoldWrites), copies
// the rest, and the log manager swaps the future log in; a write that
// waited meanwhile finds the old log closed and runs on the new one
// (Partition.write). The partition's
// waiters (purgatories) are on the Partition and stay; a read that holds
// a range of the old log keeps it.

// moveChunk is how much the copier copies at a time (at most).
const moveChunk = 1 << 20

// errSwap marks a failure of the log manager's swap.
var errSwap = errors.New("swap the moved log in")

// move is one partition's move to the log dir dir.
type move struct {
	p   *Partition
	dir string
	fut *log.Log
	// mu orders the copier's appends to fut with the truncations of the
	// current log that fut must follow (truncateFuture).
	mu     sync.Mutex
	failed error // a truncation of fut failed: the move is abandoned. Under mu.
	// swapped: the last step swapped fut in (or tried to); a truncation
	// of the old log done before it is in fut already. Under mu.
	swapped bool
	buf     []byte
	stop    chan struct{}
	done    chan struct{}
}

// AlterLogDir moves a replica's log to the log dir path (one of
// log.dirs): at once when it is there already, else through a future log
// filled in the background. A move elsewhere in progress is abandoned for
// the new one. For a replica this broker does not hold, path becomes the
// dir its log is created in and the answer is REPLICA_NOT_AVAILABLE, as in
// Kafka. Errors wrap LOG_DIR_NOT_FOUND, KAFKA_STORAGE_ERROR or
// REPLICA_NOT_AVAILABLE.
func (m *Manager) AlterLogDir(tp log.TopicPartition, path string) error {
	dir, ok := m.logs.LogDir(path)
	if !ok {
		return fmt.Errorf("log dir %s is not in log.dirs: %w", path, kerr.LogDirNotFound)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.parts[tp]
	if !ok {
		if err, off := m.offline[tp]; off {
			return fmt.Errorf("partition %s is offline: %v: %w", tp, err, kerr.KafkaStorageError)
		}
		m.logs.PreferDir(tp, dir)
		return fmt.Errorf("partition %s is not on this broker: %w", tp, kerr.ReplicaNotAvailable)
	}
	if p.Log().Offline() {
		return fmt.Errorf("partition %s: %w", tp, errLogOffline)
	}
	if mv := p.move.Load(); mv != nil {
		if mv.dir == dir {
			return nil
		}
		mv.cancel()
		if err := m.logs.DeleteFuture(tp); err != nil {
			return fmt.Errorf("abandon the move of %s: %w: %w", tp, err, kerr.KafkaStorageError)
		}
	}
	if cur, _ := m.logs.DirOf(tp); cur == dir {
		return nil
	}
	fut, err := m.logs.CreateFuture(tp, dir, p.Log().Config())
	if err != nil {
		return err
	}
	m.startMove(p, fut, dir)
	return nil
}

// Moving reports the log dir a replica is moving to.
func (m *Manager) Moving(tp log.TopicPartition) (string, bool) {
	p, ok := m.Partition(tp)
	if !ok {
		return "", false
	}
	if mv := p.move.Load(); mv != nil {
		return mv.dir, true
	}
	return "", false
}

// startMove starts the copier of a move into fut.
func (m *Manager) startMove(p *Partition, fut *log.Log, dir string) {
	mv := &move{p: p, dir: dir, fut: fut, stop: make(chan struct{}), done: make(chan struct{})}
	p.move.Store(mv)
	m.cfg.Logger.Info("replica moves to another log dir", "partition", p.TP.String(), "dir", dir)
	go mv.run()
}

// cancel stops the copier and waits for it; the future log stays.
func (mv *move) cancel() {
	select {
	case <-mv.stop:
	default:
		close(mv.stop)
	}
	<-mv.done
	mv.p.move.CompareAndSwap(mv, nil)
}

func (mv *move) stopped() bool {
	select {
	case <-mv.stop:
		return true
	default:
		return false
	}
}

func (mv *move) run() {
	defer close(mv.done)
	p := mv.p
	if err := mv.reconcile(); err != nil {
		mv.abandon(err)
		return
	}
	for !mv.stopped() {
		mv.mu.Lock()
		n, caughtUp, err := mv.copyLocked()
		mv.mu.Unlock()
		if err != nil {
			mv.abandon(err)
			return
		}
		if n > 0 && !caughtUp {
			continue
		}
		// The fsyncs of the swap, done before the writes are held, so
		// that the swap's own have little left to write.
		if err := mv.fut.Flush(); err != nil {
			mv.abandon(err)
			return
		}
		if err := p.Log().Flush(); err != nil {
			mv.abandon(err)
			return
		}
		done, err := mv.finish()
		if err != nil {
			mv.abandon(err)
			return
		}
		if done {
			p.m.cfg.Logger.Info("replica moved to another log dir", "partition", p.TP.String(), "dir", mv.dir)
			return
		}
	}
}

// reconcile cuts a resumed move's future log where it diverges from the
// current log, by leader epoch, as a follower cuts its log: a crash may
// have left it with batches the current log lost and then replaced.
func (mv *move) reconcile() error {
	mv.mu.Lock()
	defer mv.mu.Unlock()
	cur, fut := mv.p.Log(), mv.fut
	if fut.LogEndOffset() == fut.LogStartOffset() {
		return nil
	}
	epochs := fut.LeaderEpochs()
	offset := int64(-1)
	if len(epochs) > 0 {
		last := epochs[len(epochs)-1].Epoch
		e, end := cur.EndOffsetForEpoch(last)
		if e >= 0 && end >= 0 {
			offset = end
			if e < last {
				if fe, fend := fut.EndOffsetForEpoch(e); fe == e {
					offset = min(offset, fend)
				}
			}
		}
	}
	if offset < 0 || offset < fut.LogStartOffset() {
		return fut.TruncateFullyAndStartAt(cur.LogStartOffset())
	}
	if offset < fut.LogEndOffset() {
		return fut.TruncateTo(offset)
	}
	return nil
}

// copyLocked copies a chunk of the current log into the future log, after
// following the current log's start, and reports whether the future log
// reached the log end seen before the copy: what the last step then
// copies with the writes held is only what was appended meanwhile. (A
// chunk ends early at a segment's end, so its size says nothing.) Caller
// holds mv.mu.
func (mv *move) copyLocked() (int64, bool, error) {
	end := mv.p.Log().LogEndOffset()
	n, err := mv.copyChunkLocked(end)
	return n, mv.fut.LogEndOffset() >= end, err
}

func (mv *move) copyChunkLocked(end int64) (int64, error) {
	if mv.failed != nil {
		return 0, mv.failed
	}
	cur, fut := mv.p.Log(), mv.fut
	switch start := cur.LogStartOffset(); {
	case fut.LogEndOffset() < start:
		if err := fut.TruncateFullyAndStartAt(start); err != nil {
			return 0, err
		}
	case start > fut.LogStartOffset():
		if _, err := fut.DeleteRecordsBefore(start); err != nil {
			return 0, err
		}
	}
	if fut.LogEndOffset() > end {
		if err := fut.TruncateTo(end); err != nil {
			return 0, err
		}
	}
	n, buf, err := fut.CopyFrom(cur, end, moveChunk, mv.buf)
	mv.buf = buf
	mv.p.m.stats.movedBytes.Add(n)
	return n, err
}

// finish is the move's last step: with the log's writes held, it copies
// what is left, and the log manager swaps the future log in. It reports
// false when the move was stopped meanwhile.
func (mv *move) finish() (bool, error) {
	p := mv.p
	if mv.stopped() {
		return false, nil
	}
	cur := p.Log()
	cur.HoldWrites()
	// Released once the new log is published: a write held meanwhile
	// finds the old log closed and runs again on the new one.
	defer cur.ReleaseWrites()
	mv.mu.Lock()
	defer mv.mu.Unlock()
	for mv.fut.LogEndOffset() < cur.LogEndOffset() {
		n, _, err := mv.copyLocked()
		if err != nil {
			return false, err
		}
		p.m.stats.moveHeldBytes.Add(n)
		if n == 0 {
			return false, fmt.Errorf("the future log of %s stops at %d, the log ends at %d", p.TP, mv.fut.LogEndOffset(), cur.LogEndOffset())
		}
	}
	if _, _, err := mv.copyLocked(); err != nil { // the log start, and nothing else to copy
		return false, err
	}
	mv.swapped = true
	p.swapping.Store(true)
	defer p.swapping.Store(false) // after the new log is published
	nl, err := p.m.logs.ReplaceWithFuture(p.TP)
	if err != nil {
		return false, fmt.Errorf("%w: %w", errSwap, err)
	}
	nl.SetConfig(cur.Config())
	p.cur.Store(nl)
	// A HW step onHW gave the old log after the swap read it (setHW).
	if hw := cur.HighWatermark(); hw > nl.HighWatermark() {
		nl.OnHighWatermark(hw)
	}
	p.move.CompareAndSwap(mv, nil)
	return true, nil
}

// abandon gives up a move after an error: the future log is deleted and
// the replica stays where it is.
func (mv *move) abandon(err error) {
	p := mv.p
	if mv.stopped() {
		return
	}
	p.move.CompareAndSwap(mv, nil)
	if errors.Is(err, errSwap) {
		// The current log may be closed by now and the future one the
		// only copy: both stay for a restart to settle (log/future.go).
		p.m.cfg.Logger.Error("replica move to another log dir failed in its last step; the replica needs a restart", "partition", p.TP.String(), "dir", mv.dir, "err", err)
		return
	}
	p.m.cfg.Logger.Error("replica move to another log dir abandoned", "partition", p.TP.String(), "dir", mv.dir, "err", err)
	if err := p.m.logs.DeleteFuture(p.TP); err != nil && !errors.Is(err, kerr.KafkaStorageError) {
		p.m.cfg.Logger.Warn("cannot delete an abandoned future log", "partition", p.TP.String(), "err", err)
	}
}

// truncate cuts a follower's log at offset (fully: the log starts over
// there, empty), lowering its HW first when the cut is below it, and a
// moving replica's future log with it. Both steps are on the log the cut
// runs on: a move that swaps the log meanwhile carries over no HW the
// cut lowered, and the cut then runs again on the new log.
func (p *Partition) truncate(offset int64, fully bool) error {
	err := p.write(func(l *log.Log) error {
		if fully {
			return l.TruncateFullyAndStartAt(offset)
		}
		if hw := l.HighWatermark(); offset < hw {
			p.m.cfg.Logger.Warn("follower truncates below its high watermark", "partition", p.TP.String(), "offset", offset, "hw", hw)
			l.OnHighWatermark(offset)
		}
		return l.TruncateTo(offset)
	})
	if err == nil {
		p.truncateFuture(offset, fully)
	}
	return err
}

// truncateFuture makes a moving replica's future log follow a truncation
// of its log to offset (fully: the log starts over there), unless the
// move's last step copied the log after it.
func (p *Partition) truncateFuture(offset int64, fully bool) {
	mv := p.move.Load()
	if mv == nil {
		return
	}
	mv.mu.Lock()
	defer mv.mu.Unlock()
	if mv.swapped {
		return
	}
	var err error
	switch {
	case fully:
		err = mv.fut.TruncateFullyAndStartAt(offset)
	case offset < mv.fut.LogEndOffset():
		err = mv.fut.TruncateTo(offset)
	}
	if err != nil && mv.failed == nil {
		mv.failed = fmt.Errorf("truncate the future log: %w", err)
	}
}
