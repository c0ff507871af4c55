package server

import (
	"fmt"
	"testing"
)

// TestConnRequestCapPausesPipelining: a connection pipelining small
// requests behind one its handler holds stops reading at
// ConnMaxQueuedRequests (the request count, not the bytes, is the limit
// here), and once the held request completes reads and answers the rest
// in order.
func TestConnRequestCapPausesPipelining(t *testing.T) {
	const limit, n = 4, 12
	held := make(chan *Request, 1)
	s := start(t, Config{ConnMaxQueuedRequests: limit}, HandlerFunc(func(r *Request) {
		if string(r.Body) == "hold" {
			held <- r
			return
		}
		echo(r)
	}))
	c := dial(t, s)
	c.write(echoFrame(0, []byte("hold")))
	for i := 1; i < n; i++ {
		c.write(echoFrame(int32(i), []byte(fmt.Sprint(i))))
	}
	r := <-held
	eventually(t, "reads paused at the request cap", func() bool { return s.Stats().ReadPauses > 0 })
	if got := s.Stats().Requests; got != limit {
		t.Fatalf("%d requests read with %d held, cap %d", got, 1, limit)
	}
	echo(r)
	for i := range n {
		want := fmt.Sprint(i)
		if i == 0 {
			want = "hold"
		}
		if corr, body := c.mustRead(); corr != int32(i) || string(body) != want {
			t.Fatalf("response %d: %d %q", i, corr, body)
		}
	}
}
