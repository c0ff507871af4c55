package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// relayChunk is the buffer of each direction of a relay: crypto/tls cuts
// what it is given into 16 KiB records.
const relayChunk = 64 << 10

var relayBufs = sync.Pool{New: func() any { b := make([]byte, relayChunk); return &b }}

// relay serves a TLS connection the kernel did not take: user-space TLS.
// The event loop gets one end of a Unix socket pair, plaintext as on any
// connection (sendfile included: into the pair); two goroutines copy
// between the other end and crypto/tls on the TCP socket, one decrypting
// what the client sends, one encrypting what the broker answers. It costs
// a copy and a cipher pass in user space per byte, which kTLS saves, but
// the event loop and the response writer stay the same. Either side ending
// closes both.
func (s *Server) relay(tc *tls.Conn, nc *net.TCPConn, h *handoff) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		s.relayFailed(nc, h, fmt.Errorf("socketpair: %w", err))
		return
	}
	loopEnd, err := fileConn(fds[0])
	if err != nil {
		unix.Close(fds[1])
		s.relayFailed(nc, h, err)
		return
	}
	relayEnd, err := fileConn(fds[1])
	if err != nil {
		loopEnd.Close()
		s.relayFailed(nc, h, err)
		return
	}
	if err := s.handOver(loopEnd, h); err != nil {
		relayEnd.Close()
		s.relayFailed(nc, h, err)
		return
	}
	s.stats.userTLS.Add(1)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = nc.Close() // no close_notify: a Write may be blocked on the socket
			_ = relayEnd.Close()
		})
	}
	// Stop ends the relay even when both directions block (a client that
	// neither reads nor writes).
	unhook := context.AfterFunc(s.tlsCtx, stop)
	s.relays.Add(2)
	go func() {
		defer s.relays.Done()
		defer unhook()
		defer stop()
		s.pump(relayEnd, tc, nil)
	}()
	go func() {
		defer s.relays.Done()
		defer stop()
		s.pump(tc, relayEnd, &s.stats.userTLSBytes)
	}()
}

// pump copies src to dst until either fails, counting the bytes copied
// into counted (the broker's answers).
func (s *Server) pump(dst, src net.Conn, counted interface{ Add(int64) int64 }) {
	bp := relayBufs.Get().(*[]byte)
	defer relayBufs.Put(bp)
	buf := *bp
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			if counted != nil {
				counted.Add(int64(n))
			}
		}
		if err != nil {
			return
		}
	}
}

// fileConn makes a net.Conn of one end of a socket pair (the descriptor
// is then its own).
func fileConn(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "tls-relay")
	defer f.Close() // FileConn duplicated it
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("socket pair: %w", err)
	}
	return c, nil
}

func (s *Server) relayFailed(nc *net.TCPConn, h *handoff, err error) {
	s.stats.acceptErrors.Add(1)
	s.log.Warn("closing connection: user-space TLS relay", "listener", h.l.Name, "remote", h.remote, "err", err)
	s.releaseAccepted(nc, h.l)
	_ = nc.Close()
}
