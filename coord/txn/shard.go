package txn

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
	"kzero/record"
	"kzero/replica"
)

// shardState is a shard's lifecycle.
type shardState int8

const (
	shardLoading shardState = iota
	shardActive
	shardClosed
)

// shard is the transactional ids of one __transaction_state partition
// this broker leads. Its mutex guards them and the partition's writes.
type shard struct {
	c                *Coordinator
	id               int32
	part             *replica.Partition
	coordinatorEpoch int32 // the partition's leader epoch, stamped on markers
	loaded           chan struct{}

	mu struct {
		sync.Mutex
		state   shardState
		txns    map[string]*txnMeta
		build   record.Builder
		batch   []byte
		scratch []byte
	}
}

func newShard(c *Coordinator, p *replica.Partition) *shard {
	s := &shard{c: c, id: p.TP.Partition, part: p, coordinatorEpoch: p.LeaderEpoch(), loaded: make(chan struct{})}
	s.mu.txns = map[string]*txnMeta{}
	return s
}

// writeLocked stores a transactional id's new state (nil: a tombstone) and,
// once written, makes it current. An error is the Kafka error to answer
// with (Kafka's mapping of append failures for the transaction log).
func (s *shard) writeLocked(id string, m *txnMeta) *kerr.Error {
	s.mu.scratch = appendKey(s.mu.scratch[:0], id)
	k := len(s.mu.scratch)
	rec := record.Record{Key: s.mu.scratch[:k]}
	if m != nil {
		s.mu.scratch = appendValue(s.mu.scratch, m)
		rec.Key, rec.Value = s.mu.scratch[:k], s.mu.scratch[k:]
	}
	b := &s.mu.build
	b.Reset(record.BatchHeader{
		BaseTimestamp:   time.Now().UnixMilli(),
		LastOffsetDelta: -1,
		ProducerID:      record.NoProducerID,
		ProducerEpoch:   record.NoProducerEpoch,
		BaseSequence:    record.NoSequence,
	})
	b.Add(&rec)
	batch, err := b.AppendTo(s.mu.batch[:0])
	if err == nil {
		s.mu.batch = batch[:0]
		var info log.AppendInfo
		if info, err = s.part.Append(batch, -1); err == nil {
			err = s.part.WaitCommitted(info.LastOffset+1, commitTimeout)
		}
	}
	if err != nil {
		s.c.logger.Warn("cannot write transaction state", "transactional_id", id, "partition", s.id, "err", err)
		return storeError(err)
	}
	if m == nil {
		delete(s.mu.txns, id)
		return nil
	}
	if cur := s.mu.txns[id]; cur == nil {
		m.id = strings.Clone(id)
	}
	s.mu.txns[m.id] = m
	return nil
}

// storeError is what a client is told when the transaction log cannot be
// written, as Kafka maps it.
func storeError(err error) *kerr.Error {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.NotCoordinator // the partition's storage failed
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return kerr.CoordinatorNotAvailable
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return kerr.NotCoordinator
	}
	return kerr.UnknownServerError
}

// close ends the shard; marker writers of its transactions stop retrying.
func (s *shard) close() {
	s.mu.Lock()
	s.mu.state = shardClosed
	s.mu.txns = map[string]*txnMeta{}
	s.mu.Unlock()
}

// active reports whether the shard still serves (not closed).
func (s *shard) active() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.state == shardActive
}

// load rebuilds the shard's transactional ids from the partition, then
// serves them and finishes the transactions it found preparing.
func (s *shard) load() {
	defer close(s.loaded)
	start := time.Now()
	txns := map[string]*txnMeta{}
	skipped := 0
	var firstErr error
	var rr record.Iter
	defer rr.Release()
	err := s.part.ScanAll(func(b record.Batch) error {
		if b.IsControl() {
			return nil
		}
		if err := rr.Reset(b, 0); err != nil {
			return fmt.Errorf("batch at offset %d: %w", b.BaseOffset(), err)
		}
		for rr.Next() {
			rec := rr.Record()
			id, m, err := decodeRecord(rec.Key, rec.Value)
			if err != nil {
				if skipped == 0 {
					firstErr = err
				}
				skipped++
				continue
			}
			if m == nil {
				delete(txns, id)
				continue
			}
			txns[id] = m
		}
		return rr.Err()
	})
	s.mu.Lock()
	if s.mu.state != shardLoading {
		s.mu.Unlock()
		return
	}
	if err != nil {
		s.c.logger.Error("cannot read all of __transaction_state partition; transactions after the error are lost", "partition", s.id, "err", err)
	}
	if skipped > 0 {
		s.c.logger.Warn("skipped undecodable __transaction_state records", "partition", s.id, "records", skipped, "first_err", firstErr)
	}
	var preparing []*txnMeta
	for id, m := range txns {
		if m.state == Dead {
			continue
		}
		s.mu.txns[id] = m
		if m.state.preparing() {
			preparing = append(preparing, m)
		}
	}
	s.mu.state = shardActive
	s.mu.Unlock()
	s.c.logger.Info("loaded transaction coordinator partition", "partition", s.id, "transactional_ids", len(txns), "took", time.Since(start))
	for _, m := range preparing {
		s.finishAsync(m)
	}
}

// commitTimeout bounds how long a transaction state write or a marker
// waits for the ISR to have it (offsets.commit.timeout.ms's default).
const commitTimeout = 5 * time.Second
