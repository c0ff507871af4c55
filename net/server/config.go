package server

import (
	"log/slog"
	"time"

	"kzero/net/wire"
)

// Defaults, Kafka's.
const (
	// DefaultMaxRequestBytes is socket.request.max.bytes.
	DefaultMaxRequestBytes = wire.DefaultMaxRequestBytes
	// DefaultIdleTimeout is connections.max.idle.ms.
	DefaultIdleTimeout = 600000 * time.Millisecond
	// DefaultQueuedMaxRequestBytes is kzero's queued.max.request.bytes
	// (Kafka's is -1, unbounded): 256 MiB, room for two requests of the
	// default socket.request.max.bytes and any number of small ones, and
	// a bound on what clients that send slowly or never finish a request
	// can make the broker hold.
	DefaultQueuedMaxRequestBytes = 256 << 20
	// DefaultConnQueuedMaxRequestBytes caps what one connection holds in
	// requests read ahead of the one being served (kzero's; Kafka reads
	// one request per connection at a time).
	DefaultConnQueuedMaxRequestBytes = 16 << 20
)

// Config is the listener's configuration. The zero value of a field means
// its default.
type Config struct {
	// Addr is the TCP address to listen on, host:port; port 0 picks a free
	// port (Server.Addr tells which). Used when Listeners is empty, as one
	// listener named PLAINTEXT.
	Addr string
	// Listeners are the named client listeners (Kafka's `listeners`), all
	// served by the same event loops: each connection knows the listener
	// it came through (Conn.Listener), so the handler can tell them apart
	// (security protocol, advertised address).
	Listeners []Listener
	// Loops is the number of event loops; 0 means one per CPU.
	Loops int
	// MaxRequestBytes is socket.request.max.bytes: a larger request frame
	// closes its connection.
	MaxRequestBytes int
	// QueuedMaxRequestBytes is queued.max.request.bytes: the bytes all
	// connections may hold in requests being read and not yet completed
	// (frame buffers, counted by their size class). A connection that
	// would go over stops reading, and TCP holds its client back, until
	// requests complete; see memory.go for the exceptions that keep small
	// requests answered. 0 means DefaultQueuedMaxRequestBytes; negative,
	// unbounded.
	QueuedMaxRequestBytes int64
	// ConnQueuedMaxRequestBytes is the same cap for one connection, on its
	// requests read ahead: the frame being read may always complete once
	// the connection's earlier requests are done. 0 means
	// DefaultConnQueuedMaxRequestBytes; negative, unbounded.
	ConnQueuedMaxRequestBytes int64
	// ConnMaxQueuedRequests caps the requests one connection holds (read
	// and not yet completed); past it the connection stops reading until
	// one completes (inflight.go). kzero applies Kafka's
	// queued.max.requests per connection. 0 means
	// DefaultConnMaxQueuedRequests; negative, unbounded.
	ConnMaxQueuedRequests int
	// IdleTimeout is connections.max.idle.ms: a connection with no request
	// in flight and no bytes read or written for this long is closed. A
	// negative value never closes idle connections.
	IdleTimeout time.Duration
	// SocketSendBuffer and SocketRecvBuffer set SO_SNDBUF and SO_RCVBUF
	// (socket.send.buffer.bytes, socket.receive.buffer.bytes); 0 leaves the
	// kernel's default, which autotunes.
	SocketSendBuffer, SocketRecvBuffer int
	// CopyWhenBlocked changes what a file range does when the socket is
	// full: by default it waits until the socket drains and goes on with
	// sendfile (zero-copy for every byte, at the cost of a wake-up through
	// the writable poller); with CopyWhenBlocked the rest of the range is
	// read into gnet's write buffer at once, and so are later ranges until
	// that buffer is empty (fewer wake-ups, more copies, and the buffer
	// grows to the size of the response).
	CopyWhenBlocked bool
	// Inline names the API keys (and versions) whose requests the handler
	// serves without
	// blocking (it completes them within Serve or hands them to a
	// callback): those are served on the event loop itself when the
	// connection has nothing else queued, and their response is written
	// there once the frames at hand are served, with no goroutine start
	// and no loop wake-up. nil
	// serves every request on a runner goroutine.
	Inline func(apiKey, apiVersion int16) bool
	// DeferAccept binds the listeners in Start but takes no connection
	// until Accept: a node registers its bound ports first, and clients
	// that connect meanwhile wait instead of being turned away.
	DeferAccept bool
	// Limits are the connection limits (connlimit.go).
	Limits ConnLimits
	// Logger receives connection-level events; nil means slog.Default().
	Logger *slog.Logger
}

// Listener is one named listener.
type Listener struct {
	Name string // the listener name, as in `listeners` (PLAINTEXT, SASL_PLAINTEXT, CLIENT, ...)
	Addr string // host:port; port 0 picks a free port (Server.ListenerAddr)
	// PreAuthMaxBytes caps the frames of a connection until the handler
	// calls Conn.LiftFrameLimit (Kafka's sasl.server.max.receive.size for a
	// connection not yet authenticated); 0: MaxRequestBytes from the start.
	PreAuthMaxBytes int
	// TLS makes it an SSL (or SASL_SSL) listener: each connection's
	// handshake runs before it goes to an event loop (tls_handshake.go).
	TLS *TLS
}

func (c Config) withDefaults() Config {
	if len(c.Listeners) == 0 {
		c.Listeners = []Listener{{Name: "PLAINTEXT", Addr: c.Addr}}
	}
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.QueuedMaxRequestBytes == 0 {
		c.QueuedMaxRequestBytes = DefaultQueuedMaxRequestBytes
	}
	if c.ConnMaxQueuedRequests == 0 {
		c.ConnMaxQueuedRequests = DefaultConnMaxQueuedRequests
	}
	if c.ConnQueuedMaxRequestBytes == 0 {
		c.ConnQueuedMaxRequestBytes = DefaultConnQueuedMaxRequestBytes
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
