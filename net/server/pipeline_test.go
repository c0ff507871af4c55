package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/wire"
)

// TestPipelinedOrder pipelines many requests on one connection to a
// handler that answers some at once, some later from timers after random
// delays, and some not at all (acks=0). Responses must come back in
// request order, and the handler must never hold two requests of the
// connection at once.
//
// With Config.Inline the same runs with requests served on the event loop
// whenever the connection is idle.
func TestPipelinedOrder(t *testing.T) {
	t.Run("runner", func(t *testing.T) { testPipelinedOrder(t, Config{}) })
	t.Run("inline", func(t *testing.T) {
		testPipelinedOrder(t, Config{Inline: func(int16, int16) bool { return true }})
	})
}

func testPipelinedOrder(t *testing.T, cfg Config) {
	const n = 600
	var inFlight, overlaps atomic.Int32
	h := HandlerFunc(func(r *Request) {
		if inFlight.Add(1) != 1 {
			overlaps.Add(1)
		}
		i := int(binary.BigEndian.Uint32(r.Body))
		resp := r.NewResponse()
		resp.B = append(resp.B, r.Body...)
		switch i % 4 {
		case 0: // at once
			inFlight.Add(-1)
			r.Respond(resp)
		case 1, 2: // later, from another goroutine
			time.AfterFunc(time.Duration(rand.IntN(300))*time.Microsecond, func() {
				inFlight.Add(-1)
				r.Respond(resp)
			})
		case 3:
			resp.Release()
			if i%8 == 3 { // no response, like acks=0
				inFlight.Add(-1)
				r.NoResponse()
				return
			}
			go func() {
				resp := r.NewResponse()
				resp.B = append(resp.B, r.Body...)
				inFlight.Add(-1)
				r.Respond(resp)
			}()
		}
	})
	s := start(t, cfg, h)
	c := dial(t, s)
	var out []byte
	for i := range n {
		out = append(out, echoFrame(int32(i), binary.BigEndian.AppendUint32(nil, uint32(i)))...)
	}
	go c.conn.Write(out)
	for i := range n {
		if i%8 == 3 {
			continue
		}
		corr, body := c.mustRead()
		if corr != int32(i) || int(binary.BigEndian.Uint32(body)) != i {
			t.Fatalf("response %d: correlation %d body %x", i, corr, body)
		}
	}
	if o := overlaps.Load(); o != 0 {
		t.Fatalf("handler held two requests of one connection at once %d times", o)
	}
	if got := s.Stats().Requests; got != n {
		t.Fatalf("requests %d, want %d", got, n)
	}
}

