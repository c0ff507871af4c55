package api

// ListTransactions: v0-v2 (KIP-664; v1 duration filter, KIP-994; v2
// transactional id pattern, KIP-1152). Lists the transactional ids this
// broker coordinates, filtered by state, producer id, how long the
// transaction has been open and a regular expression on the id (RE2, as
// Kafka's RE2J). Unknown state names come back in UnknownStateFilters; a bad
// pattern is INVALID_REGULAR_EXPRESSION; a partition still loading makes
// the answer COORDINATOR_LOAD_IN_PROGRESS.

import (
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/txn"
	"kzero/net/server"
)

func init() { register(kmsg.ListTransactions.Int16(), 0, 2, (*Handler).listTransactions) }

func (h *Handler) listTransactions(req *server.Request) error {
	r := kmsg.NewPtrListTransactionsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrListTransactionsResponse()
	f := txn.ListFilter{ProducerIDs: r.ProducerIDFilters, MinDurationMs: r.DurationFilterMillis}
	unknown := false
	for _, s := range r.StateFilters {
		st, ok := txn.ParseState(s)
		if !ok {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, s)
			unknown = true
			continue
		}
		f.States = append(f.States, st)
	}
	var pattern *regexp.Regexp
	if r.TransactionalIDPattern != nil && *r.TransactionalIDPattern != "" {
		var err error
		if pattern, err = regexp.Compile(`^(?:` + *r.TransactionalIDPattern + `)$`); err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			respond(req, resp)
			return nil
		}
	}
	if unknown && len(f.States) == 0 {
		// Only unknown states asked for: none can match.
		respond(req, resp)
		return nil
	}
	list, loading := h.txns.List(f)
	if loading {
		resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
	}
	for _, d := range list {
		if pattern != nil && !pattern.MatchString(d.ID) || !h.authorized(req, opDescribe, resTxnID, d.ID) {
			continue
		}
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.TransactionState = d.ID, d.ProducerID, d.State.String()
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	respond(req, resp)
	return nil
}
