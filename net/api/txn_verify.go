package api

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/record"
)

// verifyTxnWrite checks a transactional batch before it is appended: the
// first batch of a transaction in a partition must belong to a
// transaction the coordinator knows to include the partition (KIP-890 part
// 1), or, from Produce v12 (transactions v2, part 2), the partition is
// added to the producer's transaction here. Later batches of the same
// transaction pass on the partition's own producer state: the caller
// verifies only a batch its partition is not InTransaction for.
func (h *Handler) verifyTxnWrite(tp log.TopicPartition, b record.Batch, r *kmsg.ProduceRequest) error {
	pid, epoch := b.ProducerID(), b.ProducerEpoch()
	if r.TransactionID == nil || *r.TransactionID == "" {
		return fmt.Errorf("transactional batch without a transactional id: %w", kerr.InvalidTxnState)
	}
	if err := h.verifyTxnPartition(*r.TransactionID, pid, epoch, tp, r.Version >= 12); err != nil {
		switch {
		case errors.Is(err, kerr.ConcurrentTransactions), errors.Is(err, kerr.NotCoordinator),
			errors.Is(err, kerr.CoordinatorNotAvailable), errors.Is(err, kerr.CoordinatorLoadInProgress):
			// Producers retry NOT_ENOUGH_REPLICAS; older ones do not know
			// CONCURRENT_TRANSACTIONS on produce, and a coordinator moving
			// is not the partition's business (Kafka answers the same).
			err = fmt.Errorf("%v: %w", err, kerr.NotEnoughReplicas)
		case errors.Is(err, kerr.ProducerFenced):
			err = fmt.Errorf("%v: %w", err, kerr.InvalidProducerEpoch) // what a partition says of an old epoch
		}
		return fmt.Errorf("transaction %q of producer %d epoch %d at %s: %w", *r.TransactionID, pid, epoch, tp, err)
	}
	return nil
}

// verifyTxnPartition asks the transaction coordinator whether partition tp
// is part of the ongoing transaction of transactionalID at producerID and
// producerEpoch (KIP-890 part 1); with add (transactions v2, KIP-890 part
// 2) it adds the partition when it is not. It returns nil or an error
// wrapping the kerr error to answer the write with (INVALID_TXN_STATE,
// PRODUCER_FENCED, INVALID_PRODUCER_ID_MAPPING, CONCURRENT_TRANSACTIONS,
// ...); the caller's edge turns it into a code.
//
// A coordinator on this broker is called in process; one on another broker
// gets AddPartitionsToTxn v5 (TxnRouter), a round trip that only a
// transaction's first write to each partition pays. Whatever may wait
// (that round trip, or the write of an added partition) runs on a
// goroutine rather than the event loop (appendPartition).
func (h *Handler) verifyTxnPartition(transactionalID string, producerID int64, producerEpoch int16, tp log.TopicPartition, add bool) error {
	if h.txnRouter != nil {
		if code, local := h.txnRouter.AddToTxn(transactionalID, producerID, producerEpoch, tp, add); !local {
			err := kerr.ErrorForCode(code)
			if add && errors.Is(err, kerr.InvalidProducerIDMapping) {
				err = kerr.InvalidTxnState
			}
			if err != nil {
				err = fmt.Errorf("transaction coordinator of %q: %w", transactionalID, err)
			}
			return err
		}
	}
	if !add {
		return h.txns.Verify(transactionalID, producerID, producerEpoch, tp)
	}
	err := h.txns.AddPartitions(transactionalID, producerID, producerEpoch, []log.TopicPartition{tp}, true)
	if errors.Is(err, kerr.InvalidProducerIDMapping) {
		// Transactions v2 adds the partition itself: a producer id the
		// coordinator does not know means no transaction to write in.
		return fmt.Errorf("%v: %w", err, kerr.InvalidTxnState)
	}
	return err
}
