package server

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/valyala/bytebufferpool"

	"kzero/net/wire"
)

// Handler serves the requests of every connection. For each connection it
// gets one request at a time, in the order they arrived: Serve is called
// for the next request only after the previous one completed. Serve runs
// off the event loops, on a goroutine of the connection's, and may block
// briefly (a disk append), but a request that waits (acks=all, a long-poll
// fetch) should return from Serve and complete later from whatever
// goroutine ends the wait, so no goroutine blocks per waiting request.
type Handler interface {
	// Serve handles req. It, or whoever it hands req to, must complete req
	// exactly once with Respond, NoResponse or Fail, now or later.
	Serve(req *Request)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(req *Request)

// Serve calls f(req).
func (f HandlerFunc) Serve(req *Request) { f(req) }

// Request states: a request is being served until Serve returns or it
// completes, whichever comes first; the one that comes second recycles it.
const (
	stateServing int32 = iota
	stateReturned
	stateDone
)

// Request is one request frame, its header decoded. Header, Body and
// anything aliasing Body (kmsg UnsafeReadFrom results, record bytes) are
// valid until the request is completed; the Request itself must not be
// used after Respond, NoResponse or Fail.
type Request struct {
	Header wire.RequestHeader
	// Body is the request body after the header, in a pooled buffer.
	Body []byte

	conn  *Conn
	frame *bytebufferpool.ByteBuffer
	held  int // bytes of the connection's request memory the frame holds
	state atomic.Int32
}

var requestPool = sync.Pool{New: func() any { return new(Request) }}

func newRequest(c *Conn, h wire.RequestHeader, body []byte, frame *bytebufferpool.ByteBuffer, held int) *Request {
	r := requestPool.Get().(*Request)
	r.Header, r.Body, r.conn, r.frame, r.held = h, body, c, frame, held
	r.state.Store(stateServing)
	return r
}

// free returns the frame and the request to their pools.
func (r *Request) free() {
	r.dropFrame()
	r.conn = nil
	requestPool.Put(r)
}

func (r *Request) dropFrame() {
	if r.frame != nil {
		framePool.Put(r.frame)
		if r.conn != nil {
			r.conn.releaseFrame(r.held)
		}
	}
	r.Header, r.Body, r.frame, r.held = wire.RequestHeader{}, nil, nil, 0
}

// Conn is the connection the request came on.
func (r *Request) Conn() *Conn { return r.conn }

// NewResponse returns a pooled response with this request's response
// header written (v0, or v1 for flexible requests but ApiVersions).
func (r *Request) NewResponse() *wire.Response { return wire.NewResponse(&r.Header) }

// Respond completes the request with resp, which the server now owns: it
// is written after the responses of earlier requests, then released. From
// any goroutine.
func (r *Request) Respond(resp *wire.Response) {
	c := r.conn
	if err := resp.Seal(); err != nil {
		resp.Release()
		c.fail(fmt.Errorf("api key %d: encode response: %w", r.Header.APIKey, err))
	} else {
		c.send(resp)
	}
	r.complete(c)
}

// RespondRaw completes the request with a frame that holds token and no
// response header (the legacy SASL tokens, see Conn.SetRawFrames).
func (r *Request) RespondRaw(token []byte) {
	resp := wire.NewRawResponse()
	resp.B = append(resp.B, token...)
	r.Respond(resp)
}

// RespondAndClose completes the request with resp, then closes the
// connection once resp is written (Kafka's answer to a failed
// authentication: the error, then the close). err says why, for the log.
func (r *Request) RespondAndClose(resp *wire.Response, err error) {
	c := r.conn
	if serr := resp.Seal(); serr != nil {
		resp.Release()
	} else {
		c.send(resp)
	}
	c.fail(fmt.Errorf("api key %d: %w", r.Header.APIKey, err))
	r.complete(c)
}

// NoResponse completes a request that gets no response (Produce with
// acks=0); the next request of the connection proceeds.
func (r *Request) NoResponse() {
	c := r.conn
	c.outstanding.Add(-1)
	r.complete(c)
}

// Fail completes the request by closing its connection once the responses
// of earlier requests are written: a Go error from a handler is not a Kafka
// error code (those go in responses) but a broken connection.
func (r *Request) Fail(err error) {
	c := r.conn
	c.fail(fmt.Errorf("api key %d: %w", r.Header.APIKey, err))
	r.complete(c)
}

// complete drops the frame, then either lets the serving goroutine go on
// with the next request (completed within Serve) or recycles r and starts
// a goroutine for the next request (completed later).
func (r *Request) complete(c *Conn) {
	r.dropFrame()
	if r.state.CompareAndSwap(stateServing, stateDone) {
		return // within Serve: the runner recycles r and goes on
	}
	if !r.state.CompareAndSwap(stateReturned, stateDone) {
		c.srv.log.Error("request completed twice; ignored", "conn", c.id)
		return
	}
	r.conn = nil
	requestPool.Put(r)
	c.resume()
}

// Close closes the connection once the responses queued before it are
// written, and serves no further request; err says why, for the log. From
// any goroutine, for a failure that no request of its own can carry.
func (c *Conn) Close(err error) { c.fail(err) }

// RawFrame is the APIKey of a request frame read without a request
// header (Conn.SetRawFrames): its Body is the whole frame.
const RawFrame int16 = -1

// Conn is a client connection as handlers see it.
type Conn struct {
	id            uint64
	srv           *Server
	remote, local net.Addr
	listener      string // the name of the listener it came through
	principal     string // from the client's TLS certificate; "" if none
	kernelTLS     bool   // its TLS records are the kernel's (kTLS)
	relayed       bool   // its TLS records are the user-space relay's

	// raw: the frames read next carry no request header (SetRawFrames).
	raw atomic.Bool
	// preAuthMax caps frames until LiftFrameLimit (0: no cap beyond
	// MaxRequestBytes); the loop reads it for each frame.
	preAuthMax atomic.Int32

	// value is the handler's per-connection state. Requests of a
	// connection are served one at a time, so the handler reads and writes
	// it without a lock.
	value any

	loop loopState // owned by the event loop, or by writeDirect while c.mu.direct

	// wmu is held by writeDirect while it writes, and by OnClose, so that
	// the socket is not closed (and its descriptor reused) under it.
	wmu sync.Mutex
	// loopIdle: the loop holds nothing to write. The loop stores true
	// when a write ends so (an atomic, not under mu: no lock per write);
	// false is stored under mu, with the drain or hand-over that makes it
	// so. send reads it under mu.
	loopIdle atomic.Bool

	lastActive  atomic.Int64 // monotonic ns since the server's epoch
	outstanding atomic.Int32 // requests read whose response is not yet written
	queued      atomic.Int64 // request memory held by whole frames (memory.go)
	waitOwn     atomic.Bool  // reads paused until queued drops
	muteUntil   atomic.Int64 // reads muted until then, server clock ns (throttle.go)
	frames      atomic.Int32 // whole frames held: requests read and not completed (inflight.go)

	mu struct {
		sync.Mutex
		inbox     []*Request       // requests waiting to be served, in order
		active    bool             // a runner goroutine exists, or a request is being served
		outbox    []*wire.Response // completed responses for the loop; nil closes the connection
		scheduled bool             // a drain of outbox is due (queued on the loop, or inline)
		queued    bool             // that drain is a task queued with Execute
		inline    bool             // a request is being served on the loop (Config.Inline)
		direct    bool             // a goroutine writes the outbox itself (writeDirect)
		failed    bool             // Fail was called: nothing more is served or queued
		closed    bool             // the connection is gone
	}
}

// ID is unique among the server's connections.
func (c *Conn) ID() uint64 { return c.id }

// RemoteAddr is the client's address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// LocalAddr is the listener side's address.
func (c *Conn) LocalAddr() net.Addr { return c.local }

// Listener is the name of the listener the connection came through.
func (c *Conn) Listener() string { return c.listener }

// Principal is the principal of the client's TLS certificate (User:, then
// its subject mapped by ssl.principal.mapping.rules); "" when the
// connection has none (not TLS, or no certificate given).
func (c *Conn) Principal() string { return c.principal }

// SetRawFrames switches how the next frames are read: on, each is a
// request whose Header.APIKey is RawFrame and whose Body is the whole frame
// (the SASL tokens Kafka's legacy v0 SaslHandshake exchanges without
// Kafka headers); off, as request headers again. A handler sets it before
// it responds to the request after which the client switches, so the
// frames the client sends once it has the response are read the new way.
func (c *Conn) SetRawFrames(on bool) { c.raw.Store(on) }

// LiftFrameLimit ends the listener's PreAuthMaxBytes cap: frames read
// from now on may be up to MaxRequestBytes. A handler calls it once the
// connection is authenticated, before it answers the last SASL request.
func (c *Conn) LiftFrameLimit() { c.preAuthMax.Store(0) }

// Value returns the handler's per-connection state (nil at first).
func (c *Conn) Value() any { return c.value }

// SetValue sets the handler's per-connection state.
func (c *Conn) SetValue(v any) { c.value = v }
