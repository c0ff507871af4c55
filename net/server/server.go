package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"

	"kzero/net/wire"
)

// Server is a Kafka protocol listener: gnet event loops that cut request
// frames, a per-connection ordered pipeline to a Handler, and a response
// writer for bytes and file ranges.
type Server struct {
	cfg     Config
	handler Handler
	log     *slog.Logger
	epoch   time.Time // base of the monotonic clock in lastActive
	stats   counters
	mem     requestMemory

	// sendfile is unix.Sendfile; tests inject faults.
	sendfile func(outfd, infd int, offset *int64, count int) (int, error)

	loops   *gnet.Client  // gnet's event loops, without a listener
	lns     []*listener   // owned by kzero, not gnet: see listener.go
	addr    net.Addr      // the first listener's
	runDone chan struct{} // closed once the event loops stopped
	poller  *writablePoller
	nextID  atomic.Uint64
	runners sync.WaitGroup // runner goroutines
	relays  sync.WaitGroup // user-space TLS relay goroutines (tls_relay.go)

	acceptStop           chan struct{}
	conns                connCounts                 // connection limits (connlimit.go)
	limits               atomic.Pointer[ConnLimits] // Config.Limits, then SetConnLimits's
	accepting            sync.WaitGroup             // accept goroutines, one per listener, and TLS handshakes
	tlsCtx               context.Context
	tlsStop              context.CancelFunc // aborts TLS handshakes in flight
	acceptOnce           sync.Once
	sweepStop, sweepDone chan struct{}
	stopOnce             sync.Once

	mu struct {
		sync.Mutex
		conns map[uint64]*Conn // open connections, for the idle sweep
	}
}

// New returns a server that serves h once started.
func New(cfg Config, h Handler) *Server {
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:      cfg,
		handler:  h,
		log:      cfg.Logger,
		epoch:    time.Now(),
		sendfile: unix.Sendfile,
		runDone:  make(chan struct{}),
	}
	s.mu.conns = make(map[uint64]*Conn)
	s.limits.Store(&s.cfg.Limits)
	s.tlsCtx, s.tlsStop = context.WithCancel(context.Background())
	s.mem.limit, s.mem.connLimit = cfg.QueuedMaxRequestBytes, cfg.ConnQueuedMaxRequestBytes
	framePool.large.capRetain(cfg.QueuedMaxRequestBytes)
	return s
}

// Start listens and starts the event loops; it returns once the listener
// is bound (see Addr), or with the error that prevented it.
func (s *Server) Start() error {
	quietGnet()
	closeAll := func() {
		for _, l := range s.lns {
			l.ln.Close()
		}
		s.lns = nil
	}
	for _, lc := range s.cfg.Listeners {
		ln, err := s.listen(lc.Addr)
		if err != nil {
			closeAll()
			return fmt.Errorf("server: listener %s: %w", lc.Name, err)
		}
		s.lns = append(s.lns, &listener{Listener: lc, ln: ln, addr: ln.Addr()})
	}
	p, err := newWritablePoller(s.log)
	if err != nil {
		closeAll()
		return fmt.Errorf("server: %w", err)
	}
	s.poller = p
	opts := []gnet.Option{gnet.WithLogger(gnetLogger{s.log})}
	if s.cfg.Loops > 0 {
		opts = append(opts, gnet.WithNumEventLoop(s.cfg.Loops))
	} else {
		opts = append(opts, gnet.WithMulticore(true))
	}
	// gnet's Client is its engine without a listener: event loops that
	// take connections handed to them (accept, in listener.go).
	loops, err := gnet.NewClient(&events{s: s}, opts...)
	if err == nil {
		err = loops.Start()
	}
	if err != nil {
		p.close()
		closeAll()
		return fmt.Errorf("server: start event loops: %w", err)
	}
	s.loops = loops
	s.addr = s.lns[0].addr
	s.acceptStop = make(chan struct{})
	if !s.cfg.DeferAccept {
		s.Accept()
	}
	if s.cfg.IdleTimeout > 0 {
		s.sweepStop, s.sweepDone = make(chan struct{}), make(chan struct{})
		go s.sweep()
	}
	return nil
}

// Accept starts taking connections (once; Start does it unless
// Config.DeferAccept). Until then they wait in the listen backlog, as a
// Kafka broker's do while it starts.
func (s *Server) Accept() {
	s.acceptOnce.Do(func() {
		for _, l := range s.lns {
			s.accepting.Add(1)
			go s.accept(l)
			s.log.Info("listening", "listener", l.Name, "addr", l.addr.String())
		}
	})
}

// Addr is the bound address of the first listener, once Start returned.
func (s *Server) Addr() net.Addr { return s.addr }

// ListenerAddr is the bound address of the listener named name, nil if
// there is none.
func (s *Server) ListenerAddr(name string) net.Addr {
	for _, l := range s.lns {
		if l.Name == name {
			return l.addr
		}
	}
	return nil
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	st := s.stats.snapshot()
	st.RequestBytesHeld = s.mem.held.Load()
	return st
}

