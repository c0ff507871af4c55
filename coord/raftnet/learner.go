package raftnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"time"
)

// A learner (a broker-only node) has no controller listener: it dials the
// controllers, and each connection it dials carries messages both ways.
// doc.go ("Learners") says why.

// serveLearner runs, on a controller, a connection a learner dialed (its
// hello's to is anyNode): it answers with its own hello and the voters,
// makes the connection the way to that learner (a writer pumps the
// learner's queue into it), tells OnLearner, and reads what the learner
// sends until the connection ends.
func (t *Transport) serveLearner(rw io.ReadWriter, fr *frameReader, theirs hello) error {
	if reason := t.checkLearner(theirs); reason != "" {
		refusal := fmt.Sprintf("node %d refuses learner %d: %s", t.cfg.NodeID, theirs.from, reason)
		rw.Write(appendFrame(nil, kindRefuse, []byte(refusal[:min(len(refusal), maxRefuseLen)])))
		return fmt.Errorf("%w: learner hello refused: %s", errBadFrame, reason)
	}
	mine := hello{version: Version, from: t.cfg.NodeID, to: theirs.from, cluster: t.cfg.ClusterID}
	b := appendFrame(nil, kindHello, appendHello(nil, mine))
	b = appendFrame(b, kindVoters, appendVoters(nil, t.voters()))
	if _, err := rw.Write(b); err != nil {
		return fmt.Errorf("send hello: %w", err)
	}
	if d, ok := rw.(deadliner); ok {
		d.SetDeadline(time.Time{})
	}
	id := theirs.from
	p := newPeer(t, id, "")
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return nil
	}
	if old := t.mu.learners[id]; old != nil {
		old.cancel() // it reconnected: the old connection is dead or about to be
	}
	t.mu.learners[id] = p
	t.mu.Unlock()
	defer func() {
		p.cancel()
		t.mu.Lock()
		if t.mu.learners[id] == p {
			delete(t.mu.learners, id)
		}
		t.mu.Unlock()
	}()
	if c, ok := rw.(io.Closer); ok {
		// A failed write (or Close) ends the reader too.
		stop := context.AfterFunc(p.ctx, func() { c.Close() })
		defer stop()
	}
	t.wg.Go(func() {
		if err := p.pump(rw, p.ctx.Done()); err != nil && p.ctx.Err() == nil {
			t.logger.Info("raftnet: write to learner failed", "learner", id, "err", err)
		}
		p.cancel()
	})
	if f := t.cfg.OnLearner; f != nil {
		f(id)
	}
	fr.max = 1 + t.cfg.MaxMessageBytes
	return t.readFrames(fr, id, nil)
}

// Learners are the node ids of the learners connected to this controller
// now, sorted: OnLearner told of each, but perhaps before its receiver was
// ready to hear it.
func (t *Transport) Learners() []int32 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Sorted(maps.Keys(t.mu.learners))
}

// checkLearner returns why a learner's hello is unacceptable, "" if fine.
func (t *Transport) checkLearner(h hello) string {
	t.mu.RLock()
	_, voter := t.mu.addrs[h.from]
	t.mu.RUnlock()
	switch {
	case t.cfg.Learner:
		return "it is a learner too"
	case h.from < 0:
		return fmt.Sprintf("node id %d", h.from)
	case voter || h.from == t.cfg.NodeID:
		return fmt.Sprintf("node %d is a voter of the quorum, not a learner", h.from)
	}
	return h.check(hello{version: Version, from: anyNode, to: h.from, cluster: t.cfg.ClusterID})
}

// voters is this controller and its peers, as told to learners.
func (t *Transport) voters() []voter {
	t.mu.RLock()
	self := t.cfg.Advertised
	if self == "" && t.mu.ln != nil {
		self = t.mu.ln.Addr().String()
	}
	out := []voter{{id: t.cfg.NodeID, addr: self}}
	for id, addr := range t.mu.addrs {
		out = append(out, voter{id: id, addr: addr})
	}
	t.mu.RUnlock()
	slices.SortFunc(out, func(a, b voter) int { return int(a.id) - int(b.id) })
	return out
}

// pump writes what is queued for the peer to w until done is closed (nil)
// or a write fails (its error; the batch is lost and reported).
func (p *peer) pump(w io.Writer, done <-chan struct{}) error {
	var buf []byte
	batch := make([]outbound, 0, maxBatch)
	for {
		var ok bool
		if batch, ok = p.take(batch, done); !ok {
			return nil
		}
		var err error
		if buf, err = p.write(w, batch, buf); err != nil {
			return err
		}
		if cap(buf) > keepBuf {
			buf = nil
		}
	}
}

// startLinkLocked starts a learner's link to the controller at addr.
func (t *Transport) startLinkLocked(addr string) {
	t.mu.links[addr] = true
	t.wg.Go(func() { t.runLink(addr) })
}

