package server

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// Connection limits (Kafka's ConnectionQuotas; KIP-306, KIP-402,
// KIP-612). The acceptor counts each connection it takes, by listener
// and by client IP, until the connection closes:
//
//   - Over max.connections (all listeners) or a listener's
//     listener.name.X.max.connections, the acceptor waits with the new
//     connection until one closes, as Kafka's waitForConnectionSlot does;
//     the connections behind it wait in the listen backlog.
//   - Over max.connection.creation.rate the acceptor waits until the rate
//     allows the next one (Kafka throttles its acceptor the same way).
//     kzero meters it with a token bucket that holds one second's worth,
//     where Kafka uses its windowed Rate: the long-run rate is the same.
//   - Over max.connections.per.ip, or its max.connections.per.ip.overrides
//     entry for the address, the new connection is closed at once and
//     counted (Stats.ConnectionsLimited), as Kafka's
//     TooManyConnectionsException closes it.
//
// Kafka lets the inter-broker listener take a slot over max.connections
// by closing another listener's least recently used connection, so
// brokers can always reach each other; kzero lets the inter-broker
// listener (ConnLimits.InterBroker) go over max.connections instead,
// closing nothing. Its own listener max still applies.

// ConnLimits are the connection limits; zero values mean no limit.
type ConnLimits struct {
	MaxConnections      int            // max.connections, all listeners together
	PerListener         map[string]int // listener.name.X.max.connections, by listener name
	MaxConnectionsPerIP int            // max.connections.per.ip
	// NoConnectionsPerIP is max.connections.per.ip=0, which Kafka allows
	// with overrides: an address without one may not connect.
	NoConnectionsPerIP bool
	// PerIPOverrides is max.connections.per.ip.overrides, by IP address
	// (host names resolved by the caller); it applies also with no
	// MaxConnectionsPerIP.
	PerIPOverrides map[netip.Addr]int
	// CreationRate is max.connection.creation.rate: connections accepted
	// per second, all listeners together.
	CreationRate float64
	// InterBroker names the inter-broker listener, which max.connections
	// does not hold back.
	InterBroker string
	// IPRate returns the connection_creation_rate client quota of an
	// address (its ip entity, or the default ip entity; KIP-612), 0 for
	// none. A connection over it is closed at accept and counted in
	// ConnectionsLimited. nil: no ip quotas.
	IPRate func(ip netip.Addr) float64
}

// SetConnLimits replaces the connection limits at runtime (Kafka's
// dynamic max.connections* and max.connection.creation.rate). Connections
// already open stay, as in Kafka, even over a lowered limit; an acceptor
// waiting for a slot checks again.
func (s *Server) SetConnLimits(l ConnLimits) {
	s.limits.Store(&l)
	cc := &s.conns
	cc.mu.Lock()
	if cc.freed != nil {
		close(cc.freed) // wakes every waiting acceptor
		cc.freed = make(chan struct{}, 1)
	}
	cc.mu.Unlock()
}

// connCounts is the acceptor's bookkeeping. Accept goroutines take slots,
// event loops give them back (onClose).
type connCounts struct {
	mu         sync.Mutex
	total      int
	byListener map[string]int
	byIP       map[netip.Addr]int
	tokens     float64   // creation rate bucket
	refilled   time.Time // when tokens were last topped up
	freed      chan struct{}
	ipRates    map[netip.Addr]*ipBucket // connection_creation_rate per address
}

// ipBucket meters one address's connection_creation_rate: a token bucket
// holding one second's worth (at least one connection).
type ipBucket struct {
	tokens   float64
	refilled time.Time
}

