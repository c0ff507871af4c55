package api

// InitProducerId: v0-v5, for idempotent producers (no transactional id):
// each call hands out a new producer id at epoch 0, as Kafka does for a
// producer without a transactional id, from blocks of 1000 that the
// metadata quorum records (so ids are never reused, across restarts too).
//
// A request with a transactional id belongs to that id's transaction
// coordinator. This broker coordinates no transactional ids yet
// (FindCoordinator answers COORDINATOR_NOT_AVAILABLE for them), so it
// answers NOT_COORDINATOR, as a Kafka broker that is not the id's
// coordinator does.

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.InitProducerID.Int16(), 0, 5, (*Handler).initProducerID) }

// producerIDs hands out the ids of the block this broker holds, fetching
// the next block from the quorum when it runs out.
type producerIDs struct {
	mu         sync.Mutex
	next, last int64 // [next, last) left in the block
}

func (p *producerIDs) take(ctx context.Context, alloc func(context.Context) (int64, int32, error)) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next >= p.last {
		first, size, err := alloc(ctx)
		if err != nil {
			return -1, err
		}
		p.next, p.last = first, first+int64(size)
	}
	id := p.next
	p.next++
	return id, nil
}

func (h *Handler) initProducerID(req *server.Request) error {
	r := kmsg.NewPtrInitProducerIDRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if r.TransactionalID != nil {
		resp.ErrorCode = kerr.NotCoordinator.Code
		respond(req, resp)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout(0))
	defer cancel()
	id, err := h.producerIDs.take(ctx, func(ctx context.Context) (int64, int32, error) {
		return h.cluster.AllocateProducerIDs(ctx, h.cfg.NodeID)
	})
	if err != nil {
		resp.ErrorCode = errCode(err)
		if resp.ErrorCode == kerr.UnknownServerError.Code {
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		}
	} else {
		resp.ProducerID, resp.ProducerEpoch = id, 0
	}
	respond(req, resp)
	return nil
}
