package raftnet

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"kzero/kzerotest/await"
)

// wait bounds every wait for an event in these tests: reaching it means
// the event never came (a hang), not that something was slow.
const wait = 30 * time.Second

// testNode is a started Transport whose deliveries and reports land in
// channels.
type testNode struct {
	*Transport
	id          int32
	got         chan *pb.Message
	unreachable chan int32
	snapFailed  chan int32
	snapSent    chan int32
	log         *syncBuffer
}

func startNode(t testing.TB, id int32, edit func(*Config)) *testNode {
	t.Helper()
	n := &testNode{id: id, got: make(chan *pb.Message, 1<<14), unreachable: make(chan int32, 64),
		snapFailed: make(chan int32, 64), snapSent: make(chan int32, 64), log: &syncBuffer{}}
	cfg := Config{
		NodeID:     id,
		ClusterID:  "test-cluster",
		ListenAddr: "127.0.0.1:0",
		Deliver: func(ctx context.Context, m *pb.Message) error {
			select {
			case n.got <- m:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		OnUnreachable: func(p int32) { offer(n.unreachable, p) },
		OnSnapshot: func(p int32, sent bool) {
			if sent {
				offer(n.snapSent, p)
			} else {
				offer(n.snapFailed, p)
			}
		},
		DialTimeout: time.Second,
		Logger:      slog.New(slog.NewTextHandler(n.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&cfg)
	}
	n.Transport = New(cfg)
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func (n *testNode) addr() string { return n.Addr().String() }

// offer sends v on ch unless ch is full: report callbacks must not block.
func offer[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}

// connect makes every node a peer of every other.
func connect(nodes ...*testNode) {
	peers := map[int32]string{}
	for _, n := range nodes {
		peers[n.id] = n.addr()
	}
	for _, n := range nodes {
		n.SetPeers(peers)
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}

// noLeaks checks, after the test's other cleanups (registered later, run
// earlier), that the goroutines it started are gone.
func noLeaks(t *testing.T) {
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		if !await.Poll(wait, func() bool { return runtime.NumGoroutine() <= base }) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
	})
}

// deadAddr returns a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// rawListener accepts connections and hands them to the test, which
// decides what (not) to do with them.
func rawListener(t *testing.T) (string, <-chan net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 16)
	done := make(chan struct{})
	var held []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
			offer(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	return ln.Addr().String(), conns
}

// rawDial opens a connection to n as a stranger that writes what it likes.
func rawDial(t *testing.T, n *testNode) net.Conn {
	c, err := net.Dial("tcp", n.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// drainUntilClosed reads c until the other end closes it and returns what
// it read.
func drainUntilClosed(t *testing.T, c net.Conn) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(wait))
	b, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) { // a reset when bytes were left unread
		t.Fatalf("connection not closed by the transport: %v", err)
	}
	return b
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) contains(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(s.b.String(), sub)
}
