package api

// EndTxn: v0-v5. Commits or aborts the producer's transaction: answered
// once the PrepareCommit/PrepareAbort record is written (the point of no
// return); the markers and the Complete record follow. v5 is transactions
// version 2 (KIP-890 part 2): the epoch is bumped by every end and the
// response carries the producer id and epoch to go on with.
// PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.EndTxn.Int16(), 0, 5, (*Handler).endTxn) }

func (h *Handler) endTxn(req *server.Request) error {
	r := kmsg.NewPtrEndTxnRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrEndTxnResponse()
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if !h.authorized(req, opWrite, resTxnID, r.TransactionalID) {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		respond(req, resp)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout(0))
	defer cancel()
	res, err := h.txns.EndTxn(ctx, r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Commit, r.Version >= 5)
	if err != nil {
		resp.ErrorCode = fencedCode(err, r.Version, 2)
	} else {
		resp.ProducerID, resp.ProducerEpoch = res.ProducerID, res.Epoch
	}
	respond(req, resp)
	return nil
}
