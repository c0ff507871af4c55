package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Accept backoff after a failed accept (EMFILE, ENFILE, ENOBUFS, ENOMEM) or
// a failed hand-over to gnet: doubled from the first to the last, reset by
// the next success, as net/http does.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// listen binds the listener kzero owns (gnet gets accepted connections,
// never the listening socket; see doc.go). SO_REUSEADDR lets a restarted
// broker bind at once while connections of the previous process are in
// TIME_WAIT; SO_REUSEPORT stays off, so a second process on a port in use
// still fails to bind. The socket buffer sizes are set on the listener
// before listen(2), so accepted sockets inherit them and the receive
// window scale is negotiated for them.
func (s *Server) listen(addr string) (*net.TCPListener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var opErr error
		err := rc.Control(func(fd uintptr) {
			opErr = setListenerOptions(int(fd), s.cfg.SocketSendBuffer, s.cfg.SocketRecvBuffer)
		})
		if err != nil {
			return err
		}
		return opErr
	}}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return nil, err
	}
	return ln.(*net.TCPListener), nil
}

func setListenerOptions(fd, sndbuf, rcvbuf int) error {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fmt.Errorf("SO_REUSEADDR: %w", err)
	}
	if sndbuf > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, sndbuf); err != nil {
			return fmt.Errorf("SO_SNDBUF: %w", err)
		}
	}
	if rcvbuf > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, rcvbuf); err != nil {
			return fmt.Errorf("SO_RCVBUF: %w", err)
		}
	}
	return nil
}

// listener is one bound listener.
type listener struct {
	Listener
	ln   *net.TCPListener
	addr net.Addr
	path atomic.Int32 // the TLS path of its last connection (tls_handshake.go)
}

// accept takes connections off a listener and hands each to an event
// loop until the listener is closed. An accept that fails (out of
// descriptors or kernel memory) is counted and retried after a backoff;
// the connection waits in the listen backlog meanwhile, and connections
// already open are served as before.
func (s *Server) accept(l *listener) {
	defer s.accepting.Done()
	var backoff time.Duration
	failing := false
	for {
		nc, err := l.ln.AcceptTCP()
		if err == nil && !s.admit(nc, l) { // connection limits (connlimit.go)
			_ = nc.Close()
			continue
		}
		if err == nil && l.TLS != nil {
			// The handshake runs on its own goroutine, so a slow client
			// holds up no other.
			s.accepting.Add(1)
			go s.secure(nc, l)
		} else if err == nil {
			if err = s.handOver(nc, l); err != nil {
				s.releaseAccepted(nc, l)
			}
		}
		if err == nil {
			if failing {
				s.log.Info("accepting connections again")
			}
			backoff, failing = 0, false
			continue
		}
		if errors.Is(err, net.ErrClosed) {
			return
		}
		s.stats.acceptErrors.Add(1)
		backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
		if !failing {
			// Once per run of failures: under descriptor exhaustion this
			// repeats every backoff.
			s.log.Warn("accept failed; retrying with backoff", "err", err)
			failing = true
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-s.acceptStop:
			t.Stop()
			return
		}
	}
}

// handOver registers an accepted connection with an event loop (gnet
// picks the one with the fewest connections). gnet duplicates the
// descriptor, registers the duplicate and closes nc, also on failure (an
// EMFILE for the duplicate is backed off from like a failed accept). It
// returns once the loop has opened the connection, so accepting never runs
// ahead of the loops. The listener (or a TLS connection's handoff) rides
// as the gnet connection's context until OnOpen replaces it with the Conn.
func (s *Server) handOver(nc net.Conn, via any) error {
	if _, err := s.loops.EnrollContext(nc, via); err != nil {
		return fmt.Errorf("hand connection to an event loop: %w", err)
	}
	return nil
}
