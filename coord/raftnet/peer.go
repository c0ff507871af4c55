package raftnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// peer is the writer of one peer: a bounded queue that Send fills, and a
// goroutine that owns the connection and writes what is queued in batches.
// For another voter that goroutine is run: it dials the peer with backoff.
// For a learner's connection (learner.go) it is pump, on a connection the
// learner dialed.
type peer struct {
	t      *Transport
	id     int32
	addr   string
	queue  chan outbound // never closed: Send may race with removal
	ctx    context.Context
	cancel context.CancelFunc
}

// outbound is one item of a peer's queue: a raft message, or, with m nil,
// the payload of a quorum frame (Broadcast).
type outbound struct {
	m      *pb.Message
	quorum []byte
}

// Batching: a batch takes at most maxBatch queued messages, and a write
// carries at most flushBytes (plus one message) so the buffer stays small.
const (
	maxBatch   = 256
	flushBytes = 1 << 20
)

func newPeer(t *Transport, id int32, addr string) *peer {
	p := &peer{t: t, id: id, addr: addr, queue: make(chan outbound, t.cfg.QueueSize)}
	p.ctx, p.cancel = context.WithCancel(t.ctx)
	return p
}

func (p *peer) run() {
	t := p.t
	logger := t.logger.With("peer", p.id, "addr", p.addr)
	var (
		conn      net.Conn
		unwatch   func() bool // stops closing conn on Close
		buf       []byte
		batch     = make([]outbound, 0, maxBatch)
		backoff   = t.cfg.Backoff.Min
		connected bool // ever, to tell reconnects
		failing   bool // the last dial failed: log repeats quietly
	)
	hangUp := func() {
		unwatch()
		conn.Close()
		conn = nil
	}
	defer func() {
		if conn != nil {
			hangUp()
		}
	}()
	for {
		var ok bool
		if batch, ok = p.take(batch, p.ctx.Done()); !ok {
			return
		}
		if conn == nil {
			c, err := p.dial()
			if err != nil {
				if p.ctx.Err() != nil {
					return
				}
				if failing {
					logger.Debug("raftnet: dial failed", "err", err)
				} else {
					logger.Warn("raftnet: cannot reach peer, retrying", "err", err)
				}
				failing = true
				p.lost(batch)
				if !p.sleep(jitter(backoff)) {
					return
				}
				backoff = min(2*backoff, t.cfg.Backoff.Max)
				continue
			}
			conn, backoff, failing = c, t.cfg.Backoff.Min, false
			// Close (or removal) closes the connection under a blocked write.
			unwatch = context.AfterFunc(p.ctx, func() { c.Close() })
			t.stats.connects.Add(1)
			if connected {
				t.stats.reconnects.Add(1)
			}
			connected = true
			logger.Info("raftnet: connected to peer")
		}
		var err error
		buf, err = p.write(conn, batch, buf)
		if cap(buf) > keepBuf {
			buf = nil
		}
		if err != nil {
			hangUp()
			if p.ctx.Err() != nil {
				return
			}
			logger.Warn("raftnet: write to peer failed, reconnecting", "err", err)
		}
	}
}

// take waits for something queued, then takes up to maxBatch items into
// batch. It returns false once done is closed.
func (p *peer) take(batch []outbound, done <-chan struct{}) ([]outbound, bool) {
	select {
	case <-done:
		return batch, false
	case o := <-p.queue:
		batch = append(batch[:0], o)
	}
	for len(batch) < maxBatch {
		select {
		case o := <-p.queue:
			batch = append(batch, o)
		default:
			return batch, true
		}
	}
	return batch, true
}

