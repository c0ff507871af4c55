package coord

import (
	"slices"
	"time"

	"go.etcd.io/raft/v3"
)

// Quorum is the metadata quorum as this controller sees it, for
// DescribeQuorum. Only the leader knows how far each voter got.
type Quorum struct {
	Leader        int32 // -1 when none is known
	Epoch         int64 // the raft term
	HighWatermark int64 // the committed index: entries every voter will keep
	IsLeader      bool
	Voters        []QuorumVoter // by id; offsets and times known on the leader only
}

// QuorumVoter is one voter's progress, as the leader tracks it.
type QuorumVoter struct {
	ID           int32
	Addr         string    // its controller listener, host:port; empty if not configured
	LogEndOffset int64     // the index the leader knows it holds (-1: unknown)
	LastFetch    time.Time // the last tick it was seen active; zero: never
	LastCaughtUp time.Time // the last tick it held the committed index; zero: never
}

// Quorum returns the quorum's state as of the last raft tick. It never
// blocks.
func (c *Controller) Quorum() Quorum {
	if q := c.quorum.Load(); q != nil {
		return *q
	}
	return Quorum{Leader: -1}
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
	for _, id := range l.confState.GetVoters() {
		v := QuorumVoter{ID: nodeID(id), LogEndOffset: -1, Addr: l.c.cfg.ControllerAddr}
		if i := slices.IndexFunc(l.c.cfg.Peers, func(p Peer) bool { return raftID(p.ID) == id }); i >= 0 {
			v.Addr = l.c.cfg.Peers[i].Addr
		}
		if prev != nil {
			if i := slices.IndexFunc(prev.Voters, func(p QuorumVoter) bool { return p.ID == v.ID }); i >= 0 {
				v.LastFetch, v.LastCaughtUp = prev.Voters[i].LastFetch, prev.Voters[i].LastCaughtUp
			}
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
		q.Voters = append(q.Voters, v)
	}
	l.c.quorum.Store(q)
}
