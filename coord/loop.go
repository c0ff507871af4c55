package coord

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"kzero/coord/metadata"
	"kzero/coord/wal"
)

// loop is the raft loop's state; only its goroutine touches it.
type loop struct {
	c         *Controller
	rn        *raft.RawNode
	st        *wal.Storage
	confState *pb.ConfState
	applied   uint64 // index of the last entry applied to the image
	snapIndex uint64 // index of the newest snapshot
	lead      uint64 // raft id of the leader, 0 if unknown
	pending   map[uint64]*pending
	reads     map[uint64]*readWait // read barriers (readindex.go)
	active    *activeController    // while this node leads the quorum
	learners  learnerState         // learner changes to propose (learner.go)
	quorumAt  time.Time            // when the leader last broadcast its view
	snapNow   bool                 // snapshot after this Ready: the configuration grew
}

// run drives raft: ticks, proposals and incoming messages step the node;
// each Ready is persisted, sent, applied and advanced, in that order.
func (l *loop) run() {
	c := l.c
	defer close(c.runDone)
	defer l.failPending()
	ticker := time.NewTicker(c.cfg.TickInterval)
	defer ticker.Stop()
	if cs := l.confState; len(cs.GetVoters()) == 1 && cs.GetVoters()[0] == raftID(c.cfg.NodeID) {
		// The only voter: no one to wait for, elect ourselves now.
		if err := l.rn.Campaign(); err != nil {
			c.logger.Warn("metadata: campaign", "err", err)
		}
	}
	for {
		for l.rn.HasReady() {
			if err := l.handleReady(l.rn.Ready()); err != nil {
				c.logger.Error("metadata: raft loop stops", "err", err)
				c.failed.Store(&err)
				return
			}
		}
		select {
		case now := <-ticker.C:
			l.rn.Tick()
			l.expire()
			l.observeQuorum(now)
			l.drive(now)
			l.changeLearners(now, l.c.quorum.Load().IsLeader)
		case p := <-c.proposec:
			l.propose(p)
			// Take whatever else is queued: one Ready, one fsync for all.
			for more := true; more; {
				select {
				case p := <-c.proposec:
					l.propose(p)
				default:
					more = false
				}
			}
		case w := <-c.readc:
			l.readIndex(w)
		case r := <-c.confc:
			l.confRequest(r)
		case m := <-c.recvc:
			if err := l.rn.Step(m); err != nil {
				c.logger.Debug("metadata: step", "err", err)
			}
		case peer := <-c.reportc:
			l.rn.ReportUnreachable(raftID(peer))
		case <-c.snapc:
			for peer, sent := range c.takeSnapshotReports() {
				status := raft.SnapshotFailure
				if sent {
					status = raft.SnapshotFinish
				}
				l.rn.ReportSnapshot(raftID(peer), status)
			}
		case <-c.stopc:
			return
		}
	}
}

func (l *loop) propose(p *pending) {
	l.pending[p.seq] = p
	if err := l.rn.Propose(p.data); err != nil {
		// ErrProposalDropped: no leader, or a leader transfer under way.
		delete(l.pending, p.seq)
		res := make([]error, countGroups(p.data))
		for i := range res {
			res[i] = metadata.Reject(kerr.NotController, "no metadata quorum leader: %v", err)
		}
		p.done <- res
	}
}

// unknownOutcomes answers every pending proposal REQUEST_TIMED_OUT: a
// snapshot from the leader replaced this node's log, and a proposal whose
// entry it covers will never be applied here one by one, so no answer
// would come. Whether it applied is unknown, as after a timeout.
func (l *loop) unknownOutcomes() []delivery {
	var done []delivery
	for seq, p := range l.pending {
		res := make([]error, countGroups(p.data))
		for i := range res {
			res[i] = metadata.Reject(kerr.RequestTimedOut, "outcome unknown: this node caught up with the quorum by snapshot while the change was pending")
		}
		done = append(done, delivery{p, res})
		delete(l.pending, seq)
	}
	return done
}

// countGroups reads the group count of an encoded Proposal.
func countGroups(data []byte) int {
	p, err := metadata.DecodeProposal(data)
	if err != nil {
		return 0
	}
	return len(p.Groups)
}

// expire forgets proposals whose callers gave up: raft may have dropped
// them (a follower forwarding to a leader that changed).
func (l *loop) expire() {
	for seq, p := range l.pending {
		if p.ctx.Err() != nil {
			delete(l.pending, seq)
		}
	}
	l.releaseReads() // forgets barriers whose callers gave up
}

func (l *loop) failPending() {
	for seq := range l.pending {
		delete(l.pending, seq) // their callers see runDone closed
	}
	clear(l.reads)
}

