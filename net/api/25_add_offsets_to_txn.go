package api

// AddOffsetsToTxn: v0-v4. Adds the __consumer_offsets partition of the
// group to the transaction (KIP-98), so that the TxnOffsetCommit that
// follows is ended with the transaction. The offsets topic is created if it
// does not exist yet. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/log"
	"kzero/net/server"
)

func init() { register(kmsg.AddOffsetsToTxn.Int16(), 0, 4, (*Handler).addOffsetsToTxn) }

func (h *Handler) addOffsetsToTxn(req *server.Request) error {
	r := kmsg.NewPtrAddOffsetsToTxnRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrAddOffsetsToTxnResponse()
	switch {
	case !h.authorized(req, opWrite, resTxnID, r.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		respond(req, resp)
		return nil
	case !h.authorized(req, opRead, resGroup, r.Group):
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		respond(req, resp)
		return nil
	}
	if t, _ := h.offsetsTopic(); t == nil || len(t.Partitions) == 0 {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		respond(req, resp)
		return nil
	}
	tp := log.TopicPartition{Topic: group.TopicName, Partition: h.groups.PartitionFor(r.Group)}
	resp.ErrorCode = fencedCode(h.txns.AddPartitions(r.TransactionalID, r.ProducerID, r.ProducerEpoch, []log.TopicPartition{tp}, false), r.Version, 2)
	respond(req, resp)
	return nil
}
