package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"kzero/net/wire"
)

// slowFrame is the start of a frame that declares size bytes: its size
// and an ApiVersions v0 header, then pad bytes of body.
func slowFrame(size, pad int) []byte {
	b := frame(wire.RequestHeader{APIKey: 18, CorrelationID: 1, ClientID: []byte("t")}, nil)
	binary.BigEndian.PutUint32(b, uint32(size))
	return append(b, make([]byte, pad)...)
}

// dialAttackers opens n connections that each declare a 100 MiB frame and
// send pad bytes of it (from goroutines: the server may stop reading),
// and never finish it.
func dialAttackers(t *testing.T, s *Server, n, pad int) []*client {
	t.Helper()
	cs := make([]*client, n)
	for i := range cs {
		cs[i] = dial(t, s)
		go cs[i].conn.Write(slowFrame(100<<20, pad)) // fails once the test closes it
	}
	return cs
}

// 128 connections each declaring a 100 MiB frame and sending 64 KiB hold
// what they sent (a buffer of at most four times that), not what they
// declared; a client on the side is answered.
func TestSlowFramesHoldWhatArrived(t *testing.T) {
	const n, pad = 128, 64 << 10
	s := start(t, Config{QueuedMaxRequestBytes: -1}, echo)
	dialAttackers(t, s, n, pad)
	eventually(t, "every connection's 64 KiB read", func() bool { return s.Stats().RequestBytesHeld >= n*pad })
	dial(t, s).roundTrip(1, "on the side")
	st := s.Stats()
	if st.RequestBytesHeld > n*4*pad {
		t.Fatalf("%d connections that sent %d bytes each hold %d bytes", n, pad, st.RequestBytesHeld)
	}
	t.Logf("held %d KiB for %d connections, %d bytes copied growing frames", st.RequestBytesHeld>>10, n, st.FrameGrowBytes)
}

// Over queued.max.request.bytes, connections stop reading (their epoll
// interest in reads is gone) instead of holding more; small requests on a
// connection holding nothing are still answered; a large request waits and
// is served once the slow connections go away, and everything is
// released.
func TestRequestMemoryCapPausesReading(t *testing.T) {
	const limit, n, pad = 2 << 20, 32, 1 << 20
	s := start(t, Config{QueuedMaxRequestBytes: limit}, echo)
	attackers := dialAttackers(t, s, n, pad)
	eventually(t, "reads paused at the cap", func() bool {
		st := s.Stats()
		return st.ReadPauses > 0 && st.RequestBytesHeld >= limit
	})
	// A grant is made while the total is under the limit: it can go over
	// by one grant per loop, a buffer of at most twice what arrived.
	if held := s.Stats().RequestBytesHeld; held > limit+2*(4*pad) {
		t.Fatalf("holding %d bytes, limit %d", held, limit)
	}
	paused := 0
	for _, c := range serverConns(s) {
		if !readInterest(t, c) {
			paused++
		}
	}
	if paused == 0 {
		t.Fatal("no connection's read interest taken out of its epoll set")
	}

	side := dial(t, s)
	side.roundTrip(1, "small requests are answered")
	large := bytes.Repeat([]byte("L"), 300<<10)
	side.write(echoFrame(2, large))
	for _, c := range attackers {
		c.conn.Close()
	}
	if corr, body := side.mustRead(); corr != 2 || !bytes.Equal(body, large) {
		t.Fatalf("large request: correlation %d, %d bytes", corr, len(body))
	}
	eventually(t, "memory released", func() bool { return s.Stats().RequestBytesHeld == 0 })
}

// A connection pipelining requests its handler does not complete stops
// reading at the per-connection cap, and once they complete, reads and
// answers the rest in order.
func TestConnCapPausesPipelining(t *testing.T) {
	const connLimit, n, size = 1 << 20, 24, 200 << 10
	var mu sync.Mutex
	var held []*Request
	release := make(chan struct{})
	s := start(t, Config{ConnQueuedMaxRequestBytes: connLimit}, HandlerFunc(func(r *Request) {
		select {
		case <-release:
			echo.Serve(r)
		default:
			mu.Lock()
			held = append(held, r)
			mu.Unlock()
		}
	}))
	c := dial(t, s)
	var stream []byte
	for i := range n {
		stream = append(stream, echoFrame(int32(i), bytes.Repeat([]byte{byte(i)}, size))...)
	}
	go c.conn.Write(stream)
	eventually(t, "reads paused at the connection's cap", func() bool { return s.Stats().ReadPauses > 0 })
	if st := s.Stats(); st.Requests >= n || st.RequestBytesHeld > connLimit+2*size {
		t.Fatalf("read %d requests holding %d bytes with a cap of %d", st.Requests, st.RequestBytesHeld, connLimit)
	}
	close(release)
	mu.Lock()
	for _, r := range held {
		echo.Serve(r)
	}
	mu.Unlock()
	for i := range n {
		corr, body := c.mustRead()
		if corr != int32(i) || len(body) != size || body[0] != byte(i) {
			t.Fatalf("response %d: correlation %d, %d bytes", i, corr, len(body))
		}
	}
	eventually(t, "memory released", func() bool { return s.Stats().RequestBytesHeld == 0 })
}

// serverConns is the server's open connections.
func serverConns(s *Server) []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	var cs []*Conn
	for _, c := range s.mu.conns {
		cs = append(cs, c)
	}
	return cs
}

// readInterest reports whether c's socket is in its loop's epoll set for
// reads, from /proc/self/fdinfo of the epoll descriptor that loopEpoll
// found: the test fails if that is not gnet's epoll set holding c.
func readInterest(t *testing.T, c *Conn) bool {
	t.Helper()
	if c.loop.epfd < 0 {
		t.Fatal("loopEpoll found no epoll descriptor in gnet's event loop")
	}
	f, err := os.Open(fmt.Sprintf("/proc/self/fdinfo/%d", c.loop.epfd))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// tfd: <fd> events: <hex> data: <hex> ...
		if len(fields) >= 4 && fields[0] == "tfd:" && fields[1] == strconv.Itoa(c.loop.fd) && fields[2] == "events:" {
			ev, err := strconv.ParseUint(fields[3], 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			return ev&1 != 0 // EPOLLIN
		}
	}
	t.Fatalf("connection's socket %d not in epoll set %d", c.loop.fd, c.loop.epfd)
	return false
}