func (l *loop) handleReady(rd raft.Ready) error {
	c := l.c
	if !raft.IsEmptySnap(rd.Snapshot) {
		// A leader sent us its state: replace ours.
		if err := l.st.ApplySnapshot(rd.Snapshot); err != nil {
			return err
		}
		meta := rd.Snapshot.GetMetadata()
		img, err := metadata.DecodeImage(rd.Snapshot.GetData(), int64(meta.GetIndex()))
		if err != nil {
			return fmt.Errorf("snapshot from leader: %w", err)
		}
		l.confState = meta.GetConfState()
		c.conf.Store(l.confState)
		l.applied, l.snapIndex = meta.GetIndex(), meta.GetIndex()
		c.snapsIn.Add(1)
		l.publish(img, l.unknownOutcomes())
	}
	if err := l.st.Save(rd.HardState, rd.Entries, rd.MustSync); err != nil {
		return err
	}
	if len(rd.Messages) > 0 && c.cfg.Transport != nil {
		c.cfg.Transport.Send(rd.Messages)
	}
	repropose := false
	if rd.SoftState != nil {
		repropose = rd.SoftState.Lead != l.lead && rd.SoftState.Lead != 0 && len(l.pending) > 0
		l.lead = rd.SoftState.Lead
		defer l.observeQuorum(time.Now()) // after Advance: leadership moved
	}
	next, done := l.applyEntries(rd.CommittedEntries)
	if next == nil && nodeID(l.lead) != c.image.Load().ControllerID() {
		next = c.image.Load()
	}
	if next != nil {
		if id := nodeID(l.lead); next.ControllerID() != id {
			next = next.WithController(id)
		}
		l.publish(next, done)
	}
	l.readStates(rd.ReadStates)
	l.releaseReads()
	l.rn.Advance(rd)
	if repropose {
		l.repropose()
	}
	return l.maybeSnapshot()
}

// repropose proposes the pending proposals again to a new leader: one
// forwarded to a leader that died before appending it is lost, and its
// caller would wait out its whole timeout. One that the new leader has
// after all applies twice: the first to apply answers its caller (same
// Seq), and the copy is checked again against the image it meets
// (metadata.Builder.Check), so a create, a registration or an ISR change
// that already applied is refused and changes nothing.
func (l *loop) repropose() {
	for _, p := range l.pending {
		if err := l.rn.Propose(p.data); err != nil {
			return // no leader after all: the callers wait or time out
		}
	}
}

// applyEntries applies committed entries to a new image, and collects the
// answers to this controller's proposals among them. It returns nil for no
// entries.
func (l *loop) applyEntries(ents []*pb.Entry) (*metadata.Image, []delivery) {
	if len(ents) == 0 {
		return nil, nil
	}
	c := l.c
	b := metadata.NewBuilder(c.image.Load())
	var done []delivery
	for _, e := range ents {
		switch e.GetType() {
		case pb.EntryConfChange, pb.EntryConfChangeV2:
			l.applyConfChange(e)
		case pb.EntryNormal:
			if len(e.GetData()) == 0 {
				continue // a new leader's empty entry
			}
			p, err := metadata.DecodeProposal(e.GetData())
			if err != nil {
				// Every voter skips it alike, so images stay equal.
				c.logger.Error("metadata: skipping undecodable entry", "index", e.GetIndex(), "err", err)
				continue
			}
			results := b.ApplyProposal(p, int64(e.GetIndex()))
			for _, rej := range results {
				if errors.Is(rej, kerr.UnknownServerError) {
					c.logger.Error("metadata: group failed to apply", "index", e.GetIndex(), "err", rej.Error())
				}
			}
			if p.Proposer == c.cfg.NodeID && p.Session == c.session {
				l.ownApplied(p.Seq)
				if w := l.pending[p.Seq]; w != nil {
					delete(l.pending, p.Seq)
					done = append(done, delivery{w, results})
				}
			}
		}
	}
	l.applied = ents[len(ents)-1].GetIndex()
	return b.Finish(int64(l.applied)), done
}

// publish makes img current and queues it for the notifier.
func (l *loop) publish(img *metadata.Image, done []delivery) {
	c := l.c
	c.image.Store(img)
	c.enqueue(update{next: img, done: done})
}

// maybeSnapshot snapshots the image every SnapshotEvery applied entries and
// compacts the log behind it. A single voter keeps no entries; with peers
// or learners, some stay so that one a little behind catches up from the
// log.
func (l *loop) maybeSnapshot() error {
	c := l.c
	if l.applied <= l.snapIndex || (!l.snapNow && l.applied < l.snapIndex+c.cfg.SnapshotEvery) {
		return nil
	}
	l.snapNow = false
	img := c.image.Load()
	if uint64(img.Offset()) != l.applied {
		return errors.New("image offset and applied index disagree")
	}
	compact := l.applied
	if len(l.confState.GetVoters())+len(l.confState.GetLearners()) > 1 {
		keep := uint64(c.cfg.SnapshotKeep)
		compact = max(l.snapIndex, l.applied-min(l.applied, keep))
	}
	if err := l.st.CreateSnapshot(l.applied, l.confState, metadata.EncodeImage(img), compact); err != nil {
		return err
	}
	l.snapIndex = l.applied
	c.logger.Debug("metadata: snapshot", "index", l.applied, "topics", img.TopicCount())
	return nil
}
