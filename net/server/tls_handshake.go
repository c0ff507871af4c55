package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
)

// handoff is what rides from a TLS listener's handshake to OnOpen as the
// gnet connection's context: the connection's listener, its TCP
// addresses (a relayed connection's gnet socket is a socket pair), the
// principal of its client certificate, and how its records are protected.
type handoff struct {
	l             *listener
	remote, local net.Addr
	principal     string
	kernel        bool
}

// TLS paths a listener's connections take, for its log line.
const (
	pathNone int32 = iota
	pathKernel
	pathUser
)

// secure runs a TLS connection's handshake, off the acceptor's goroutine
// and bounded by the handshake timeout, then hands the connection to an
// event loop: with kernel TLS when the kernel takes the session's keys,
// through the user-space relay otherwise. A failed handshake closes this
// connection only, and is counted and logged.
func (s *Server) secure(nc *net.TCPConn, l *listener) {
	defer s.accepting.Done()
	t := l.TLS
	ctx, cancel := context.WithTimeout(s.tlsCtx, t.settings.HandshakeTimeout)
	defer cancel()
	w := &tlsWire{Conn: nc}
	cfg := t.Config()
	kernel := !t.settings.DisableKernelTLS
	var kl keyLog
	if kernel {
		cfg = cfg.Clone()
		cfg.KeyLogWriter = &kl
	}
	tc := tls.Server(w, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		s.tlsFailed(nc, l, err)
		return
	}
	st := tc.ConnectionState()
	h := &handoff{l: l, remote: nc.RemoteAddr(), local: nc.LocalAddr()}
	if len(st.PeerCertificates) > 0 {
		p, err := t.principal(st.PeerCertificates[0])
		if err != nil {
			s.tlsFailed(nc, l, err)
			return
		}
		h.principal = p
	}
	s.stats.tlsHandshakes.Add(1)
	why := errors.New("ssl.kernel.offload.enable=false")
	if kernel {
		why = s.offload(nc, w, st, &kl)
		if why == nil {
			h.kernel = true
			s.notePath(l, pathKernel, nil)
			if err := s.handOver(nc, h); err != nil {
				s.releaseAccepted(nc, l)
				s.stats.acceptErrors.Add(1)
				s.log.Warn("closing connection", "listener", l.Name, "remote", h.remote, "err", err)
				return
			}
			s.stats.kernelTLS.Add(1)
			return
		}
		if errors.Is(why, errSpoiled) {
			s.tlsFailed(nc, l, why)
			return
		}
	}
	s.notePath(l, pathUser, why)
	s.relay(tc, nc, h)
}

// offload moves the connection to kernel TLS, if the session's version
// and cipher suite allow and crypto/tls holds no bytes read ahead.
func (s *Server) offload(nc *net.TCPConn, w *tlsWire, st tls.ConnectionState, kl *keyLog) error {
	if !w.atBoundary() {
		return errors.New("the handshake read part of a record")
	}
	k, err := deriveKeys(st, kl, w.serverRandom)
	if err != nil {
		return err
	}
	return offload(nc, k)
}

// tlsFailed closes a connection whose handshake (or certificate mapping)
// failed.
func (s *Server) tlsFailed(nc *net.TCPConn, l *listener, err error) {
	s.stats.tlsFailed.Add(1)
	s.log.Info("closing connection: TLS handshake failed", "listener", l.Name, "remote", nc.RemoteAddr(), "err", err)
	s.releaseAccepted(nc, l)
	_ = nc.Close()
}

// notePath logs which path a listener's connections take, when it
// changes: the first connection's, then any change (a cipher suite the
// kernel cannot take, for instance).
func (s *Server) notePath(l *listener, path int32, why error) {
	if l.path.Swap(path) == path {
		return
	}
	if path == pathKernel {
		s.log.Info("TLS listener uses kernel TLS: fetches are sent with sendfile", "listener", l.Name)
		return
	}
	s.log.Info("TLS listener uses user-space TLS through a relay: fetches are copied", "listener", l.Name, "why", why)
}
