package server

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kzero/net/wire"
)

// segment is a real temp file with a reference count, like a log segment.
type segment struct {
	f    *os.File
	fd   int
	data []byte
	refs atomic.Int32
}

func newSegment(t testing.TB, size int) *segment {
	t.Helper()
	data := make([]byte, size)
	rng := rand.NewChaCha8([32]byte{byte(size)})
	_, _ = rng.Read(data)
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	// Fd once, here: it switches the file to blocking mode, which must not
	// race with the loops' use of the descriptor.
	return &segment{f: f, fd: int(f.Fd()), data: data}
}

func (s *segment) Fd() int { return s.fd }

func (s *segment) Release() {
	if s.refs.Add(-1) < 0 {
		panic("segment released more than referenced")
	}
}

// rng takes a reference for a range of the segment.
func (s *segment) rng(pos, n int64) wire.FileRange {
	s.refs.Add(1)
	return wire.FileRange{File: s, Pos: pos, Len: n}
}

// layout is a response body: strings are bytes, ranges are file ranges.
type layout []any

func (l layout) build(r *Request) *wire.Response {
	resp := r.NewResponse()
	for _, p := range l {
		switch p := p.(type) {
		case string:
			resp.B = append(resp.B, p...)
		case wire.FileRange:
			resp.AddFile(p)
		}
	}
	return resp
}

func (l layout) want(seg *segment) []byte {
	var b []byte
	for _, p := range l {
		switch p := p.(type) {
		case string:
			b = append(b, p...)
		case wire.FileRange:
			b = append(b, seg.data[p.Pos:p.Pos+p.Len]...)
		}
	}
	return b
}

// layoutHandler answers request i with layouts[i]'s response; a nil
// layout echoes.
func layoutHandler(layouts map[int32]func() layout) Handler {
	return HandlerFunc(func(r *Request) {
		if mk := layouts[r.Header.CorrelationID]; mk != nil {
			r.Respond(mk().build(r))
			return
		}
		echo.Serve(r)
	})
}

// TestFileRanges: bytes and file ranges interleaved arrive byte-exact, the
// ranges went out with sendfile, and each range's reference is released.
func TestFileRanges(t *testing.T) {
	seg := newSegment(t, 1<<20)
	l := layout{"A", seg.rng(100, 300000), "BB", seg.rng(500000, 400000), "CCC", seg.rng(0, 0), "D"}
	s := start(t, Config{}, layoutHandler(map[int32]func() layout{1: func() layout { return l }}))
	c := dial(t, s)
	c.write(echoFrame(1, nil))
	corr, body := c.mustRead()
	if corr != 1 || !bytes.Equal(body, l.want(seg)) {
		t.Fatalf("response %d: %d bytes, not the expected %d", corr, len(body), len(l.want(seg)))
	}
	// The loop writes responses in order: once the next one arrived, the
	// ranges of the first were released.
	c.roundTrip(2, "next")
	if n := seg.refs.Load(); n != 0 {
		t.Fatalf("%d references left", n)
	}
	if st := s.Stats(); st.ZeroCopyBytes != 700000 || st.CopiedBytes != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// slowConn reads slowly for its first reads, so the server's socket fills.
type slowConn struct {
	net.Conn
	slowReads int
}

func (s *slowConn) Read(p []byte) (int, error) {
	if s.slowReads > 0 {
		s.slowReads--
		time.Sleep(500 * time.Microsecond) // pacing: a slow reader, so the server's socket fills
		p = p[:min(len(p), 4096)]
	}
	return s.Conn.Read(p)
}

// smallRcvBuf is a dialer whose sockets have a small receive buffer.
var smallRcvBuf = &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
	var err error
	if cerr := rc.Control(func(fd uintptr) {
		err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 8192)
	}); cerr != nil {
		return cerr
	}
	return err
}}

// bigRangeTest sends tens of MiB in one range to a client that reads
// slowly through a small receive buffer, followed by pipelined responses;
// everything must arrive byte-exact and in order.
func bigRangeTest(t *testing.T, hook func(*Server)) (*Server, *segment) {
	seg := newSegment(t, 40<<20)
	ls := map[int32]layout{
		1: {"head", seg.rng(0, 40<<20), "tail"},
		3: {seg.rng(1<<20, 1<<20)},
		4: {"x", seg.rng(7, 1), "y"},
	}
	mk := map[int32]func() layout{}
	for corr, l := range ls {
		mk[corr] = func() layout { return l }
	}
	s := startWith(t, Config{SocketSendBuffer: 64 << 10}, layoutHandler(mk), hook)
	c := dialWith(t, s, smallRcvBuf)
	c.r.Reset(&slowConn{Conn: c.conn, slowReads: 400})
	for corr := int32(1); corr <= 4; corr++ {
		c.write(echoFrame(corr, []byte("echo")))
	}
	for corr := int32(1); corr <= 4; corr++ {
		got, body := c.mustRead()
		want := []byte("echo")
		if l, ok := ls[corr]; ok {
			want = l.want(seg)
		}
		if got != corr || !bytes.Equal(body, want) {
			t.Fatalf("response %d: correlation %d, %d bytes, want %d bytes", corr, got, len(body), len(want))
		}
	}
	c.roundTrip(5, "done")
	if n := seg.refs.Load(); n != 0 {
		t.Fatalf("%d references left", n)
	}
	return s, seg
}