// remoteIP is the address a connection is counted under.
func remoteIP(a net.Addr) netip.Addr {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// admit counts a connection just accepted on l, waiting for a slot and
// for the creation rate; it reports false when the connection must be
// closed (over its IP's limit) or the server is stopping. On the
// listener's accept goroutine. Connections are counted with no limit set
// too, so that one set at runtime holds from the next accept.
func (s *Server) admit(nc *net.TCPConn, l *listener) bool {
	lim := s.limits.Load()
	cc := &s.conns
	if !s.waitCreation() || !s.waitSlot(l.Name) {
		return false
	}
	ip := remoteIP(nc.RemoteAddr())
	cc.mu.Lock()
	max, ok := lim.PerIPOverrides[ip]
	if !ok {
		max, ok = lim.MaxConnectionsPerIP, lim.NoConnectionsPerIP
	}
	if max > 0 && cc.byIP[ip] >= max || ok && max == 0 || !cc.ipRateAllowsLocked(lim.IPRate, ip) {
		cc.releaseLocked(l.Name, netip.Addr{})
		cc.mu.Unlock()
		s.stats.connLimited.Add(1)
		s.log.Debug("closing connection: too many connections, or too fast, from its address", "remote", nc.RemoteAddr())
		return false
	}
	cc.byIP[ip]++
	cc.mu.Unlock()
	return true
}

// ipRateAllowsLocked takes one token of ip's connection_creation_rate
// bucket, reporting false when it has none. Caller holds cc.mu.
func (cc *connCounts) ipRateAllowsLocked(rate func(netip.Addr) float64, ip netip.Addr) bool {
	if rate == nil {
		return true
	}
	r := rate(ip)
	if r <= 0 {
		delete(cc.ipRates, ip)
		return true
	}
	now := time.Now()
	if cc.ipRates == nil {
		cc.ipRates = map[netip.Addr]*ipBucket{}
	}
	if len(cc.ipRates) > 1024 {
		// Buckets idle for long are full again: forget them.
		for a, b := range cc.ipRates {
			if now.Sub(b.refilled) > time.Minute {
				delete(cc.ipRates, a)
			}
		}
	}
	capacity := max(r, 1) // one second's worth, and room for one connection
	b := cc.ipRates[ip]
	if b == nil {
		b = &ipBucket{tokens: capacity, refilled: now}
		cc.ipRates[ip] = b
	}
	b.tokens = min(capacity, b.tokens+now.Sub(b.refilled).Seconds()*r)
	b.refilled = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// waitSlot takes a slot under max.connections and the listener's max,
// waiting for a connection to close when there is none.
func (s *Server) waitSlot(name string) bool {
	cc := &s.conns
	for {
		lim := s.limits.Load()
		cc.mu.Lock()
		cc.initLocked()
		lmax := lim.PerListener[name]
		brokerOK := lim.MaxConnections <= 0 || cc.total < lim.MaxConnections || name == lim.InterBroker
		if brokerOK && (lmax <= 0 || cc.byListener[name] < lmax) {
			cc.total++
			cc.byListener[name]++
			cc.mu.Unlock()
			return true
		}
		freed := cc.freed
		cc.mu.Unlock()
		s.stats.acceptWaits.Add(1)
		select {
		case <-freed:
		case <-s.acceptStop:
			return false
		}
	}
}

// waitCreation waits until max.connection.creation.rate allows one more
// connection.
func (s *Server) waitCreation() bool {
	cc := &s.conns
	for {
		rate := s.limits.Load().CreationRate
		if rate <= 0 {
			return true
		}
		cc.mu.Lock()
		now := time.Now()
		if cc.refilled.IsZero() {
			cc.tokens = rate
		} else {
			cc.tokens = min(rate, cc.tokens+now.Sub(cc.refilled).Seconds()*rate)
		}
		cc.refilled = now
		if cc.tokens >= 1 {
			cc.tokens--
			cc.mu.Unlock()
			return true
		}
		wait := time.Duration((1 - cc.tokens) / rate * float64(time.Second))
		cc.mu.Unlock()
		s.stats.acceptWaits.Add(1)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.acceptStop:
			t.Stop()
			return false
		}
	}
}

// initLocked makes the counts' maps on first use. Caller holds cc.mu.
func (cc *connCounts) initLocked() {
	if cc.byListener == nil {
		cc.byListener, cc.byIP, cc.freed = map[string]int{}, map[netip.Addr]int{}, make(chan struct{}, 1)
	}
}

// releaseConn gives back a closed connection's slot. On its event loop.
func (s *Server) releaseConn(c *Conn) {
	s.conns.mu.Lock()
	s.conns.releaseLocked(c.listener, remoteIP(c.remote))
	s.conns.mu.Unlock()
}

// releaseLocked gives back a listener slot and, when ip is valid, an IP's.
func (cc *connCounts) releaseLocked(listener string, ip netip.Addr) {
	cc.total--
	cc.byListener[listener]--
	if ip.IsValid() {
		if cc.byIP[ip]--; cc.byIP[ip] <= 0 {
			delete(cc.byIP, ip)
		}
	}
	select {
	case cc.freed <- struct{}{}:
	default:
	}
}

// releaseAccepted gives back the slots of a connection that never
// reached an event loop.
func (s *Server) releaseAccepted(nc *net.TCPConn, l *listener) {
	s.conns.mu.Lock()
	s.conns.releaseLocked(l.Name, remoteIP(nc.RemoteAddr()))
	s.conns.mu.Unlock()
}
