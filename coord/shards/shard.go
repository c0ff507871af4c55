package shards

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
	"kzero/record"
	"kzero/replica"
)

// Shard is the runtime of one partition a coordinator leads: its
// lifecycle, its lock and its write path. A coordinator's own shard type
// embeds a *Shard and keeps its state beside it, guarded by the Shard's
// lock.
type Shard struct {
	// Partition is the internal topic's partition the shard serves.
	Partition int32

	part    *replica.Partition
	timeout time.Duration
	epoch   atomic.Int32  // the partition's leader epoch when led (or retaken)
	loaded  chan struct{} // closed when the load ended
	// resigned is closed when the shard is resigned, before its lock is
	// taken: a write waiting for the high watermark with the lock held
	// stops waiting.
	resigned chan struct{}
	once     sync.Once

	mu sync.Mutex // guards state, the builder and the coordinator's state
	// The fields below are guarded by mu.
	state State
	build record.Builder
	txnal bool // the batch being built is transactional
	batch []byte
}

func newShard(p *replica.Partition, epoch int32, timeout time.Duration) *Shard {
	s := &Shard{Partition: p.TP.Partition, part: p, timeout: timeout, loaded: make(chan struct{}), resigned: make(chan struct{})}
	s.epoch.Store(epoch)
	return s
}

// Runtime returns s: a coordinator's shard type that embeds *Shard gets it
// and so satisfies Coordinated.
func (s *Shard) Runtime() *Shard { return s }

// Lock locks the shard: its state, its coordinator's state, its writes.
func (s *Shard) Lock() { s.mu.Lock() }

// Unlock unlocks the shard.
func (s *Shard) Unlock() { s.mu.Unlock() }

// LockActive locks the shard if it serves (a background job over a
// coordinator's shards skips the others); otherwise it leaves the shard
// unlocked and returns false.
func (s *Shard) LockActive() bool {
	s.mu.Lock()
	if s.state != Active {
		s.mu.Unlock()
		return false
	}
	return true
}

// StateLocked is the shard's lifecycle state.
func (s *Shard) StateLocked() State { return s.state }

// Active reports whether the shard serves (loaded, not resigned).
func (s *Shard) Active() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == Active
}

// Epoch is the partition's leader epoch the shard serves: the coordinator
// epoch a transaction coordinator stamps on its markers.
func (s *Shard) Epoch() int32 { return s.epoch.Load() }

// Loaded is closed once the shard's load ended (installed, or dropped
// because the shard was resigned or replaced first).
func (s *Shard) Loaded() <-chan struct{} { return s.loaded }

// Replica is the partition the shard serves, for its coordinator to read
// (ScanAll) when loading.
func (s *Shard) Replica() *replica.Partition { return s.part }

// BatchLocked starts a new batch of the shard's records in its builder: a
// plain one, or with a producer id a transactional one of that producer
// (no sequence; the log checks the producer's epoch). It is stamped with
// the wall clock, whatever the coordinator's clock says. Add records to
// the builder returned, then WriteLocked.
func (s *Shard) BatchLocked(producerID int64, producerEpoch int16) *record.Builder {
	s.txnal = producerID != record.NoProducerID
	s.build.Reset(record.BatchHeader{
		BaseTimestamp:   time.Now().UnixMilli(),
		LastOffsetDelta: -1,
		ProducerID:      producerID,
		ProducerEpoch:   producerEpoch,
		BaseSequence:    record.NoSequence,
		Transactional:   s.txnal,
	})
	return &s.build
}

// WriteLocked appends the batch built since BatchLocked to the partition
// and waits until it is committed; it returns the log offset of its first
// record. A plain batch is appended as a client's with acks=all (refused
// below min.insync.replicas); a transactional one as the coordinator's
// own. Errors (append errors, or NOT_LEADER_OR_FOLLOWER when the shard is
// resigned while waiting) wrap the kerr sentinel; GroupError and TxnError
// say what to answer.
func (s *Shard) WriteLocked() (int64, error) {
	batch, err := s.build.AppendTo(s.batch[:0])
	if err != nil {
		return 0, fmt.Errorf("build a batch for %s: %w", s.part.TP, err)
	}
	s.batch = batch[:0]
	var info log.AppendInfo
	if s.txnal {
		info, err = s.part.AppendCoordinator(batch)
	} else {
		info, err = s.part.Append(batch, -1)
	}
	if err != nil {
		return 0, fmt.Errorf("append to %s: %w", s.part.TP, err)
	}
	if err := s.awaitLocked(info.LastOffset + 1); err != nil {
		return 0, err
	}
	return info.FirstOffset, nil
}

// WriteMarkerLocked writes a transaction marker (commit or abort) of a
// producer to the partition, as the coordinator's own append, and waits
// until it is committed. Errors as WriteLocked.
func (s *Shard) WriteMarkerLocked(producerID int64, producerEpoch int16, coordinatorEpoch int32, commit bool) error {
	typ := record.ControlAbort
	if commit {
		typ = record.ControlCommit
	}
	s.batch = record.AppendControlBatch(s.batch[:0], producerID, producerEpoch, coordinatorEpoch, typ, time.Now().UnixMilli())
	info, err := s.part.AppendCoordinator(s.batch)
	s.batch = s.batch[:0]
	if err != nil {
		return fmt.Errorf("write %s marker of producer %d to %s: %w", typ, producerID, s.part.TP, err)
	}
	if err := s.awaitLocked(info.LastOffset + 1); err != nil {
		return fmt.Errorf("%s marker of producer %d: %w", typ, producerID, err)
	}
	return nil
}

// awaitLocked waits until the high watermark reaches end, the timeout
// passes (REQUEST_TIMED_OUT) or the shard is resigned
// (NOT_LEADER_OR_FOLLOWER).
func (s *Shard) awaitLocked(end int64) error {
	ch := make(chan error, 1)
	s.part.Committed(end, s.timeout, func(err error) { ch <- err })
	var err error
	select {
	case err = <-ch:
	case <-s.resigned:
		err = fmt.Errorf("resigned while waiting: %w", kerr.NotLeaderForPartition)
	}
	if err != nil {
		return fmt.Errorf("wait for %s's high watermark to pass %d: %w", s.part.TP, end, err)
	}
	return nil
}

// resign marks the shard resigned: a write waiting stops waiting.
func (s *Shard) resign() { s.once.Do(func() { close(s.resigned) }) }