func TestLargeRangeSlowReader(t *testing.T) {
	s, _ := bigRangeTest(t, nil)
	st := s.Stats()
	if want := int64(40<<20 + 1<<20 + 1); st.ZeroCopyBytes != want || st.CopiedBytes != 0 {
		t.Fatalf("zero-copy %d (want %d), copied %d", st.ZeroCopyBytes, want, st.CopiedBytes)
	}
	if st.SocketFull == 0 {
		t.Fatalf("the socket never filled up: the test did not test waiting")
	}
}

// TestCopyWhenBlocked: with CopyWhenBlocked, ranges that find the socket
// full are copied, and everything still arrives in order.
func TestCopyWhenBlocked(t *testing.T) {
	s, _ := bigRangeTest(t, func(s *Server) { s.cfg.CopyWhenBlocked = true })
	st := s.Stats()
	if want := int64(40<<20 + 1<<20 + 1); st.ZeroCopyBytes+st.CopiedBytes != want || st.CopiedBytes == 0 || st.SocketFull == 0 {
		t.Fatalf("zero-copy %d + copied %d (want %d, some copied), socket full %d", st.ZeroCopyBytes, st.CopiedBytes, want, st.SocketFull)
	}
}

// TestCopyFallback: a file sendfile cannot read is copied, in order.
func TestCopyFallback(t *testing.T) {
	s, _ := bigRangeTest(t, func(s *Server) {
		s.sendfile = func(int, int, *int64, int) (int, error) { return 0, unix.EINVAL }
	})
	st := s.Stats()
	if want := int64(40<<20 + 1<<20 + 1); st.CopiedBytes != want || st.ZeroCopyBytes != 0 {
		t.Fatalf("copied %d (want %d), zero-copy %d", st.CopiedBytes, want, st.ZeroCopyBytes)
	}
}

// TestSendfileErrorCloses: a failing sendfile closes the connection and
// releases the ranges.
func TestSendfileErrorCloses(t *testing.T) {
	seg := newSegment(t, 4096)
	s := startWith(t, Config{Logger: discard()}, layoutHandler(map[int32]func() layout{
		1: func() layout { return layout{"a", seg.rng(0, 4096), "b", seg.rng(0, 10)} },
	}), func(s *Server) {
		s.sendfile = func(int, int, *int64, int) (int, error) { return 0, unix.EIO }
	})
	c := dial(t, s)
	c.write(echoFrame(1, nil))
	c.expectClosed()
	eventually(t, "ranges released", func() bool { return seg.refs.Load() == 0 })
	dial(t, s).roundTrip(2, "fine")
}

// TestShortFileCloses: a range past the end of its file cannot fill the
// frame it promised: the connection closes and the ranges are released.
func TestShortFileCloses(t *testing.T) {
	seg := newSegment(t, 4096)
	s := start(t, Config{Logger: discard()}, layoutHandler(map[int32]func() layout{
		1: func() layout { return layout{"a", seg.rng(4000, 200), "b", seg.rng(0, 10)} },
	}))
	c := dial(t, s)
	c.write(echoFrame(1, nil))
	c.expectClosed()
	eventually(t, "ranges released", func() bool { return seg.refs.Load() == 0 })
}

// TestStopReleasesEverything: a range waiting on a client that does not
// read, and responses completed after Stop, are all released.
func TestStopReleasesEverything(t *testing.T) {
	seg := newSegment(t, 16<<20)
	late := make(chan *Request, 1)
	s := New(Config{Addr: "127.0.0.1:0", Loops: 1, SocketSendBuffer: 64 << 10, Logger: discard()}, HandlerFunc(func(r *Request) {
		switch r.Header.CorrelationID {
		case 1:
			r.Respond(layout{seg.rng(0, 16<<20)}.build(r))
		case 2:
			late <- r
		}
	}))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c := dialWith(t, s, smallRcvBuf) // never reads
	c.write(append(echoFrame(1, nil), echoFrame(2, nil)...))
	r := <-late
	eventually(t, "the range waits for the socket", func() bool { return s.Stats().SocketFull > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	r.Respond(layout{"late", seg.rng(0, 100)}.build(r))
	if n := seg.refs.Load(); n != 0 {
		t.Fatalf("%d references left after Stop", n)
	}
	c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, c.conn); err != nil {
		t.Fatalf("connection not closed: %v", err)
	}
}
