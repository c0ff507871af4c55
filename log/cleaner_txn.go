package log

import (
	"cmp"
	"slices"

	"kzero/record"
)

// txnTracker follows transactions through one pass of the cleaner over a
// log, in offset order, to decide what of them may go (Kafka's rules):
//
//   - the records of an aborted transaction (one in a transaction index)
//     are dropped: no read_committed consumer returns them and a
//     read_uncommitted one may miss them as it may miss any overwritten
//     record;
//   - an abort marker stays while a pass still sees data of its
//     transaction, and its transaction index entry moves with it to the
//     cleaned segment; once no data is left it may go, like a commit marker
//     none of whose data a pass saw;
//   - a marker that may go still waits for its delete horizon, set by the
//     first pass that finds it removable, so consumers that read up to it
//     within delete.retention.ms see the transaction end.
type txnTracker struct {
	pending   []AbortedTxn // aborted transactions not begun yet, by first offset
	aborted   map[int64]*abortedTxnState
	committed map[int64]struct{} // producers whose open transaction's data was seen
}

type abortedTxnState struct {
	txn      AbortedTxn
	seenData bool
}

// collectAbortedTxns lists the aborted transactions of segs whose marker is
// at or after from, by first offset.
func collectAbortedTxns(segs []*Segment, from int64) []AbortedTxn {
	var out []AbortedTxn
	for _, s := range segs {
		t := s.txn.Load()
		if t == nil {
			continue
		}
		for _, a := range t.Entries() {
			if a.LastOffset >= from {
				out = append(out, a)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	return out
}

// controlInflateLimit bounds a control batch's records: one marker of a
// few bytes.
const controlInflateLimit = 1 << 20

func newTxnTracker(aborted []AbortedTxn) *txnTracker {
	return &txnTracker{
		pending:   aborted,
		aborted:   make(map[int64]*abortedTxnState),
		committed: make(map[int64]struct{}),
	}
}

// begin moves the aborted transactions that start at or before offset to
// the ongoing ones.
func (t *txnTracker) begin(offset int64) {
	for len(t.pending) > 0 && t.pending[0].FirstOffset <= offset {
		a := t.pending[0]
		t.pending = t.pending[1:]
		if _, ok := t.aborted[a.ProducerID]; !ok {
			t.aborted[a.ProducerID] = &abortedTxnState{txn: a}
		}
	}
}

// onData reads a data batch and reports whether it belongs to an aborted
// transaction, whose records are to be dropped.
func (t *txnTracker) onData(b record.Batch) bool {
	t.begin(b.LastOffset())
	if !b.IsTransactional() {
		return false
	}
	if a := t.aborted[b.ProducerID()]; a != nil {
		a.seenData = true
		return true
	}
	t.committed[b.ProducerID()] = struct{}{}
	return false
}

// onControl reads a control batch and reports whether it may be removed
// (once its delete horizon passes). kept is the transaction index entry of
// an abort marker that must stay, for the cleaned segment's index. rr
// decodes the marker.
func (t *txnTracker) onControl(b record.Batch, rr *record.Iter) (removable bool, kept *AbortedTxn, err error) {
	t.begin(b.LastOffset())
	if err := rr.Reset(b, controlInflateLimit); err != nil {
		return false, nil, err
	}
	if !rr.Next() {
		if err := rr.Err(); err != nil {
			return false, nil, err
		}
		return true, nil, nil // emptied by an earlier pass
	}
	typ, _, err := record.ParseControl(rr.Record().Key, rr.Record().Value)
	if err != nil {
		return false, nil, err
	}
	pid := b.ProducerID()
	switch typ {
	case record.ControlAbort:
		a := t.aborted[pid]
		delete(t.aborted, pid)
		if a != nil && a.seenData {
			return false, &a.txn, nil
		}
		return true, nil, nil
	case record.ControlCommit:
		_, seen := t.committed[pid]
		delete(t.committed, pid)
		return !seen, nil, nil
	}
	return false, nil, nil
}
