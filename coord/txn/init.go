package txn

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
	"kzero/record"
)

// InitProducerID gives a transactional id its producer id and a new epoch,
// fencing any earlier producer of the id (KIP-98). expectPID and
// expectEpoch are the caller's current ones (KIP-360), -1 for a fresh
// producer. An ongoing transaction is aborted first, with a bumped epoch:
// the caller gets CONCURRENT_TRANSACTIONS and retries.
func (c *Coordinator) InitProducerID(ctx context.Context, id string, timeoutMs int32, expectPID int64, expectEpoch int16) (int64, int16, error) {
	if timeoutMs <= 0 || int64(timeoutMs) > c.cfg.MaxTimeout.Milliseconds() {
		return -1, -1, kerr.InvalidTransactionTimeout
	}
	var pid int64
	var epoch int16
	err := c.withShard(ctx, id, func(s *shard, fresh int64) (needID bool, err error) {
		pid, epoch, needID, err = s.initLocked(id, timeoutMs, expectPID, expectEpoch, fresh)
		return needID, err
	})
	if err != nil {
		return -1, -1, err
	}
	return pid, epoch, nil
}

// withShard runs f on the id's locked shard. When f asks for a fresh
// producer id (needID), one is allocated with the shard unlocked (ids come
// from the quorum) and f runs again with it; fresh is -1 until then.
func (c *Coordinator) withShard(ctx context.Context, id string, f func(s *shard, fresh int64) (needID bool, err error)) error {
	fresh := int64(-1)
	for range 8 {
		s, err := c.shardFor(id)
		if err != nil {
			return err
		}
		needID, err := f(s, fresh)
		s.Unlock()
		if !needID {
			return err
		}
		next, aerr := c.cfg.AllocateProducerID(ctx)
		if aerr != nil {
			c.logger.Warn("cannot allocate a producer id", "err", aerr)
			return kerr.CoordinatorNotAvailable
		}
		fresh = next
	}
	return kerr.ConcurrentTransactions
}

// initLocked is InitProducerID on a locked shard. needID asks the caller
// for a fresh producer id and to call again.
func (s *shard) initLocked(id string, timeoutMs int32, expectPID int64, expectEpoch int16, fresh int64) (pid int64, epoch int16, needID bool, err error) {
	now := s.c.now()
	m := s.mu.txns[id]
	if m == nil {
		if fresh < 0 {
			return -1, -1, true, nil
		}
		n := &txnMeta{
			id: id, producerID: fresh, prevProducerID: noProducerID, nextProducerID: noProducerID,
			epoch: 0, lastEpoch: record.NoProducerEpoch, timeoutMs: timeoutMs, state: Empty,
			partitions: map[log.TopicPartition]struct{}{}, startMs: -1, updateMs: now, clientVersion: 1,
		}
		if err := s.writeLocked(id, n); err != nil {
			return -1, -1, false, err
		}
		return n.producerID, n.epoch, false, nil
	}
	if expectPID != noProducerID {
		switch {
		case expectPID == m.producerID && expectEpoch == m.epoch:
			// The caller is current: bump below.
		case expectPID == m.producerID && expectEpoch == m.lastEpoch && m.state.complete(),
			expectPID == m.prevProducerID && m.lastEpoch == record.NoProducerEpoch && m.epoch == 0 && m.state.complete():
			// A retry of the bump the caller asked for already happened.
			return m.producerID, m.epoch, false, nil
		default:
			return -1, -1, false, kerr.ProducerFenced
		}
	}
	switch {
	case m.state.preparing():
		return -1, -1, false, kerr.ConcurrentTransactions
	case m.state == Ongoing:
		// Fence the producer of the open transaction and abort it; the
		// caller retries once it is aborted.
		n, err := s.fenceAbortLocked(id, m, now)
		if err != nil {
			return -1, -1, false, err
		}
		s.finishAsync(n)
		return -1, -1, false, kerr.ConcurrentTransactions
	}
	n := m.clone()
	if epochExhausted(m.epoch) {
		if fresh < 0 {
			return -1, -1, true, nil
		}
		n.prevProducerID, n.producerID, n.epoch = m.producerID, fresh, 0
	} else {
		n.epoch++
	}
	n.lastEpoch = record.NoProducerEpoch
	if expectPID != noProducerID {
		n.lastEpoch = m.epoch
	}
	n.nextProducerID = noProducerID
	n.timeoutMs, n.state, n.updateMs, n.startMs = timeoutMs, Empty, now, -1
	clear(n.partitions)
	if err := s.writeLocked(id, n); err != nil {
		return -1, -1, false, err
	}
	return n.producerID, n.epoch, false, nil
}
