package txn

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/shards"
	"kzero/log"
)

// EndResult is what EndTxn answers: the producer id and epoch the client
// goes on with (transactions v2 bumps the epoch on every end).
type EndResult struct {
	ProducerID int64
	Epoch      int16
}

// EndTxn commits or aborts the ongoing transaction of a transactional id
// (EndTxn). The Prepare record is written before it returns; the markers
// and the Complete record follow, here when the markers can be written at
// once, else in the background. tv2 is transactions version 2 (EndTxn v5):
// the epoch is bumped and the new one returned.
func (c *Coordinator) EndTxn(ctx context.Context, id string, producerID int64, epoch int16, commit, tv2 bool) (EndResult, error) {
	var res EndResult
	var prepared *txnMeta
	var on *shard
	err := c.withShard(ctx, id, func(s *shard, fresh int64) (needID bool, err error) {
		res, prepared, needID, err = s.endLocked(id, producerID, epoch, commit, tv2, fresh)
		on = s
		return needID, err
	})
	if prepared != nil {
		on.finish(prepared) // with the shard unlocked
	}
	return res, err
}

// endLocked is EndTxn on a locked shard; prepared is the transaction to
// finish once unlocked.
func (s *shard) endLocked(id string, producerID int64, epoch int16, commit, tv2 bool, fresh int64) (res EndResult, prepared *txnMeta, needID bool, err error) {
	m := s.mu.txns[id]
	if m == nil {
		return res, nil, false, kerr.InvalidProducerIDMapping
	}
	want := CompleteAbort
	if commit {
		want = CompleteCommit
	}
	current := m.producerID == producerID && m.epoch == epoch
	if !current {
		// A retry of an end that already bumped the epoch (v2), or of
		// one that rotated the producer id.
		retry := tv2 && m.clientVersion >= 2 && m.state == want &&
			((m.producerID == producerID && m.epoch == epoch+1) || (m.prevProducerID == producerID && m.epoch == 0))
		retryPreparing := tv2 && m.clientVersion >= 2 && m.state == prepareOf(commit) && m.producerID == producerID && m.epoch == epoch+1
		switch {
		case retry:
			return EndResult{ProducerID: m.producerID, Epoch: m.epoch}, nil, false, nil
		case retryPreparing:
			return res, nil, false, kerr.ConcurrentTransactions
		case m.producerID != producerID:
			return res, nil, false, kerr.InvalidProducerIDMapping
		default:
			return res, nil, false, kerr.ProducerFenced
		}
	}
	switch m.state {
	case Ongoing:
	case CompleteCommit, CompleteAbort, Empty:
		if tv2 && !commit {
			// v2 lets a producer abort with nothing added: the epoch is
			// bumped all the same.
			break
		}
		if !tv2 && m.state == want {
			return EndResult{ProducerID: m.producerID, Epoch: m.epoch}, nil, false, nil // a retry
		}
		return res, nil, false, kerr.InvalidTxnState
	case PrepareCommit, PrepareAbort:
		if m.state == prepareOf(commit) {
			return res, nil, false, kerr.ConcurrentTransactions
		}
		return res, nil, false, kerr.InvalidTxnState
	default:
		return res, nil, false, kerr.InvalidTxnState
	}
	n := m.clone()
	if m.state != Ongoing {
		clear(n.partitions)
	}
	n.state, n.updateMs = prepareOf(commit), s.c.now()
	res = EndResult{ProducerID: m.producerID, Epoch: m.epoch}
	if tv2 {
		n.clientVersion = 2
		if epochExhausted(m.epoch) {
			if fresh < 0 {
				return res, nil, true, nil
			}
			n.nextProducerID = fresh
			res = EndResult{ProducerID: fresh, Epoch: 0}
		} else {
			res.Epoch = m.epoch + 1
		}
		n.epoch = m.epoch + 1
	}
	if err := s.writeLocked(id, n); err != nil {
		return EndResult{}, nil, false, err
	}
	return res, n, false, nil
}

// prepareOf is the Prepare state of a commit or an abort.
func prepareOf(commit bool) State {
	if commit {
		return PrepareCommit
	}
	return PrepareAbort
}

// finish writes the markers of a prepared transaction and then its
// Complete record; when a marker cannot be written at once the rest is
// retried in the background.
func (s *shard) finish(m *txnMeta) {
	if !s.writeMarkers(m) {
		s.finishAsync(m)
		return
	}
	s.complete(m)
}

// finishAsync finishes a prepared transaction in the background, retrying
// the markers until they are written or the shard is closed.
func (s *shard) finishAsync(m *txnMeta) {
	s.c.wg.Add(1)
	go func() {
		defer s.c.wg.Done()
		backoff := 10 * time.Millisecond
		for !s.writeMarkers(m) {
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			// Checked after the wait: a shard that resigned or closed
			// meanwhile must not write markers again (its successor does).
			if !s.Active() {
				return
			}
		}
		s.complete(m)
	}()
}

// writeMarkers writes the transaction's markers, remembering which are
// done across retries; it reports whether all are.
func (s *shard) writeMarkers(m *txnMeta) bool {
	commit := m.state == PrepareCommit
	all := true
	for _, tp := range m.sortedPartitions() {
		if _, done := m.markersDone[tp]; done {
			continue
		}
		err := s.c.cfg.Markers.WriteMarker(tp, m.producerID, m.epoch, s.Epoch(), commit, m.clientVersion)
		if errors.Is(err, kerr.InvalidProducerEpoch) || errors.Is(err, kerr.TransactionCoordinatorFenced) {
			// The partition saw a newer producer epoch or coordinator:
			// this marker is superseded, as Kafka drops it.
			s.c.logger.Warn("transaction marker superseded", "transactional_id", m.id, "partition", tp, "err", err)
			err = nil
		}
		if err != nil {
			s.c.logger.Debug("cannot write a transaction marker yet", "transactional_id", m.id, "partition", tp, "err", err)
			all = false
			continue
		}
		if m.markersDone == nil {
			m.markersDone = map[log.TopicPartition]struct{}{}
		}
		m.markersDone[tp] = struct{}{}
	}
	return all
}

// complete writes the Complete record of a transaction whose markers are
// written, unless its state moved on meanwhile (a newer coordinator).
func (s *shard) complete(m *txnMeta) {
	s.Lock()
	defer s.Unlock()
	if s.StateLocked() != shards.Active || s.mu.txns[m.id] != m {
		return
	}
	n := m.clone()
	n.markersDone = nil
	n.state = CompleteAbort
	if m.state == PrepareCommit {
		n.state = CompleteCommit
	}
	clear(n.partitions)
	n.updateMs = s.c.now()
	if n.nextProducerID != noProducerID {
		n.prevProducerID, n.producerID, n.epoch = n.producerID, n.nextProducerID, 0
		n.nextProducerID = noProducerID
	}
	if err := s.writeLocked(m.id, n); err != nil {
		s.c.logger.Warn("cannot complete a transaction; the next leader of its partition will", "transactional_id", m.id, "err", err)
	}
}
