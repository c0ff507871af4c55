package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
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

	// sendfile is unix.Sendfile; tests inject faults.
	sendfile func(outfd, infd int, offset *int64, count int) (int, error)

	eng     gnet.Engine
	addr    net.Addr
	booted  chan error // OnBoot, or Run's early failure, reports here once
	runDone chan struct{}
	poller  *writablePoller
	nextID  atomic.Uint64
	runners sync.WaitGroup // runner goroutines

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
		booted:   make(chan error, 1),
		runDone:  make(chan struct{}),
	}
	s.mu.conns = make(map[uint64]*Conn)
	return s
}

// Start listens and starts the event loops; it returns once the listener
// is bound (see Addr), or with the error that prevented it.
func (s *Server) Start() error {
	quietGnet()
	p, err := newWritablePoller(s.log)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.poller = p
	opts := []gnet.Option{
		gnet.WithLogger(gnetLogger{s.log}),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithSocketSendBuffer(s.cfg.SocketSendBuffer),
		gnet.WithSocketRecvBuffer(s.cfg.SocketRecvBuffer),
	}
	if s.cfg.Loops > 0 {
		opts = append(opts, gnet.WithNumEventLoop(s.cfg.Loops))
	} else {
		opts = append(opts, gnet.WithMulticore(true))
	}
	go func() {
		err := gnet.Run(&events{s: s}, "tcp://"+s.cfg.Addr, opts...)
		if err != nil {
			select {
			case s.booted <- err:
			default:
				s.log.Error("event loops stopped", "err", err)
			}
		}
		close(s.runDone)
	}()
	if err := <-s.booted; err != nil {
		<-s.runDone
		p.close()
		return fmt.Errorf("server: listen on %s: %w", s.cfg.Addr, err)
	}
	if s.cfg.IdleTimeout > 0 {
		s.sweepStop, s.sweepDone = make(chan struct{}), make(chan struct{})
		go s.sweep()
	}
	s.log.Info("listening", "addr", s.addr.String())
	return nil
}

// Addr is the bound listener address, once Start returned.
func (s *Server) Addr() net.Addr { return s.addr }

// Stats returns the counters.
func (s *Server) Stats() Stats { return s.stats.snapshot() }

// Stop closes the listener and every connection (gnet writes what it
// still buffers, as far as the socket takes it), then waits until the
// event loops have stopped and no handler runs Serve, or ctx is done.
// Requests completed after Stop are released, not written.
func (s *Server) Stop(ctx context.Context) error {
	if s.addr == nil {
		return nil // not started
	}
	s.stopOnce.Do(func() {
		if s.sweepStop != nil {
			close(s.sweepStop)
			<-s.sweepDone
		}
		// Engine.Stop signals the shutdown, then polls every 500ms for its
		// end; with a done context it only signals, and runDone tells the
		// end (gnet.Run returns after the loops closed every connection).
		done, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.eng.Stop(done); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("stop event loops", "err", err)
		}
	})
	select {
	case <-s.runDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	runners := make(chan struct{})
	go func() {
		s.runners.Wait()
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

func (e *events) OnBoot(eng gnet.Engine) gnet.Action {
	s := e.s
	s.eng = eng
	addr, err := boundAddr(eng)
	if err != nil {
		s.booted <- err
		return gnet.Shutdown
	}
	s.addr = addr
	s.booted <- nil
	return gnet.None
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
	for {
		frame, err := c.loop.reader.next(gc)
		if err != nil {
			return c.reject(err)
		}
		if frame == nil {
			return gnet.None
		}
		h, body, err := wire.ParseRequestHeader(frame.B)
		if err != nil {
			framePool.Put(frame)
			return c.reject(fmt.Errorf("request header: %w", err))
		}
		c.enqueue(newRequest(c, h, body, frame))
	}
}

// reject logs a protocol violation and closes the connection.
func (c *Conn) reject(err error) gnet.Action {
	c.srv.stats.rejected.Add(1)
	c.srv.log.Warn("closing connection: bad request frame", "conn", c.id, "remote", c.remote, "err", err)
	return gnet.Close
}

// boundAddr is the listener's address (the port, if 0 was asked).
func boundAddr(eng gnet.Engine) (net.Addr, error) {
	fd, err := eng.Dup()
	if err != nil {
		return nil, fmt.Errorf("dup listener: %w", err)
	}
	defer unix.Close(fd)
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return nil, os.NewSyscallError("getsockname", err)
	}
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(sa.Addr[:]).To16(), Port: sa.Port}, nil
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(sa.Addr[:]), Port: sa.Port}, nil
	}
	return nil, fmt.Errorf("listener address %T is not TCP", sa)
}
