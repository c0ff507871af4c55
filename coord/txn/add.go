package txn

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
)

// AddPartitions adds partitions to the transaction of a transactional id
// at producerID and epoch (AddPartitionsToTxn, AddOffsetsToTxn, and the
// implicit add of transactions v2, tv2), starting a transaction when none
// is open.
func (c *Coordinator) AddPartitions(id string, producerID int64, epoch int16, tps []log.TopicPartition, tv2 bool) error {
	s, err := c.shardFor(id)
	if err != nil {
		return err
	}
	defer s.Unlock()
	m := s.mu.txns[id]
	if err := m.checkProducer(producerID, epoch); err != nil {
		return err
	}
	switch {
	case m.state.preparing():
		return kerr.ConcurrentTransactions
	case m.state == Ongoing && m.hasAll(tps):
		return nil
	case m.state != Ongoing && !m.state.complete():
		return kerr.InvalidTxnState
	}
	now := s.c.now()
	n := m.clone()
	if m.state != Ongoing {
		clear(n.partitions)
		n.startMs = now
	}
	for _, tp := range tps {
		// Request strings alias the request buffer: keep copies.
		tp.Topic = strings.Clone(tp.Topic)
		n.partitions[tp] = struct{}{}
	}
	n.state, n.updateMs = Ongoing, now
	if tv2 {
		n.clientVersion = 2
	}
	return s.writeLocked(id, n)
}

// Verify checks that partition tp is in the ongoing transaction of a
// transactional id at producerID and epoch (KIP-890 part 1: a leader
// verifies a transaction's first write to a partition). An older epoch
// gives INVALID_PRODUCER_EPOCH, anything else amiss INVALID_TXN_STATE.
func (c *Coordinator) Verify(id string, producerID int64, epoch int16, tp log.TopicPartition) error {
	s, err := c.shardFor(id)
	if err != nil {
		return err
	}
	defer s.Unlock()
	m := s.mu.txns[id]
	switch {
	case m == nil || m.producerID != producerID:
		return kerr.InvalidTxnState
	case epoch < m.epoch:
		return kerr.InvalidProducerEpoch
	case epoch != m.epoch || m.state != Ongoing:
		return kerr.InvalidTxnState
	}
	if _, ok := m.partitions[tp]; !ok {
		return kerr.InvalidTxnState
	}
	return nil
}

// checkProducer checks a request's producer id and epoch against the
// transactional id's: INVALID_PRODUCER_ID_MAPPING for an unknown id or a
// different producer id, PRODUCER_FENCED for another epoch.
func (m *txnMeta) checkProducer(producerID int64, epoch int16) error {
	switch {
	case m == nil || m.producerID != producerID:
		return kerr.InvalidProducerIDMapping
	case m.epoch != epoch:
		return kerr.ProducerFenced
	}
	return nil
}
