package txn

// State is a transaction's state, with Kafka's numbering in
// __transaction_state records (TxnMetadataValue.State).
type State int8

const (
	Empty          State = 0
	Ongoing        State = 1
	PrepareCommit  State = 2
	PrepareAbort   State = 3
	CompleteCommit State = 4
	CompleteAbort  State = 5
	Dead           State = 6
	// PrepareEpochFence (7) is an in-memory state in Kafka, never written
	// by kzero: a fence is written directly as PrepareAbort.
	PrepareEpochFence State = 7
)

// String is Kafka's name for the state, as DescribeTransactions and
// ListTransactions report it.
func (s State) String() string {
	switch s {
	case Empty:
		return "Empty"
	case Ongoing:
		return "Ongoing"
	case PrepareCommit:
		return "PrepareCommit"
	case PrepareAbort:
		return "PrepareAbort"
	case CompleteCommit:
		return "CompleteCommit"
	case CompleteAbort:
		return "CompleteAbort"
	case Dead:
		return "Dead"
	case PrepareEpochFence:
		return "PrepareEpochFence"
	}
	return "Unknown"
}

// ParseState is the state named s (as ListTransactions filters name it).
func ParseState(s string) (State, bool) {
	for st := Empty; st <= PrepareEpochFence; st++ {
		if st.String() == s {
			return st, true
		}
	}
	return 0, false
}

// preparing reports whether markers are being written.
func (s State) preparing() bool { return s == PrepareCommit || s == PrepareAbort }

// complete reports whether no transaction is open: a new one may start.
func (s State) complete() bool { return s == Empty || s == CompleteCommit || s == CompleteAbort }
