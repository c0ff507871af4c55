package coord

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
)

// Quorum is the metadata quorum as this controller sees it, for
// DescribeQuorum. Only the leader knows how far each voter got; it sends
// its view to every node every relayEvery, and a node that has a recent
// one from the leader it follows returns that (FromLeader), as a Kafka
// broker forwards DescribeQuorum to the active controller.
type Quorum struct {
	Leader        int32 // -1 when none is known
	Epoch         int64 // the raft term
	HighWatermark int64 // the committed index: entries every voter will keep
	IsLeader      bool
	FromLeader    bool          // the leader's view, relayed to this node
	Voters        []QuorumVoter // by id; offsets and times known on the leader only
	// Observers are the learners (broker-only nodes), by id, with their
	// progress as the leader tracks it; Addr is empty.
	Observers []QuorumVoter
}

// QuorumVoter is one voter's (or observer's) progress, as the leader
// tracks it.
type QuorumVoter struct {
	ID           int32
	Addr         string    // its controller listener, host:port; empty if not configured
	LogEndOffset int64     // the index the leader knows it holds (-1: unknown)
	LastFetch    time.Time // the last tick it was seen active; zero: never
	LastCaughtUp time.Time // the last tick it held the committed index; zero: never
}

// Quorum returns the quorum's state as of the last raft tick: on the
// leader its own, elsewhere the leader's as last relayed when that is
// recent and from the leader this node follows, else what this node knows
// (no offsets). It never blocks.
func (c *Controller) Quorum() Quorum {
	q := c.quorum.Load()
	if q == nil {
		return Quorum{Leader: -1}
	}
	if r := c.relayed.Load(); !q.IsLeader && r != nil && r.q.Leader == q.Leader && r.q.Epoch == q.Epoch &&
		time.Since(r.at) < relayFresh {
		out := r.q
		out.IsLeader, out.FromLeader = false, true // offsets as the leader had them, consistent
		return out
	}
	return *q
}

// relayed is the leader's view of the quorum as it last sent it.
type relayed struct {
	q  Quorum
	at time.Time // when it arrived, by this node's clock
}

// The leader relays its view every relayEvery; a view older than
// relayFresh is stale (the leader is gone or cut off).
const (
	relayEvery = 500 * time.Millisecond
	relayFresh = 3 * time.Second
)

// maxRelayedBytes bounds a relayed view's encoding.
const maxRelayedBytes = 1 << 20

// ReceiveQuorum takes the quorum leader's view of the quorum, as its
// transport relayed it from node from (raftnet's DeliverQuorum). A view
// that does not come from the leader it names, or does not decode, is
// dropped. It never blocks.
func (c *Controller) ReceiveQuorum(from int32, payload []byte) {
	q, err := decodeQuorum(payload)
	if err != nil || q.Leader != from || !q.IsLeader {
		c.logger.Debug("metadata: relayed quorum view dropped", "from", from, "err", err)
		return
	}
	c.relayed.Store(&relayed{q: q, at: time.Now()})
}

// encodeQuorum and decodeQuorum are the relayed view's encoding: JSON, a
// few hundred bytes twice a second, read only by DescribeQuorum.
func encodeQuorum(q *Quorum) []byte {
	b, _ := json.Marshal(q) // plain data: cannot fail
	return b
}

func decodeQuorum(b []byte) (Quorum, error) {
	var q Quorum
	if len(b) > maxRelayedBytes {
		return q, fmt.Errorf("relayed quorum view of %d bytes", len(b))
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return q, fmt.Errorf("relayed quorum view: %w", err)
	}
	return q, nil
}

// SnapshotsReceived counts the snapshots this voter installed from a leader
// (it had fallen behind the leader's compacted log).
func (c *Controller) SnapshotsReceived() int64 { return c.snapsIn.Load() }

// observeQuorum publishes the quorum's state; the loop calls it each tick.
// Times are the loop's: raft tracks no clock.
func (l *loop) observeQuorum(now time.Time) {
	st := l.rn.Status()
	prev := l.c.quorum.Load()
	q := &Quorum{Leader: nodeID(st.Lead), Epoch: int64(st.GetTerm()), HighWatermark: int64(st.GetCommit()),
		IsLeader: st.RaftState == raft.StateLeader}
	replica := func(id uint64, prevs []QuorumVoter) QuorumVoter {
		v := QuorumVoter{ID: nodeID(id), LogEndOffset: -1}
		if i := slices.IndexFunc(prevs, func(p QuorumVoter) bool { return p.ID == v.ID }); i >= 0 {
			v.LastFetch, v.LastCaughtUp = prevs[i].LastFetch, prevs[i].LastCaughtUp
		}
		if pr, ok := st.Progress[id]; ok && q.IsLeader {
			v.LogEndOffset = int64(pr.Match)
			if pr.RecentActive || id == st.ID {
				v.LastFetch = now
			}
			if pr.Match >= st.GetCommit() {
				v.LastCaughtUp = now
			}
		}
		return v
	}
	for _, id := range l.confState.GetVoters() {
		v := replica(id, prev.GetVoters())
		v.Addr = l.c.cfg.ControllerAddr
		if i := slices.IndexFunc(l.c.cfg.Peers, func(p Peer) bool { return raftID(p.ID) == id }); i >= 0 {
			v.Addr = l.c.cfg.Peers[i].Addr
		}
		q.Voters = append(q.Voters, v)
	}
	for _, id := range l.confState.GetLearners() {
		q.Observers = append(q.Observers, replica(id, prev.GetObservers()))
	}
	l.c.quorum.Store(q)
	if b, ok := l.c.cfg.Transport.(Broadcaster); ok && q.IsLeader && now.Sub(l.quorumAt) >= relayEvery {
		l.quorumAt = now
		b.Broadcast(encodeQuorum(q))
	}
}

// GetVoters and GetObservers are nil-safe.
func (q *Quorum) GetVoters() []QuorumVoter {
	if q == nil {
		return nil
	}
	return q.Voters
}

func (q *Quorum) GetObservers() []QuorumVoter {
	if q == nil {
		return nil
	}
	return q.Observers
}
