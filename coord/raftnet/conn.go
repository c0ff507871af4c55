package raftnet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// dialConn connects to a controller at addr, with TLS when ClientTLS is
// set, then authenticates with ClientSASL when it is set (the handshakes
// bounded by DialTimeout).
func (t *Transport) dialConn(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: t.cfg.DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, t.cfg.DialTimeout)
	defer cancel()
	if t.cfg.ClientTLS != nil {
		cfg := t.cfg.ClientTLS.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(hctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		conn = tc
	}
	if t.cfg.ClientSASL != nil {
		stop := context.AfterFunc(hctx, func() { conn.Close() })
		conn.SetDeadline(time.Now().Add(t.cfg.DialTimeout))
		err := t.login(hctx, conn, addr)
		if !stop() && err == nil {
			err = hctx.Err()
		}
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", addr, err)
		}
	}
	return conn, nil
}

// accept runs the listener: one goroutine per inbound connection.
func (t *Transport) accept(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if t.ctx.Err() != nil {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// EMFILE and the like: wait a little rather than spin.
			t.logger.Warn("raftnet: accept", "err", err)
			select {
			case <-time.After(t.cfg.Backoff.Min):
				continue
			case <-t.ctx.Done():
				return
			}
		}
		t.wg.Go(func() {
			stop := context.AfterFunc(t.ctx, func() { conn.Close() })
			defer stop()
			defer conn.Close()
			err := t.serve(conn)
			switch {
			case errors.Is(err, errAuth):
				t.stats.authFailures.Add(1)
				t.logger.Warn("raftnet: closing a connection that failed SASL authentication", "remote", conn.RemoteAddr().String(), "err", err)
			case errors.Is(err, errBadFrame):
				// Counted even while closing: serve found it before.
				t.stats.badFrames.Add(1)
				t.logger.Warn("raftnet: closing a connection that broke the protocol", "remote", conn.RemoteAddr().String(), "err", err)
			case t.ctx.Err() != nil, errors.Is(err, io.EOF):
			default:
				t.logger.Info("raftnet: inbound connection closed", "remote", conn.RemoteAddr().String(), "err", err)
			}
		})
	}
}

// deadliner is the part of net.Conn serve needs beyond reading and writing.
type deadliner interface {
	SetDeadline(time.Time) error
}

// serve runs one inbound connection: it reads the peer's hello and answers
// with ours (or a refusal), then reads message frames and delivers them
// until the connection ends or breaks the protocol. Every error that is
// the peer's fault wraps errBadFrame.
func (t *Transport) serve(rw io.ReadWriter) error {
	if d, ok := rw.(deadliner); ok {
		d.SetDeadline(time.Now().Add(t.cfg.DialTimeout))
	}
	fr := newFrameReader(rw, handshakeMaxFrame)
	handshakeErr := func(what string, err error) error {
		var ne net.Error
		switch {
		case errors.Is(err, io.EOF):
			err = io.ErrUnexpectedEOF // a connection that ends before the handshake does
		case errors.As(err, &ne) && ne.Timeout():
			return fmt.Errorf("%w: no %s within %s", errBadFrame, what, t.cfg.DialTimeout)
		}
		return fmt.Errorf("read %s: %w", what, err)
	}
	if len(t.cfg.SASL) > 0 {
		user, err := t.authenticate(rw, fr)
		if err != nil {
			if errors.Is(err, errAuth) || errors.Is(err, errBadFrame) {
				return err
			}
			return handshakeErr("SASL authentication", err)
		}
		t.logger.Debug("raftnet: peer authenticated", "user", user)
	}
	kind, payload, err := fr.next()
	if err != nil {
		return handshakeErr("hello", err)
	}
	if kind != kindHello {
		return fmt.Errorf("%w: kind %d instead of a hello", errBadFrame, kind)
	}
	theirs, err := decodeHello(payload)
	if err != nil {
		return err
	}
	if theirs.to == anyNode {
		return t.serveLearner(rw, fr, theirs)
	}
	if reason := t.checkHello(theirs); reason != "" {
		refusal := fmt.Sprintf("node %d refuses node %d: %s", t.cfg.NodeID, theirs.from, reason)
		rw.Write(appendFrame(nil, kindRefuse, []byte(refusal[:min(len(refusal), maxRefuseLen)])))
		return fmt.Errorf("%w: hello refused: %s", errBadFrame, reason)
	}
	mine := hello{version: Version, from: t.cfg.NodeID, to: theirs.from, cluster: t.cfg.ClusterID}
	if _, err := rw.Write(appendFrame(nil, kindHello, appendHello(nil, mine))); err != nil {
		return fmt.Errorf("send hello: %w", err)
	}
	if d, ok := rw.(deadliner); ok {
		// A follower may have nothing to say to another for long; a
		// dead peer is found by TCP keepalive.
		d.SetDeadline(time.Time{})
	}
	fr.max = 1 + t.cfg.MaxMessageBytes
	return t.readFrames(fr, theirs.from, nil)
}

// readFrames reads the frames of a connection from node from after the
// hellos: raft messages go to Deliver, quorum frames to DeliverQuorum,
// and voters frames (which only a learner receives, from a controller) to
// voters; with voters nil a voters frame is a bad frame. It returns when
// the connection ends or breaks the protocol.
func (t *Transport) readFrames(fr *frameReader, from int32, voters func([]voter)) error {
	self, raftFrom := RaftID(t.cfg.NodeID), RaftID(from)
	for {
		kind, payload, err := fr.next()
		if err != nil {
			return err
		}
		switch {
		case kind == kindQuorum:
			if f := t.cfg.DeliverQuorum; f != nil {
				f(from, payload)
			}
			continue
		case kind == kindVoters && voters != nil:
			vs, err := decodeVoters(payload)
			if err != nil {
				return err
			}
			voters(vs)
			continue
		case kind != kindMessage:
			return fmt.Errorf("%w: kind %d instead of a message", errBadFrame, kind)
		}
		m := new(pb.Message)
		if err := proto.Unmarshal(payload, m); err != nil {
			return fmt.Errorf("%w: undecodable message: %w", errBadFrame, err)
		}
		if m.GetTo() != self || m.GetFrom() != raftFrom {
			return fmt.Errorf("%w: message from raft id %d to %d on a connection from node %d to node %d",
				errBadFrame, m.GetFrom(), m.GetTo(), from, t.cfg.NodeID)
		}
		if err := t.cfg.Deliver(t.ctx, m); err != nil {
			return fmt.Errorf("deliver: %w", err)
		}
		t.stats.received.Add(1)
	}
}

// checkHello returns why a dialer's hello is unacceptable, "" if it is fine.
func (t *Transport) checkHello(h hello) string {
	t.mu.RLock()
	_, known := t.mu.addrs[h.from]
	t.mu.RUnlock()
	if !known {
		return fmt.Sprintf("node %d is not one of its peers", h.from)
	}
	return h.check(hello{version: Version, from: t.cfg.NodeID, to: h.from, cluster: t.cfg.ClusterID})
}
