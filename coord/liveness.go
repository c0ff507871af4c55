package coord

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"kzero/coord/control"
	"kzero/coord/metadata"
)

// The active controller runs on the quorum leader's raft loop: every tick
// it decides, with coord/control, what broker liveness asks for (unfence a
// broker that caught up, fence one whose session expired, move or drop the
// leaderships of fenced and shutting-down brokers), elects leaders for
// leaderless partitions of topics that allow an unclean election, and, with
// auto.leader.rebalance.enable, every leader.imbalance.check.interval.seconds
// moves leaderships back to preferred replicas; removes the delegation
// tokens that expired; and proposes it.
//
// Liveness comes from the quorum's own traffic rather than a
// BrokerHeartbeat RPC: every kzero broker is a voter or a learner of the
// quorum, and the raft leader hears from each several times a second
// (raft's RecentActive). A node heard from this tick has heartbeaten,
// reporting the metadata offset the leader knows it holds; one silent for
// broker.session.timeout.ms is fenced. Controller-only voters register no
// broker and have nothing to heartbeat. A node leaving on purpose decides
// its own controlled shutdown (ControlledShutdown) and proposes it.

// activeController is the loop's state while this node leads the quorum.
type activeController struct {
	ctl      *control.Controller
	inflight uint64    // the Seq of the loop's own proposal not yet applied; 0: none
	sentAt   time.Time // when it was proposed
}

// inflightWait is how long the loop waits for its proposal to apply before
// deciding again (raft may have dropped it).
const inflightWait = 5 * time.Second

// drive runs the active controller for one tick; the loop calls it after
// observeQuorum.
func (l *loop) drive(now time.Time) {
	c := l.c
	q := c.quorum.Load()
	if q == nil || !q.IsLeader {
		l.active = nil
		return
	}
	if l.active == nil {
		// A new leader: every broker gets a whole session from now.
		l.active = &activeController{ctl: control.New(c.controlConfig())}
	}
	a := l.active
	if a.inflight != 0 && now.Sub(a.sentAt) < inflightWait {
		return
	}
	a.inflight = 0
	img := c.image.Load()
	var groups [][]metadata.Record
	for _, v := range slices.Concat(q.Voters, q.Observers) {
		b, ok := img.Broker(v.ID)
		if !ok || !v.LastFetch.Equal(now) {
			continue // not registered, or not heard from this tick
		}
		g, _ := a.ctl.Heartbeat(img, now, control.Heartbeat{Broker: b.ID, Epoch: b.Epoch, Offset: v.LogEndOffset,
			WantShutdown: b.InControlledShutdown})
		groups = append(groups, g...)
	}
	groups = append(groups, a.ctl.Tick(img, now)...)
	groups = append(groups, expiredTokens(img, now)...)
	if len(groups) == 0 {
		return
	}
	seq := c.seq.Add(1)
	data := metadata.AppendProposal(nil, &metadata.Proposal{Proposer: c.cfg.NodeID, Session: c.session, Seq: seq, Groups: groups})
	if err := l.rn.Propose(data); err != nil {
		return // leadership lost meanwhile: the next leader decides
	}
	a.inflight, a.sentAt = seq, now
}

// applied tells the active controller that one of the loop's own proposals
// applied.
func (l *loop) ownApplied(seq uint64) {
	if l.active != nil && l.active.inflight == seq {
		l.active.inflight = 0
	}
}

// ControlledShutdown moves this broker's partition leaderships away before
// it stops, as Kafka's controlled shutdown does: it decides the shutdown on
// the current image (the same decision the active controller makes for a
// heartbeat that wants shutdown), proposes it, and waits until no
// partition names this broker its leader, or ctx ends. A single voter
// without learners has no one to hand leadership to: it returns at once.
func (c *Controller) ControlledShutdown(ctx context.Context) error {
	if len(c.cfg.Peers) == 0 && c.cfg.Role != BrokerOnly && len(c.conf.Load().GetLearners()) == 0 {
		return nil
	}
	var leaderless time.Time // since when no quorum leader is known
	for ctx.Err() == nil {
		if q := c.Quorum(); q.Leader >= 0 {
			leaderless = time.Time{}
		} else if leaderless.IsZero() {
			leaderless = time.Now()
		} else if time.Since(leaderless) > 3*c.cfg.TickInterval*electionTicks {
			return errors.New("controlled shutdown: the metadata quorum has no leader")
		}
		img := c.Image()
		b, ok := img.Broker(c.cfg.NodeID)
		if !ok || b.Fenced {
			return nil
		}
		if !leadsAny(img, c.cfg.NodeID) {
			return nil
		}
		if !b.InControlledShutdown {
			groups, reply := control.New(c.controlConfig()).Heartbeat(img, time.Now(),
				control.Heartbeat{Broker: b.ID, Epoch: b.Epoch, Offset: img.Offset(), WantShutdown: true})
			if reply.Err != nil {
				return fmt.Errorf("controlled shutdown: %w", reply.Err)
			}
			if len(groups) > 0 {
				// A proposal forwarded to a leader that just died is lost:
				// each attempt has an election's time, then it is decided
				// again.
				actx, cancel := context.WithTimeout(ctx, 2*c.cfg.TickInterval*electionTicks)
				_, err := c.propose(actx, groups)
				cancel()
				if err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
					return fmt.Errorf("controlled shutdown: %w", err)
				}
				continue // decided again on the image that answered
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("controlled shutdown: %w", ctx.Err())
}

func leadsAny(img *metadata.Image, id int32) bool {
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			if p.Leader == id {
				return true
			}
		}
	}
	return false
}