// dial connects to the peer and exchanges hellos.
func (p *peer) dial() (_ net.Conn, err error) {
	t := p.t
	conn, err := t.dialConn(p.ctx, p.addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(p.ctx, func() { conn.Close() })
	defer func() {
		if !stop() && err == nil {
			err = p.ctx.Err()
		}
		if err != nil {
			conn.Close()
		}
	}()
	// The dial's own deadline does not cover the hello exchange.
	conn.SetDeadline(time.Now().Add(t.cfg.DialTimeout))
	mine := hello{version: Version, from: t.cfg.NodeID, to: p.id, cluster: t.cfg.ClusterID}
	if _, err := conn.Write(appendFrame(nil, kindHello, appendHello(nil, mine))); err != nil {
		return nil, fmt.Errorf("send hello: %w", err)
	}
	kind, payload, err := newFrameReader(conn, handshakeMaxFrame).next()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.New("peer closed the connection during the handshake (its log says why)")
	}
	if err != nil {
		return nil, fmt.Errorf("read hello: %w", err)
	}
	switch kind {
	case kindRefuse:
		return nil, fmt.Errorf("peer refused the connection: %q", payload)
	case kindHello:
	default:
		return nil, fmt.Errorf("%w: kind %d instead of a hello", errBadFrame, kind)
	}
	theirs, err := decodeHello(payload)
	if err != nil {
		return nil, err
	}
	if reason := theirs.check(hello{version: Version, from: t.cfg.NodeID, to: p.id, cluster: t.cfg.ClusterID}); reason != "" {
		return nil, fmt.Errorf("peer's hello: %s", reason)
	}
	conn.SetDeadline(time.Time{})
	return conn, nil
}

// write encodes batch into buf and writes it, in writes of about
// flushBytes, each of which must finish within WriteTimeout. A message too large is dropped and the rest go on. On a
// failed write the messages not yet written are lost.
func (p *peer) write(conn io.Writer, batch []outbound, buf []byte) ([]byte, error) {
	t := p.t
	buf = buf[:0]
	first := 0 // first message in buf
	flush := func(next int) error {
		if len(buf) == 0 {
			first = next
			return nil
		}
		// The deadline bounds a MiB, not the whole: a large snapshot
		// on a slow link goes through, a peer that stops reading does not.
		for off := 0; off < len(buf); off += flushBytes {
			if d, ok := conn.(writeDeadliner); ok {
				d.SetWriteDeadline(time.Now().Add(t.cfg.WriteTimeout))
			}
			if _, err := conn.Write(buf[off:min(off+flushBytes, len(buf))]); err != nil {
				p.lost(batch[first:])
				return err
			}
		}
		t.stats.sent.Add(uint64(next - first))
		if f := t.cfg.OnSnapshot; f != nil {
			for _, o := range batch[first:next] {
				if o.m != nil && o.m.GetType() == pb.MsgSnap {
					f(p.id, true)
				}
			}
		}
		buf, first = buf[:0], next
		return nil
	}
	for i, o := range batch {
		var err error
		if o.m == nil {
			buf = appendFrame(buf, kindQuorum, o.quorum)
		} else if buf, err = appendMessage(buf, o.m, t.cfg.MaxMessageBytes+1); err != nil {
			t.logger.Error("raftnet: message not sent", "peer", p.id, "type", o.m.GetType().String(), "err", err)
			if errors.Is(err, errTooLarge) {
				t.stats.tooLarge.Add(1)
			}
			// Written or not, what precedes it goes first.
			if err := flush(i); err != nil {
				return buf, err
			}
			first = i + 1
			p.lost(batch[i : i+1])
			continue
		}
		if len(buf) >= flushBytes {
			if err := flush(i + 1); err != nil {
				return buf, err
			}
		}
	}
	return buf, flush(len(batch))
}

// writeDeadliner is the part of net.Conn write needs beyond writing.
type writeDeadliner interface {
	SetWriteDeadline(time.Time) error
}

// lost drops the messages of batch: counted, and reported once for the
// batch (and once per snapshot). Quorum frames are not counted: raft
// does not know of them.
func (p *peer) lost(batch []outbound) {
	t := p.t
	if p.ctx.Err() != nil {
		return
	}
	n := 0
	for _, o := range batch {
		if o.m == nil {
			continue
		}
		n++
		if o.m.GetType() == pb.MsgSnap && t.cfg.OnSnapshot != nil {
			t.cfg.OnSnapshot(p.id, false)
		}
	}
	if n == 0 {
		return
	}
	t.stats.dropped.Add(uint64(n))
	if f := t.cfg.OnUnreachable; f != nil {
		f(p.id)
	}
}

// sleep waits d, false if the peer stops first.
func (p *peer) sleep(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// jitter spreads d over [d/2, d) so that peers do not dial in step.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}
