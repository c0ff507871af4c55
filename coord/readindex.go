package coord

import (
	"context"
	"encoding/binary"
	"time"

	"go.etcd.io/raft/v3"
)

// A read barrier brings this node's image up to the quorum's commit index
// as of now, before an admin request decides on it: raft's ReadIndex (the
// leader confirms with a quorum that it still leads and names its commit
// index), then a wait until this node has applied that far. A request
// served by a follower then sees every change committed before it
// arrived, as one Kafka forwards to its active controller does; on the
// leader it costs one heartbeat round.

// readWait is one barrier, owned by the raft loop once sent.
type readWait struct {
	id    uint64
	index uint64 // the commit index to apply; 0 until the leader names it
	ctx   context.Context
	done  chan struct{} // closed once applied
}

// barrierWait bounds a barrier: a quorum without a leader drops the
// request silently, so it is given up after two election timeouts.
func (c *Controller) barrierWait() time.Duration { return 2 * electionTicks * c.cfg.TickInterval }

// caughtUp waits until this node has applied every entry the quorum had
// committed when it was called. It returns an error when the quorum has no
// reachable leader within the barrier's bound (or ctx ends, or the
// controller closes): the caller then decides on the image it has.
func (c *Controller) caughtUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.barrierWait())
	defer cancel()
	w := &readWait{id: c.readSeq.Add(1), ctx: ctx, done: make(chan struct{})}
	select {
	case c.readc <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.runDone:
		return c.closedErr()
	}
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.runDone:
		return c.closedErr()
	}
}

func readCtx(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

// readIndex asks raft for the commit index of a barrier.
func (l *loop) readIndex(w *readWait) {
	l.reads[w.id] = w
	l.rn.ReadIndex(readCtx(w.id))
}

// readStates records the commit indexes raft named for barriers.
func (l *loop) readStates(states []raft.ReadState) {
	for _, rs := range states {
		if len(rs.RequestCtx) != 8 {
			continue
		}
		if w := l.reads[binary.BigEndian.Uint64(rs.RequestCtx)]; w != nil && w.index == 0 {
			w.index = max(rs.Index, 1)
		}
	}
}

// releaseReads ends the barriers whose index this node has applied (the
// image holding it is published), and forgets those whose callers gave up.
func (l *loop) releaseReads() {
	for id, w := range l.reads {
		switch {
		case w.index > 0 && w.index <= l.applied:
			close(w.done)
			delete(l.reads, id)
		case w.ctx.Err() != nil:
			delete(l.reads, id)
		}
	}
}
