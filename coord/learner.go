package coord

import (
	"maps"
	"slices"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Broker-only nodes are raft learners (doc.go, "Learners"). A learner's
// transport connects to the voters; each voter hears of it (AddLearner),
// and the quorum leader proposes a ConfChangeV2 adding it, one change at a
// time, again every election timeout until it applies. UnregisterBroker of
// a learner removes it the same way (removeLearner), from whichever node
// served the request.

// confRequest asks the raft loop to add (or remove) a learner.
type confRequest struct {
	id  int32
	add bool
}

// learnerState is the raft loop's bookkeeping of learner changes.
type learnerState struct {
	want   map[int32]bool // connected learners to add, on the leader
	unwant map[int32]bool // learners to remove
	sentAt time.Time      // when the last conf change was proposed
}

// AddLearner tells the quorum that learner id (a broker-only node) has
// connected to this voter: the quorum leader adds it to the configuration
// unless it is in it. It never blocks (the transport's OnLearner calls
// it); a request that does not fit is dropped, and the learner's next
// connection asks again.
func (c *Controller) AddLearner(id int32) {
	select {
	case c.confc <- confRequest{id: id, add: true}:
	default:
		c.logger.Warn("metadata: learner request dropped", "learner", id)
	}
}

// removeLearner asks the quorum to remove learner id (UnregisterBroker).
func (c *Controller) removeLearner(id int32) {
	select {
	case c.confc <- confRequest{id: id}:
	default:
		c.logger.Warn("metadata: learner removal dropped", "learner", id)
	}
}

// Learners are the node ids of the quorum's learners, as this node has
// applied the configuration.
func (c *Controller) Learners() []int32 {
	var out []int32
	for _, id := range c.conf.Load().GetLearners() {
		out = append(out, nodeID(id))
	}
	return out
}

// confRequest takes a request on the raft loop.
func (l *loop) confRequest(r confRequest) {
	ls := &l.learners
	if r.add {
		if slices.Contains(l.confState.GetVoters(), raftID(r.id)) {
			l.c.logger.Warn("metadata: a voter connected as a learner; ignored", "node", r.id)
			return
		}
		ls.want[r.id] = true
		delete(ls.unwant, r.id)
		return
	}
	delete(ls.want, r.id)
	ls.unwant[r.id] = true
}

// changeLearners proposes the next learner change the loop knows of, at
// most one per election timeout (raft takes one conf change at a time and
// drops a proposal made while another is pending): adds on the leader
// only, removals from any voter or learner (raft forwards them).
func (l *loop) changeLearners(now time.Time, leader bool) {
	ls := &l.learners
	learners := l.confState.GetLearners()
	for id := range ls.want {
		if slices.Contains(learners, raftID(id)) {
			delete(ls.want, id)
		}
	}
	for id := range ls.unwant {
		if !slices.Contains(learners, raftID(id)) {
			delete(ls.unwant, id)
		}
	}
	if now.Sub(ls.sentAt) < electionTicks*l.c.cfg.TickInterval {
		return
	}
	var cc *pb.ConfChangeSingle
	switch {
	case len(ls.unwant) > 0:
		id := slices.Min(slices.Collect(maps.Keys(ls.unwant)))
		cc = &pb.ConfChangeSingle{Type: pb.ConfChangeRemoveNode.Enum(), NodeId: new(raftID(id))}
	case len(ls.want) > 0 && leader:
		id := slices.Min(slices.Collect(maps.Keys(ls.want)))
		cc = &pb.ConfChangeSingle{Type: pb.ConfChangeAddLearnerNode.Enum(), NodeId: new(raftID(id))}
	default:
		return
	}
	ls.sentAt = now
	if err := l.rn.ProposeConfChange(&pb.ConfChangeV2{Changes: []*pb.ConfChangeSingle{cc}}); err != nil {
		l.c.logger.Debug("metadata: conf change not proposed", "err", err)
		return
	}
	l.c.logger.Info("metadata: proposing a learner change", "change", cc.GetType().String(), "node", nodeID(cc.GetNodeId()))
}

// applyConfChange applies a committed conf change entry.
func (l *loop) applyConfChange(e *pb.Entry) {
	var cc pb.ConfChangeI
	if e.GetType() == pb.EntryConfChange {
		cc = new(pb.ConfChange)
	} else {
		cc = new(pb.ConfChangeV2)
	}
	if err := proto.Unmarshal(e.GetData(), cc.(proto.Message)); err != nil {
		l.c.logger.Error("metadata: undecodable conf change", "index", e.GetIndex(), "err", err)
		return
	}
	before := len(l.confState.GetVoters()) + len(l.confState.GetLearners())
	l.confState = l.rn.ApplyConfChange(cc)
	l.c.conf.Store(l.confState)
	if len(l.confState.GetVoters())+len(l.confState.GetLearners()) > before {
		// A new member starts from a snapshot, and refuses one whose
		// configuration does not name it: the leader's newest snapshot
		// must be taken after the change (maybeSnapshot, this Ready).
		l.snapNow = true
	}
	l.c.logger.Info("metadata: configuration changed", "index", e.GetIndex(),
		"voters", nodeIDs(l.confState.GetVoters()), "learners", nodeIDs(l.confState.GetLearners()))
}

func nodeIDs(ids []uint64) []int32 {
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = nodeID(id)
	}
	return out
}
