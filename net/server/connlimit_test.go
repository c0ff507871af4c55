package server

import (
	"bufio"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestConnLimitPerIP: past max.connections.per.ip a new connection from
// the address is closed at once and counted; once one closes, the next is
// served. An override raises the limit for its address.
func TestConnLimitPerIP(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits ConnLimits
		max    int
	}{
		{"per ip", ConnLimits{MaxConnectionsPerIP: 2}, 2},
		{"override", ConnLimits{MaxConnectionsPerIP: 1, PerIPOverrides: map[netip.Addr]int{netip.MustParseAddr("127.0.0.1"): 3}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, Config{Limits: tc.limits}, echo)
			var open []*client
			for i := range tc.max {
				c := dial(t, s)
				c.roundTrip(int32(i), "within the limit")
				open = append(open, c)
			}
			over := dial(t, s)
			over.expectClosed()
			if n := s.Stats().ConnectionsLimited; n != 1 {
				t.Fatalf("limited %d", n)
			}
			open[0].conn.Close()
			eventually(t, "the slot freed", func() bool { return s.Stats().ConnectionsClosed >= 1 })
			dial(t, s).roundTrip(9, "a slot freed")
		})
	}
}

// TestConnLimitMaxWaits: at max.connections the acceptor waits with the
// next connection (it is not closed) and serves it once another closes.
func TestConnLimitMaxWaits(t *testing.T) {
	s := start(t, Config{Limits: ConnLimits{MaxConnections: 1}}, echo)
	first := dial(t, s)
	first.roundTrip(1, "first")
	second := dial(t, s)
	second.write(echoFrame(2, []byte("waits")))
	eventually(t, "the acceptor waiting", func() bool { return s.Stats().AcceptWaits > 0 })
	first.conn.Close()
	if corr, body := second.mustRead(); corr != 2 || string(body) != "waits" {
		t.Fatalf("got %d %q", corr, body)
	}
	if n := s.Stats().ConnectionsLimited; n != 0 {
		t.Fatalf("limited %d", n)
	}
}

// TestConnLimitPerListener: a listener's own max makes its acceptor wait
// while another listener still accepts.
func TestConnLimitPerListener(t *testing.T) {
	s := start(t, Config{
		Listeners: []Listener{{Name: "A", Addr: "127.0.0.1:0"}, {Name: "B", Addr: "127.0.0.1:0"}},
		Limits:    ConnLimits{PerListener: map[string]int{"A": 1}},
	}, echo)
	a := dialAddr(t, s.ListenerAddr("A").String())
	a.roundTrip(1, "A's one")
	a2 := dialAddr(t, s.ListenerAddr("A").String())
	a2.write(echoFrame(2, []byte("A waits")))
	eventually(t, "A's acceptor waiting", func() bool { return s.Stats().AcceptWaits > 0 })
	dialAddr(t, s.ListenerAddr("B").String()).roundTrip(3, "B accepts")
	a.conn.Close()
	if corr, _ := a2.mustRead(); corr != 2 {
		t.Fatalf("got %d", corr)
	}
}

func dialAddr(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, conn: c.(*net.TCPConn), r: bufio.NewReaderSize(c, 64<<10)}
}

// TestConnLimitCreationRate: at max.connection.creation.rate R (a
// bucket of one second's worth), N connections take at least (N-R)/R
// seconds to be served: a lower bound, which load cannot break.
func TestConnLimitCreationRate(t *testing.T) {
	const rate, n = 10, 25
	s := start(t, Config{Limits: ConnLimits{CreationRate: rate}}, echo)
	began := time.Now()
	for i := range n {
		dial(t, s).roundTrip(int32(i), "paced")
	}
	if el, least := time.Since(began), time.Duration(n-rate)*time.Second/rate; el < least {
		t.Fatalf("%d connections in %v at %d/s", n, el, rate)
	}
	if s.Stats().AcceptWaits == 0 {
		t.Fatal("the acceptor never waited")
	}
}

// TestConnLimitInterBrokerListener: at max.connections the inter-broker
// listener still accepts, while another listener's acceptor waits.
func TestConnLimitInterBrokerListener(t *testing.T) {
	s := start(t, Config{
		Listeners: []Listener{{Name: "CLIENT", Addr: "127.0.0.1:0"}, {Name: "BROKER", Addr: "127.0.0.1:0"}},
		Limits:    ConnLimits{MaxConnections: 1, InterBroker: "BROKER"},
	}, echo)
	dialAddr(t, s.ListenerAddr("CLIENT").String()).roundTrip(1, "the one slot")
	waiting := dialAddr(t, s.ListenerAddr("CLIENT").String())
	waiting.write(echoFrame(2, []byte("waits")))
	eventually(t, "the client acceptor waiting", func() bool { return s.Stats().AcceptWaits > 0 })
	dialAddr(t, s.ListenerAddr("BROKER").String()).roundTrip(3, "a broker gets in")
	dialAddr(t, s.ListenerAddr("BROKER").String()).roundTrip(4, "and another")
}

// TestConnLimitIPRate: an address over its connection_creation_rate has
// its next connection closed at accept. The rate, one per 1,000 s, and
// the bucket (one second's worth, at least one connection) let exactly
// one connection in however slow the machine.
func TestConnLimitIPRate(t *testing.T) {
	local := netip.MustParseAddr("127.0.0.1")
	s := start(t, Config{Limits: ConnLimits{IPRate: func(ip netip.Addr) float64 {
		if ip == local {
			return 0.001
		}
		return 0
	}}}, echo)
	dial(t, s).roundTrip(1, "one")
	dial(t, s).expectClosed()
	if n := s.Stats().ConnectionsLimited; n != 1 {
		t.Fatalf("limited %d", n)
	}
}

// TestSetConnLimits: limits set at runtime count the connections opened
// before them (counted with no limit set), leave those open, and a raised
// limit lets a waiting acceptor go on.
func TestSetConnLimits(t *testing.T) {
	s := start(t, Config{}, echo)
	var open []*client
	for i := range 2 {
		c := dial(t, s)
		c.roundTrip(int32(i), "no limit yet")
		open = append(open, c)
	}
	// Per IP: the two open ones stay; a third from the address is closed.
	s.SetConnLimits(ConnLimits{MaxConnectionsPerIP: 2})
	open[1].roundTrip(2, "still served")
	dial(t, s).expectClosed()
	if n := s.Stats().ConnectionsLimited; n != 1 {
		t.Fatalf("limited %d", n)
	}
	// max.connections: the acceptor waits with the next one until the
	// limit is raised.
	s.SetConnLimits(ConnLimits{MaxConnections: 2})
	waiting := dial(t, s)
	waiting.write(echoFrame(3, []byte("waits")))
	eventually(t, "the acceptor waiting", func() bool { return s.Stats().AcceptWaits > 0 })
	s.SetConnLimits(ConnLimits{MaxConnections: 3})
	if corr, body := waiting.mustRead(); corr != 3 || string(body) != "waits" {
		t.Fatalf("got %d %q", corr, body)
	}
	// Closing gives the slots back: with the limit at 3 and one closed,
	// one more gets in.
	closed := s.Stats().ConnectionsClosed
	open[0].conn.Close()
	eventually(t, "the slot freed", func() bool { return s.Stats().ConnectionsClosed > closed })
	dial(t, s).roundTrip(4, "a slot freed")
}