// learnVoters starts a link to every voter a controller named that this
// learner has no link to yet.
func (t *Transport) learnVoters(vs []voter) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return
	}
	for _, v := range vs {
		if v.id != t.cfg.NodeID && t.mu.peers[v.id] == nil && !t.mu.links[v.addr] {
			t.startLinkLocked(v.addr)
		}
	}
}

// runLink is a learner's link to one controller: it keeps a connection up
// (dialing again with backoff when it ends), delivers what the controller
// sends, and writes what is queued for it. The first hello names the
// controller; a link to a controller another link already reaches stops.
func (t *Transport) runLink(addr string) {
	logger := t.logger.With("controller", addr)
	backoff := t.cfg.Backoff.Min
	var p *peer
	failing, connected := false, false
	for {
		conn, fr, id, err := t.dialController(addr)
		if err == nil && p != nil && id != p.id {
			conn.Close()
			err = fmt.Errorf("node %d answers at %s, which was node %d", id, addr, p.id)
		}
		if err != nil {
			if t.ctx.Err() != nil {
				return
			}
			if failing {
				logger.Debug("raftnet: dial failed", "err", err)
			} else {
				logger.Warn("raftnet: cannot reach controller, retrying", "err", err)
			}
			failing = true
			if !sleepCtx(t.ctx, jitter(backoff)) {
				return
			}
			backoff = min(2*backoff, t.cfg.Backoff.Max)
			continue
		}
		failing, backoff = false, t.cfg.Backoff.Min
		if p == nil {
			t.mu.Lock()
			if t.mu.closed || t.mu.peers[id] != nil {
				t.mu.Unlock()
				conn.Close()
				return // closing, or another address of the same controller
			}
			p = newPeer(t, id, addr)
			t.mu.peers[id] = p
			t.mu.Unlock()
		}
		t.stats.connects.Add(1)
		if connected {
			t.stats.reconnects.Add(1)
		}
		connected = true
		logger.Info("raftnet: connected to controller", "id", id)

		// One connection's life: the reader delivers, pump writes, and
		// the end of either ends both.
		cctx, cancel := context.WithCancel(p.ctx)
		stop := context.AfterFunc(cctx, func() { conn.Close() })
		read := make(chan error, 1)
		t.wg.Go(func() {
			read <- t.readFrames(fr, id, t.learnVoters)
			cancel()
		})
		werr := p.pump(conn, cctx.Done())
		cancel()
		rerr := <-read
		stop()
		conn.Close()
		if t.ctx.Err() != nil {
			return
		}
		if errors.Is(rerr, errBadFrame) {
			t.stats.badFrames.Add(1)
		}
		logger.Warn("raftnet: connection to controller ended, reconnecting", "read", rerr, "write", werr)
		if !sleepCtx(t.ctx, jitter(backoff)) {
			return
		}
	}
}

// dialController connects a learner to a controller and exchanges hellos:
// it returns the connection, its frame reader (which may hold what
// followed the hello) and the controller's node id.
func (t *Transport) dialController(addr string) (_ net.Conn, _ *frameReader, _ int32, err error) {
	conn, err := t.dialConn(t.ctx, addr)
	if err != nil {
		return nil, nil, 0, err
	}
	stop := context.AfterFunc(t.ctx, func() { conn.Close() })
	defer func() {
		if !stop() && err == nil {
			err = t.ctx.Err()
		}
		if err != nil {
			conn.Close()
		}
	}()
	conn.SetDeadline(time.Now().Add(t.cfg.DialTimeout))
	mine := hello{version: Version, from: t.cfg.NodeID, to: anyNode, cluster: t.cfg.ClusterID}
	if _, err := conn.Write(appendFrame(nil, kindHello, appendHello(nil, mine))); err != nil {
		return nil, nil, 0, fmt.Errorf("send hello: %w", err)
	}
	fr := newFrameReader(conn, handshakeMaxFrame)
	kind, payload, err := fr.next()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, nil, 0, errors.New("controller closed the connection during the handshake (its log says why)")
	}
	if err != nil {
		return nil, nil, 0, fmt.Errorf("read hello: %w", err)
	}
	switch kind {
	case kindRefuse:
		return nil, nil, 0, fmt.Errorf("controller refused the connection: %q", payload)
	case kindHello:
	default:
		return nil, nil, 0, fmt.Errorf("%w: kind %d instead of a hello", errBadFrame, kind)
	}
	theirs, err := decodeHello(payload)
	if err != nil {
		return nil, nil, 0, err
	}
	if theirs.from < 0 {
		return nil, nil, 0, fmt.Errorf("controller's hello from node %d", theirs.from)
	}
	if reason := theirs.check(hello{version: Version, from: t.cfg.NodeID, to: theirs.from, cluster: t.cfg.ClusterID}); reason != "" {
		return nil, nil, 0, fmt.Errorf("controller's hello: %s", reason)
	}
	conn.SetDeadline(time.Time{})
	fr.max = max(1+t.cfg.MaxMessageBytes, maxVotersFrame)
	return conn, fr, theirs.from, nil
}

// sleepCtx waits d, false if ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
