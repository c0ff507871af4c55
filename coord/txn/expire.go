package txn

import "kzero/record"

// abortTimedOut aborts every transaction open longer than its timeout,
// bumping the epoch so its producer is fenced (Kafka's timed-out
// transaction abort).
func (c *Coordinator) abortTimedOut() {
	for _, s := range c.table.All() {
		var prepared []*txnMeta
		if !s.LockActive() {
			continue
		}
		now := c.now()
		for id, m := range s.mu.txns {
			if m.state != Ongoing || m.startMs+int64(m.timeoutMs) > now {
				continue
			}
			n, err := s.fenceAbortLocked(id, m, now)
			if err != nil {
				break
			}
			c.logger.Info("aborting a timed out transaction", "transactional_id", id, "producer_id", n.producerID, "epoch", n.epoch)
			prepared = append(prepared, n)
		}
		s.Unlock()
		for _, m := range prepared {
			s.finishAsync(m)
		}
	}
}

// expireIDs removes transactional ids idle for transactional.id.expiration.ms
// with no transaction open, with a tombstone.
func (c *Coordinator) expireIDs() {
	limit := c.cfg.IDExpiration.Milliseconds()
	for _, s := range c.table.All() {
		if !s.LockActive() {
			continue
		}
		now := c.now()
		for id, m := range s.mu.txns {
			if m.state.complete() && m.updateMs+limit <= now {
				if err := s.writeLocked(id, nil); err != nil {
					break
				}
			}
		}
		s.Unlock()
	}
}

// fenceAbortLocked aborts the open transaction of id: the epoch is bumped
// (unless exhausted) so its producer is fenced, and PrepareAbort written.
// The caller finishes the abort (finishAsync) once unlocked.
func (s *shard) fenceAbortLocked(id string, m *txnMeta, now int64) (*txnMeta, error) {
	n := m.clone()
	if !epochExhausted(n.epoch) {
		n.epoch++
	}
	n.lastEpoch = record.NoProducerEpoch
	n.state, n.updateMs = PrepareAbort, now
	if err := s.writeLocked(id, n); err != nil {
		return nil, err
	}
	return n, nil
}
