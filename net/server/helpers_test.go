package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"kzero/kzerotest/await"
	"kzero/net/wire"
)

// start runs a server on a free loopback port for the test's duration.
func start(t testing.TB, cfg Config, h Handler) *Server {
	t.Helper()
	return startWith(t, cfg, h, nil)
}

// startWith is start with a hook that may inject faults before Start.
func startWith(t testing.TB, cfg Config, h Handler, hook func(*Server)) *Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	if cfg.Loops == 0 {
		cfg.Loops = 2
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	s := New(cfg, h)
	if hook != nil {
		hook(s)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return s
}

// client is a raw Kafka-protocol test client.
type client struct {
	t    testing.TB
	conn *net.TCPConn
	r    *bufio.Reader
}

func dial(t testing.TB, s *Server) *client {
	t.Helper()
	return dialWith(t, s, &net.Dialer{})
}

func dialWith(t testing.TB, s *Server, d *net.Dialer) *client {
	t.Helper()
	c, err := d.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, conn: c.(*net.TCPConn), r: bufio.NewReaderSize(c, 64<<10)}
}

// frame builds a request frame; ApiVersions v0 (header v1) unless the
// header says otherwise.
func frame(h wire.RequestHeader, body []byte) []byte {
	if h.Version == 0 {
		h.Version, _ = wire.RequestHeaderVersion(h.APIKey, h.APIVersion)
	}
	b := wire.AppendRequestHeader(make([]byte, 4), &h)
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// echoFrame is a request whose body an echo handler sends back.
func echoFrame(corr int32, body []byte) []byte {
	return frame(wire.RequestHeader{APIKey: 18, APIVersion: 0, CorrelationID: corr, ClientID: []byte("t")}, body)
}

func (c *client) write(b []byte) {
	c.t.Helper()
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// read reads one response frame with a v0 header: correlation id, body.
func (c *client) read() (int32, []byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c.r, size[:]); err != nil {
		return 0, nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 {
		return 0, nil, fmt.Errorf("response size %d", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		return 0, nil, err
	}
	return int32(binary.BigEndian.Uint32(b)), b[4:], nil
}

func (c *client) mustRead() (int32, []byte) {
	c.t.Helper()
	corr, body, err := c.read()
	if err != nil {
		c.t.Fatal(err)
	}
	return corr, body
}

// expectClosed reads until the server closes the connection.
func (c *client) expectClosed() {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, c.r); err != nil {
		c.t.Fatalf("connection not closed cleanly: %v", err)
	}
}

// echo answers every request with its body.
var echo = HandlerFunc(func(r *Request) {
	resp := r.NewResponse()
	resp.B = append(resp.B, r.Body...)
	r.Respond(resp)
})

// roundTrip checks one echo request on c.
func (c *client) roundTrip(corr int32, body string) {
	c.t.Helper()
	c.write(echoFrame(corr, []byte(body)))
	got, b := c.mustRead()
	if got != corr || string(b) != body {
		c.t.Fatalf("echo %d %q: got %d %q", corr, body, got, b)
	}
}

// discard is a logger for tests that provoke errors on purpose.
func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// eventually waits for cond, failing after a generous bound: for the
// effects of the event loops and the kernel (a counter in Stats, a range
// released), which signal nothing a test could wait on.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	await.True(t, 20*time.Second, cond, what)
}