// Stop closes the listener and every connection (gnet writes what it
// still buffers, as far as the socket takes it), then waits until the
// event loops have stopped and no handler runs Serve, or ctx is done.
// Requests completed after Stop are released, not written.
func (s *Server) Stop(ctx context.Context) error {
	if s.addr == nil {
		return nil // not started
	}
	s.stopOnce.Do(func() {
		close(s.acceptStop)
		for _, l := range s.lns {
			_ = l.ln.Close()
		}
		s.tlsStop()
		s.accepting.Wait()
		if s.sweepStop != nil {
			close(s.sweepStop)
			<-s.sweepDone
		}
		go func() {
			// Client.Stop closes every connection, then waits for the
			// loops.
			if err := s.loops.Stop(); err != nil {
				s.log.Warn("stop event loops", "err", err)
			}
			close(s.runDone)
		}()
	})
	select {
	case <-s.runDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	runners := make(chan struct{})
	go func() {
		s.runners.Wait()
		// The loops closed their ends of the relays' socket pairs.
		s.relays.Wait()
		close(runners)
	}()
	select {
	case <-runners:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.poller.close()
	return nil
}

// now is the monotonic clock of idle tracking.
func (s *Server) now() int64 { return int64(time.Since(s.epoch)) }

func (s *Server) register(c *Conn) {
	s.mu.Lock()
	s.mu.conns[c.id] = c
	s.mu.Unlock()
}

func (s *Server) unregister(c *Conn) {
	s.mu.Lock()
	delete(s.mu.conns, c.id)
	s.mu.Unlock()
}

// sweep closes idle connections: no request in flight and no bytes read
// or written for IdleTimeout, checked every tenth of it (at least 10ms, at
// most a second).
func (s *Server) sweep() {
	defer close(s.sweepDone)
	idle := s.cfg.IdleTimeout
	tick := min(max(idle/10, 10*time.Millisecond), time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-s.sweepStop:
			return
		case <-t.C:
		}
		now := s.now()
		s.mu.Lock()
		for _, c := range s.mu.conns {
			if c.outstanding.Load() == 0 && time.Duration(now-c.lastActive.Load()) > idle {
				s.stats.idleClosed.Add(1)
				s.log.Debug("closing idle connection", "conn", c.id, "remote", c.remote)
				_ = c.loop.gc.Close() // queued on the loop; a closed connection ignores it
				delete(s.mu.conns, c.id)
			}
		}
		s.mu.Unlock()
	}
}

// events is the gnet event handler. Its methods run on event loops.
type events struct {
	gnet.BuiltinEventEngine
	s *Server
}

func (e *events) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	gc.SetContext(e.s.onOpen(gc))
	return nil, gnet.None
}

func (e *events) OnClose(gc gnet.Conn, err error) gnet.Action {
	if c, ok := gc.Context().(*Conn); ok {
		c.onClose(err)
	}
	return gnet.None
}

// OnTraffic cuts whole frames, decodes their headers and queues them on
// the connection. A bad frame closes the connection.
func (e *events) OnTraffic(gc gnet.Conn) gnet.Action {
	c := gc.Context().(*Conn)
	c.lastActive.Store(e.s.now())
	if c.loop.paused {
		// gnet put the read interest back (its write buffer drained or
		// filled): take it out again and leave the bytes in gnet.
		c.setReadInterest(false)
		return gnet.None
	}
	return c.readFrames()
}

// readFrames reads and queues the whole frames gnet and the socket hold,
// until more bytes or memory are needed. On the loop. The responses of
// the requests it served inline go out together when it stops.
func (c *Conn) readFrames() (act gnet.Action) {
	defer func() {
		if act != gnet.Close {
			c.drainInline()
		}
	}()
	r := &c.loop.reader
	for {
		if c.muted() { // throttled (throttle.go)
			c.pauseForMute()
			return gnet.None
		}
		if c.overRequestCap() { // inflight.go
			return gnet.None
		}
		r.max = c.srv.cfg.MaxRequestBytes
		if m := c.preAuthMax.Load(); m > 0 {
			r.max = int(m) // not authenticated yet (Listener.PreAuthMaxBytes)
		}
		frame, held, err := r.next(c.loop.gc)
		if r.grown != 0 {
			c.srv.stats.frameGrow.Add(r.grown)
			r.grown = 0
		}
		if err != nil {
			return c.reject(err)
		}
		if frame == nil {
			return gnet.None
		}
		c.queued.Add(int64(held))
		c.frames.Add(1)
		if c.raw.Load() {
			c.enqueue(newRequest(c, wire.RequestHeader{APIKey: RawFrame}, frame.B, frame, held))
			continue
		}
		h, body, err := wire.ParseRequestHeader(frame.B)
		if err != nil {
			framePool.Put(frame)
			c.releaseFrame(held)
			return c.reject(fmt.Errorf("request header: %w", err))
		}
		c.enqueue(newRequest(c, h, body, frame, held))
	}
}

// reject logs a protocol violation and closes the connection.
func (c *Conn) reject(err error) gnet.Action {
	c.srv.stats.rejected.Add(1)
	c.srv.log.Warn("closing connection: bad request frame", "conn", c.id, "remote", c.remote, "err", err)
	return gnet.Close
}
