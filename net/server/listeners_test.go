package server

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"kzero/net/wire"
)

// TestListenersAndRawFrames serves two named listeners from one set of
// event loops: each connection knows its listener, and a connection
// switched to raw frames gets its next frame whole, without a request
// header, and answers it with a frame without a response header.
func TestListenersAndRawFrames(t *testing.T) {
	h := HandlerFunc(func(r *Request) {
		c := r.Conn()
		switch {
		case r.Header.APIKey == RawFrame:
			c.SetRawFrames(false)
			r.RespondRaw(append([]byte(c.Listener()+":"), r.Body...))
		default:
			if string(r.Body) == "raw" {
				c.SetRawFrames(true)
			}
			resp := r.NewResponse()
			resp.B = append(resp.B, c.Listener()...)
			r.Respond(resp)
		}
	})
	s := New(Config{Listeners: []Listener{{Name: "PLAINTEXT", Addr: "127.0.0.1:0"}, {Name: "SASL_PLAINTEXT", Addr: "127.0.0.1:0"}}, Loops: 1, Logger: discard()}, h)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(t.Context())
	if s.Addr().String() != s.ListenerAddr("PLAINTEXT").String() || s.ListenerAddr("SASL_PLAINTEXT") == nil || s.ListenerAddr("X") != nil {
		t.Fatalf("addresses: %v %v", s.Addr(), s.ListenerAddr("SASL_PLAINTEXT"))
	}
	for _, name := range []string{"PLAINTEXT", "SASL_PLAINTEXT"} {
		nc, err := net.Dial("tcp", s.ListenerAddr(name).String())
		if err != nil {
			t.Fatal(err)
		}
		c := &client{t: t, conn: nc.(*net.TCPConn), r: bufio.NewReader(nc)}
		c.write(frame(wire.RequestHeader{APIKey: 18, CorrelationID: 1}, []byte("raw")))
		if corr, body := c.mustRead(); corr != 1 || string(body) != name {
			t.Fatalf("%s: response %d %q", name, corr, body)
		}
		// A raw frame: 4 bytes of size, then the token.
		tok := binary.BigEndian.AppendUint32(nil, 3)
		c.write(append(tok, "tok"...))
		var size [4]byte
		if _, err := io.ReadFull(c.r, size[:]); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(c.r, got); err != nil {
			t.Fatal(err)
		}
		if string(got) != name+":tok" {
			t.Fatalf("raw response %q", got)
		}
		// Headers again.
		c.write(frame(wire.RequestHeader{APIKey: 18, CorrelationID: 2}, nil))
		if corr, body := c.mustRead(); corr != 2 || string(body) != name {
			t.Fatalf("%s: response %d %q", name, corr, body)
		}
		nc.Close()
	}
}

// TestPreAuthFrameLimit: a listener's PreAuthMaxBytes caps frames until
// the handler lifts it; a larger frame before that closes the connection.
func TestPreAuthFrameLimit(t *testing.T) {
	h := HandlerFunc(func(r *Request) {
		if string(r.Body) == "lift" {
			r.Conn().LiftFrameLimit()
		}
		r.Respond(r.NewResponse())
	})
	s := New(Config{Listeners: []Listener{{Name: "SASL", Addr: "127.0.0.1:0", PreAuthMaxBytes: 100}}, Loops: 1, Logger: discard()}, h)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(t.Context())
	big := make([]byte, 200)
	for _, lift := range []bool{false, true} {
		c := dial(t, s)
		if lift {
			c.write(echoFrame(1, []byte("lift")))
			c.mustRead()
		}
		c.write(echoFrame(2, big))
		if !lift {
			c.expectClosed()
			continue
		}
		if corr, _ := c.mustRead(); corr != 2 {
			t.Fatalf("correlation %d", corr)
		}
	}
}
