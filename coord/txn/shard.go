package txn

import (
	"fmt"
	"strings"
	"time"

	"kzero/coord/shards"
	"kzero/record"
)

// shard is the transactional ids of one __transaction_state partition
// this broker leads. The runtime's lock guards them and the partition's
// writes; the runtime's epoch (the partition's leader epoch) is the
// coordinator epoch stamped on markers.
type shard struct {
	*shards.Shard
	c *Coordinator

	// mu is the state the Shard's lock guards.
	mu struct {
		txns    map[string]*txnMeta
		scratch []byte
	}
}

func newShard(c *Coordinator, rt *shards.Shard) *shard {
	s := &shard{Shard: rt, c: c}
	s.mu.txns = map[string]*txnMeta{}
	return s
}

// writeLocked stores a transactional id's new state (nil: a tombstone) and,
// once committed, makes it current. An error wraps what to answer with
// (shards.TxnError: Kafka's mapping of append failures for the
// transaction log).
func (s *shard) writeLocked(id string, m *txnMeta) error {
	s.mu.scratch = appendKey(s.mu.scratch[:0], id)
	k := len(s.mu.scratch)
	rec := record.Record{Key: s.mu.scratch[:k]}
	if m != nil {
		s.mu.scratch = appendValue(s.mu.scratch, m)
		rec.Key, rec.Value = s.mu.scratch[:k], s.mu.scratch[k:]
	}
	s.BatchLocked(record.NoProducerID, record.NoProducerEpoch).Add(&rec)
	if _, err := s.WriteLocked(); err != nil {
		s.c.logger.Warn("cannot write transaction state", "transactional_id", id, "partition", s.Partition, "err", err)
		return shards.TxnError(err)
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

// Unload drops the shard's transactional ids (shards.Coordinated); marker
// writers of its transactions stop retrying.
func (s *shard) Unload() func() {
	s.mu.txns = map[string]*txnMeta{}
	return nil
}

// Load reads the shard's transactional ids from the partition and returns
// how to serve them and finish the transactions found preparing
// (shards.Coordinated).
func (s *shard) Load() shards.Install {
	start := time.Now()
	txns := map[string]*txnMeta{}
	skipped := 0
	var firstErr error
	var rr record.Iter
	defer rr.Release()
	err := s.Replica().ScanAll(func(b record.Batch) error {
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
	return func() func() {
		if err != nil {
			s.c.logger.Error("cannot read all of __transaction_state partition; transactions after the error are lost", "partition", s.Partition, "err", err)
		}
		if skipped > 0 {
			s.c.logger.Warn("skipped undecodable __transaction_state records", "partition", s.Partition, "records", skipped, "first_err", firstErr)
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
		s.c.logger.Info("loaded transaction coordinator partition", "partition", s.Partition, "transactional_ids", len(txns), "took", time.Since(start))
		return func() {
			for _, m := range preparing {
				s.finishAsync(m)
			}
		}
	}
}

// commitTimeout bounds how long a transaction state write or a marker
// waits for the ISR to have it (offsets.commit.timeout.ms's default).
const commitTimeout = 5 * time.Second
