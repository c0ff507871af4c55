package server

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// laterHandler answers each request from a goroutine of its own, after
// Serve returned (as a purgatory answers a long-poll fetch): the answer
// is written by that goroutine (writeDirect) while the loop holds nothing
// to write.
func laterHandler(answer func(r *Request)) Handler {
	return HandlerFunc(func(r *Request) { go answer(r) })
}

// TestDirectWriteHandsOverWhenTheSocketFills: an answer completed off the
// loop is written by the goroutine that completes it; when the socket
// fills mid-writev or mid-sendfile, the loop goes on from the byte where
// the direct write stopped. One request at a time, so that the loop holds
// nothing when each answer comes and each starts as a direct write; then
// pipelined, so that answers also queue behind a loop that is waiting.
func TestDirectWriteHandsOverWhenTheSocketFills(t *testing.T) {
	seg := newSegment(t, 4<<20)
	const n = 30
	layouts := make([]layout, 2*n+1)
	for corr := 1; corr <= 2*n; corr++ {
		switch corr % 3 {
		case 0: // bytes only: a writev the socket takes in part
			layouts[corr] = layout{strings.Repeat(string(rune('a'+corr%26)), 200<<10)}
		case 1: // a file range between bytes: sendfile stops mid-range
			layouts[corr] = layout{fmt.Sprintf("head%d", corr), seg.rng(int64(corr)*40000, 200<<10), "tail"}
		default: // small
			layouts[corr] = layout{fmt.Sprintf("small%d", corr)}
		}
	}
	h := laterHandler(func(r *Request) {
		if corr := r.Header.CorrelationID; corr >= 1 && int(corr) <= 2*n {
			r.Respond(layouts[corr].build(r))
			return
		}
		echo.Serve(r)
	})
	s := start(t, Config{SocketSendBuffer: 64 << 10}, h)
	c := dialWith(t, s, smallRcvBuf)
	c.r.Reset(&slowConn{Conn: c.conn, slowReads: 1 << 30})
	read := func(corr int32) {
		t.Helper()
		got, body := c.mustRead()
		if want := layouts[corr].want(seg); got != corr || !bytes.Equal(body, want) {
			t.Fatalf("response %d: correlation %d, %d bytes, want %d bytes", corr, got, len(body), len(want))
		}
	}
	for corr := int32(1); corr <= n; corr++ {
		c.write(echoFrame(corr, nil))
		read(corr)
	}
	// An answer after one the loop took over may go through the loop
	// too (gnet flushed the rest on its own, and only the next drain
	// finds the loop idle), so not every answer is written directly; the
	// small ones after a file range nearly all are, and every large one
	// written directly is handed over.
	st := s.Stats()
	t.Logf("%d answers: %d written directly, %d handed over", n, st.DirectWrites, st.DirectHandovers)
	if st.DirectWrites < n/4 || st.DirectHandovers < n/10 {
		t.Fatalf("direct writes %d, handovers %d, want at least %d and %d", st.DirectWrites, st.DirectHandovers, n/4, n/10)
	}
	for corr := int32(n + 1); corr <= 2*n; corr++ {
		c.write(echoFrame(corr, nil))
	}
	for corr := int32(n + 1); corr <= 2*n; corr++ {
		read(corr)
	}
	c.roundTrip(2*n+1, "done")
	eventually(t, "every range released", func() bool { return seg.refs.Load() == 0 })
}

// TestDirectWritesRaceClose: connections closed by their clients while
// goroutines write answers to them directly release every range, and the
// broker goes on serving (run with -race: OnClose waits for the write).
func TestDirectWritesRaceClose(t *testing.T) {
	seg := newSegment(t, 1<<20)
	h := laterHandler(func(r *Request) {
		l := layout{"x", seg.rng(int64(r.Header.CorrelationID)*1000, 64<<10), "y"}
		r.Respond(l.build(r))
	})
	s := start(t, Config{}, h)
	for i := range 20 {
		c := dial(t, s)
		for corr := int32(1); corr <= 30; corr++ {
			c.write(echoFrame(corr, nil))
		}
		for range i % 5 {
			c.mustRead()
		}
		c.conn.Close()
	}
	eventually(t, "every range released", func() bool { return seg.refs.Load() == 0 })
	eventually(t, "every connection closed", func() bool {
		st := s.Stats()
		return st.ConnectionsClosed == st.ConnectionsOpened
	})
	if s.Stats().DirectWrites == 0 {
		t.Fatal("no direct write")
	}
	c := dial(t, s)
	c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	c.write(echoFrame(7, nil))
	want := append(append([]byte("x"), seg.data[7000:7000+64<<10]...), 'y')
	if corr, body := c.mustRead(); corr != 7 || !bytes.Equal(body, want) {
		t.Fatalf("after the closes: correlation %d, %d bytes", corr, len(body))
	}
}