// TestConcurrentConnections runs many pipelining connections at once
// (meant for -race).
func TestConcurrentConnections(t *testing.T) {
	const conns, reqs = 40, 150
	s := start(t, Config{Loops: 4, Inline: func(int16, int16) bool { return true }}, HandlerFunc(func(r *Request) {
		if r.Header.CorrelationID%3 == 0 {
			go echo.Serve(r)
			return
		}
		echo.Serve(r)
	}))
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for k := range conns {
		c := dial(t, s)
		wg.Go(func() {
			var out []byte
			for i := range reqs {
				out = append(out, echoFrame(int32(i), fmt.Appendf(nil, "conn %d req %d", k, i))...)
			}
			if _, err := c.conn.Write(out); err != nil {
				errs <- err
				return
			}
			for i := range reqs {
				corr, body, err := c.read()
				if err != nil {
					errs <- err
					return
				}
				if want := fmt.Sprintf("conn %d req %d", k, i); corr != int32(i) || string(body) != want {
					errs <- fmt.Errorf("conn %d: got %d %q, want %d %q", k, corr, body, i, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := s.Stats(); st.ConnectionsOpened != conns || st.Requests != conns*reqs {
		t.Fatalf("stats %+v", st)
	}
}

// TestBadFramesCloseOnlyTheirConnection sends each kind of bad frame on its
// own connection while a healthy connection keeps working.
func TestBadFramesCloseOnlyTheirConnection(t *testing.T) {
	s := start(t, Config{MaxRequestBytes: 1024}, echo)
	good := dial(t, s)
	good.roundTrip(1, "before")
	bad := map[string][]byte{
		"oversize":         binary.BigEndian.AppendUint32(nil, 1025),
		"negative size":    binary.BigEndian.AppendUint32(nil, 0xffffff00),
		"empty frame":      {0, 0, 0, 0},
		"truncated header": {0, 0, 0, 3, 0, 18, 0},
		"unknown api key":  frame(wire.RequestHeader{APIKey: 30000, Version: 1}, nil),
		"negative version": {0, 0, 0, 10, 0, 18, 0xff, 0xff, 0, 0, 0, 1, 0xff, 0xff},
		"garbage":          []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
	}
	for name, b := range bad {
		t.Run(name, func(t *testing.T) {
			c := dial(t, s)
			c.roundTrip(7, "ok") // a good request first: it is answered
			c.write(b)
			c.expectClosed()
		})
	}
	good.roundTrip(2, "after")
	if got := s.Stats().Rejected; got != int64(len(bad)) {
		t.Fatalf("rejected %d, want %d", got, len(bad))
	}
}

// TestOversizeFrameAcceptedAtLimit: a frame of exactly the limit is fine.
func TestFrameAtLimit(t *testing.T) {
	s := start(t, Config{MaxRequestBytes: 4096}, echo)
	c := dial(t, s)
	f := echoFrame(3, nil)
	body := bytes.Repeat([]byte{'x'}, 4096-(len(f)-4))
	c.write(echoFrame(3, body))
	if corr, got := c.mustRead(); corr != 3 || !bytes.Equal(got, body) {
		t.Fatalf("got %d, %d bytes", corr, len(got))
	}
}

// TestFailClosesAfterEarlierResponses: Fail closes the connection after the
// responses queued before it, and later requests are not served.
func TestFailClosesAfterEarlierResponses(t *testing.T) {
	var served atomic.Int32
	s := start(t, Config{}, HandlerFunc(func(r *Request) {
		served.Add(1)
		if string(r.Body) == "fail" {
			r.Fail(errors.New("test failure"))
			return
		}
		echo.Serve(r)
	}))
	c := dial(t, s)
	var out []byte
	out = append(out, echoFrame(1, []byte("a"))...)
	out = append(out, echoFrame(2, []byte("fail"))...)
	out = append(out, echoFrame(3, []byte("c"))...)
	c.write(out)
	if corr, body := c.mustRead(); corr != 1 || string(body) != "a" {
		t.Fatalf("got %d %q", corr, body)
	}
	c.expectClosed()
	if n := served.Load(); n != 2 {
		t.Fatalf("served %d requests, want 2", n)
	}
}

// TestHandlerPanicClosesConnection: a panicking handler costs its
// connection, not the broker.
func TestHandlerPanicClosesConnection(t *testing.T) {
	s := start(t, Config{Logger: discard()}, HandlerFunc(func(r *Request) {
		if string(r.Body) == "panic" {
			panic("test panic")
		}
		echo.Serve(r)
	}))
	c := dial(t, s)
	c.write(echoFrame(1, []byte("panic")))
	c.expectClosed()
	dial(t, s).roundTrip(2, "still serving")
}

// TestIdleClose: an idle connection is closed after IdleTimeout; one whose
// request is still being handled is not, however long it takes.
func TestIdleClose(t *testing.T) {
	const idle = 100 * time.Millisecond
	release, started := make(chan struct{}), make(chan struct{})
	s := start(t, Config{IdleTimeout: idle}, HandlerFunc(func(r *Request) {
		if string(r.Body) == "slow" {
			close(started)
			go func() {
				<-release
				echo.Serve(r)
			}()
			return
		}
		echo.Serve(r)
	}))
	idleConn, busy := dial(t, s), dial(t, s)
	busy.write(echoFrame(2, []byte("slow")))
	<-started // the server read busy's request
	idleConn.roundTrip(1, "hello")
	// The sweep that closes idleConn, idle since after busy's request
	// was read, saw busy idle longer: it kept it for its request.
	idleConn.expectClosed()
	close(release)
	if corr, body := busy.mustRead(); corr != 2 || string(body) != "slow" {
		t.Fatalf("got %d %q", corr, body)
	}
	if got := s.Stats().IdleClosed; got != 1 {
		t.Fatalf("idle closed %d, want 1", got)
	}
}

// TestApiVersionsKmsg drives a tiny ApiVersions handler with kmsg-encoded
// requests: a flexible v3 request (request header v2) gets a response with
// a v0 header (no tagged fields), and a Metadata v12 request, also
// flexible, gets a v1 header.
func TestApiVersionsKmsg(t *testing.T) {
	s := start(t, Config{}, apiVersionsHandler())
	c := dial(t, s)
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kzero-test"))

	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kzero-test", "1.0"
	c.write(f.AppendRequest(nil, req, 41))
	corr, body := c.mustRead() // v0 header: the body follows the correlation id
	if corr != 41 {
		t.Fatalf("correlation %d", corr)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(3)
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decode ApiVersions v3 response: %v", err)
	}
	if resp.ErrorCode != 0 || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].MaxVersion != 4 {
		t.Fatalf("response %+v", resp)
	}

	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(12)
	c.write(f.AppendRequest(nil, meta, 42))
	corr, body = c.mustRead()
	if corr != 42 || len(body) == 0 || body[0] != 0 {
		t.Fatalf("metadata v12: correlation %d, header tags %x", corr, body)
	}
	mresp := kmsg.NewPtrMetadataResponse()
	mresp.SetVersion(12)
	if err := mresp.ReadFrom(body[1:]); err != nil {
		t.Fatalf("decode Metadata v12 response: %v", err)
	}
}

// TestApiVersionsKgo: franz-go's client negotiates over the server (its
// own ApiVersions at its highest version first) and issues a request.
func TestApiVersionsKgo(t *testing.T) {
	s := start(t, Config{}, apiVersionsHandler())
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	if av := resp.(*kmsg.ApiVersionsResponse); av.ErrorCode != 0 || len(av.ApiKeys) != 1 {
		t.Fatalf("response %+v", av)
	}
}

// apiVersionsHandler answers ApiVersions (v0-v4, advertising only
// ApiVersions), UNSUPPORTED_VERSION for a newer one, and an empty Metadata.
func apiVersionsHandler() Handler {
	return HandlerFunc(func(r *Request) {
		switch r.Header.APIKey {
		case 18:
			resp := kmsg.NewPtrApiVersionsResponse()
			v := r.Header.APIVersion
			if v > 4 {
				v = 0
				resp.ErrorCode = 35 // UNSUPPORTED_VERSION, answered as v0
			} else {
				req := kmsg.NewPtrApiVersionsRequest()
				req.SetVersion(v)
				if err := req.ReadFrom(r.Body); err != nil {
					r.Fail(err)
					return
				}
			}
			resp.SetVersion(v)
			resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: 4}}
			out := r.NewResponse()
			out.AppendMessage(resp)
			r.Respond(out)
		case 3:
			resp := kmsg.NewPtrMetadataResponse()
			resp.SetVersion(r.Header.APIVersion)
			out := r.NewResponse()
			out.AppendMessage(resp)
			r.Respond(out)
		default:
			r.Fail(fmt.Errorf("api key %d not served", r.Header.APIKey))
		}
	})
}

// TestStartErrors: a busy address fails Start with an error; Stop of a
// server that never started is a no-op.
func TestStartErrors(t *testing.T) {
	s := start(t, Config{}, echo)
	busy := New(Config{Addr: s.Addr().String(), Loops: 1, Logger: discard()}, echo)
	if err := busy.Start(); err == nil {
		t.Fatal("second listener on the same address started")
	}
	if err := busy.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	dial(t, s).roundTrip(1, "first server unaffected")
}

// TestInlineResponsesWrittenTogether: requests that arrive together and
// are served inline, on the loop, have their responses written together
// (one writev), not one write each: a pipelining producer's acks=1
// answers cost one syscall per read, not per request.
func TestInlineResponsesWrittenTogether(t *testing.T) {
	const n = 8
	s := start(t, Config{Inline: func(int16, int16) bool { return true }}, echo)
	c := dial(t, s)
	// One request first, so the connection is set up and idle.
	if _, err := c.conn.Write(echoFrame(100, []byte("first"))); err != nil {
		t.Fatal(err)
	}
	c.mustRead()
	before := s.Stats().ResponseWrites
	var out []byte
	for i := range n {
		out = append(out, echoFrame(int32(i), fmt.Appendf(nil, "req %d", i))...)
	}
	if _, err := c.conn.Write(out); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		corr, body := c.mustRead()
		if want := fmt.Sprintf("req %d", i); corr != int32(i) || string(body) != want {
			t.Fatalf("response %d: %d %q", i, corr, body)
		}
	}
	if w := s.Stats().ResponseWrites - before; w >= n {
		t.Fatalf("%d requests read together answered with %d writes", n, w)
	}
}

// TestLaterAnswerStartsNoRunner: a request answered after Serve returned
// (a long-poll fetch), with nothing queued behind it, leaves its connection
// idle without starting a runner goroutine, and the next request is served
// on the loop again.
func TestLaterAnswerStartsNoRunner(t *testing.T) {
	const n = 20
	h := HandlerFunc(func(r *Request) {
		resp := r.NewResponse()
		resp.B = append(resp.B, r.Body...)
		time.AfterFunc(100*time.Microsecond, func() { r.Respond(resp) })
	})
	s := start(t, Config{Inline: func(int16, int16) bool { return true }}, h)
	c := dial(t, s)
	for i := range n {
		c.roundTrip(int32(i), fmt.Sprintf("req %d", i))
	}
	// Before the change each answer started one. A next request that
	// reaches the loop between the answer's send and its completion
	// (microseconds) still queues for a runner, rightly: hence not 0.
	if got := s.Stats().Runners; got >= n/2 {
		t.Fatalf("%d runners started for %d requests answered later, one at a time", got, n)
	}
}
