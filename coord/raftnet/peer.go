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
// goroutine (run) that owns the connection, dials it with backoff, and
// writes what is queued in batches.
type peer struct {
	t      *Transport
	id     int32
	addr   string
	queue  chan *pb.Message // never closed: Send may race with removal
	ctx    context.Context
	cancel context.CancelFunc
}

// Batching: a batch takes at most maxBatch queued messages, and a write
// carries at most flushBytes (plus one message) so the buffer stays small.
const (
	maxBatch   = 256
	flushBytes = 1 << 20
)

func newPeer(t *Transport, id int32, addr string) *peer {
	p := &peer{t: t, id: id, addr: addr, queue: make(chan *pb.Message, t.cfg.QueueSize)}
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
		batch     = make([]*pb.Message, 0, maxBatch)
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
		select {
		case <-p.ctx.Done():
			return
		case m := <-p.queue:
			batch = append(batch[:0], m)
		}
		for more := true; more && len(batch) < maxBatch; {
			select {
			case m := <-p.queue:
				batch = append(batch, m)
			default:
				more = false
			}
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

// dial connects to the peer and exchanges hellos.
func (p *peer) dial() (_ net.Conn, err error) {
	t := p.t
	d := net.Dialer{Timeout: t.cfg.DialTimeout}
	conn, err := d.DialContext(p.ctx, "tcp", p.addr)
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
func (p *peer) write(conn net.Conn, batch []*pb.Message, buf []byte) ([]byte, error) {
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
			conn.SetWriteDeadline(time.Now().Add(t.cfg.WriteTimeout))
			if _, err := conn.Write(buf[off:min(off+flushBytes, len(buf))]); err != nil {
				p.lost(batch[first:])
				return err
			}
		}
		t.stats.sent.Add(uint64(next - first))
		buf, first = buf[:0], next
		return nil
	}
	for i, m := range batch {
		var err error
		buf, err = appendMessage(buf, m, t.cfg.MaxMessageBytes+1)
		if err != nil {
			t.logger.Error("raftnet: message not sent", "peer", p.id, "type", m.GetType().String(), "err", err)
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

// lost drops msgs: counted, and reported once for the batch (and once per
// snapshot).
func (p *peer) lost(msgs []*pb.Message) {
	t := p.t
	if len(msgs) == 0 || p.ctx.Err() != nil {
		return
	}
	t.stats.dropped.Add(uint64(len(msgs)))
	if f := t.cfg.OnSnapshotFailed; f != nil {
		for _, m := range msgs {
			if m.GetType() == pb.MsgSnap {
				f(p.id)
			}
		}
	}
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
