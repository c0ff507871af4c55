package api

// UnregisterBroker: v0 (flexible). KIP-631: remove a broker's
// registration, after taking it out of every ISR and leadership; any
// registered broker may be removed, as in Kafka. BROKER_ID_NOT_REGISTERED
// when it has none. Any node serves it (the decision goes to the quorum
// leader).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.UnregisterBroker.Int16(), 0, 0, (*Handler).unregisterBroker) }

// unregisterTimeout bounds an UnregisterBroker, which carries no timeout
// of its own (Kafka's request.timeout.ms default).
const unregisterTimeout = 30_000

func (h *Handler) unregisterBroker(req *server.Request) error {
	r := kmsg.NewPtrUnregisterBrokerRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout(unregisterTimeout))
	defer cancel()
	res := h.cluster.UnregisterBroker(ctx, r.BrokerID)
	resp := kmsg.NewPtrUnregisterBrokerResponse()
	if res.Err != nil {
		resp.ErrorCode = errCode(res.Err)
		msg := res.Message
		if msg == "" {
			msg = kerrOf(res.Err).Description
		}
		resp.ErrorMessage = &msg
	}
	respond(req, resp)
	return nil
}
