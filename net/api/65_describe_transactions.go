package api

// DescribeTransactions: v0 (KIP-664). The state of each transactional id
// this broker coordinates: NOT_COORDINATOR for ids of partitions led
// elsewhere, COORDINATOR_LOAD_IN_PROGRESS while loading,
// TRANSACTIONAL_ID_NOT_FOUND for unknown ids.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.DescribeTransactions.Int16(), 0, 0, (*Handler).describeTransactions) }

func (h *Handler) describeTransactions(req *server.Request) error {
	r := kmsg.NewPtrDescribeTransactionsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDescribeTransactionsResponse()
	for _, id := range r.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID = id
		st.ProducerID, st.ProducerEpoch, st.StartTimestamp = -1, -1, -1
		if !h.authorized(req, opDescribe, resTxnID, id) {
			st.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		d, err := h.txns.Describe(id)
		if err != nil {
			st.ErrorCode = errCode(err)
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		st.State, st.TimeoutMillis, st.StartTimestamp = d.State.String(), d.TimeoutMs, d.StartMs
		st.ProducerID, st.ProducerEpoch = d.ProducerID, d.Epoch
		for _, tp := range d.Partitions {
			if n := len(st.Topics); n == 0 || st.Topics[n-1].Topic != tp.Topic {
				t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
				t.Topic = tp.Topic
				st.Topics = append(st.Topics, t)
			}
			t := &st.Topics[len(st.Topics)-1]
			t.Partitions = append(t.Partitions, tp.Partition)
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	respond(req, resp)
	return nil
}
