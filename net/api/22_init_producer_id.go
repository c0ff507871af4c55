package api

// InitProducerId: v0-v5. Without a transactional id: a new producer id at
// epoch 0, from the blocks of 1000 that the metadata quorum records (ids
// are never reused, across restarts too); an idempotent producer bumping
// its epoch (KIP-360, v3+) gets a new id as well.
//
// With a transactional id: the transaction coordinator (coord/txn) gives
// the id's producer id and a bumped epoch, fencing earlier producers;
// transaction_timeout_ms above transaction.max.timeout.ms is
// INVALID_TRANSACTION_TIMEOUT, an empty id INVALID_REQUEST, and a broker
// that is not the id's coordinator answers NOT_COORDINATOR. PRODUCER_FENCED
// (KIP-588) is answered as INVALID_PRODUCER_EPOCH before v4.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.InitProducerID.Int16(), 0, 5, (*Handler).initProducerID) }

func (h *Handler) initProducerID(req *server.Request) error {
	r := kmsg.NewPtrInitProducerIDRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	ctx, cancel := context.WithTimeout(context.Background(), timeout(0))
	defer cancel()
	switch {
	case r.TransactionalID != nil && *r.TransactionalID != "" && !h.authorized(req, opWrite, resTxnID, *r.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
	case r.TransactionalID == nil && !h.authorized(req, opIdempotentWrite, resCluster, clusterName) && !h.writesAnyTopic(req):
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
	case r.TransactionalID == nil:
		id, err := h.producerIDs.Next(ctx)
		if err != nil {
			resp.ErrorCode = errCode(err)
			if resp.ErrorCode == kerr.UnknownServerError.Code {
				resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			}
			break
		}
		resp.ProducerID, resp.ProducerEpoch = id, 0
	case *r.TransactionalID == "":
		resp.ErrorCode = kerr.InvalidRequest.Code
	default:
		pid, epoch, err := h.txns.InitProducerID(ctx, *r.TransactionalID, r.TransactionTimeoutMillis, r.ProducerID, r.ProducerEpoch)
		if err != nil {
			resp.ErrorCode = fencedCode(err, r.Version, 4)
			break
		}
		resp.ProducerID, resp.ProducerEpoch = pid, epoch
	}
	respond(req, resp)
	return nil
}
