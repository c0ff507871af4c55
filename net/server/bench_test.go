package server

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkEcho measures request throughput through the whole path on
// loopback: frame cut, header decode, runner, response write. Each of 4
// connections pipelines 100-byte requests, at most `depth` in flight.
func BenchmarkEcho(b *testing.B) {
	for _, conns := range []int{1, 4} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			s := start(b, Config{Loops: 2, Logger: discard()}, echo)
			req := echoFrame(1, bytes.Repeat([]byte{'x'}, 100))
			clients := make([]*client, conns)
			for i := range clients {
				clients[i] = dial(b, s)
			}
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			b.ResetTimer()
			pipeline(b, clients, b.N, req, func(body []byte) {
				if len(body) != 100 {
					b.Errorf("echo of %d bytes", len(body))
				}
			})
		})
	}
}

// BenchmarkFileRange measures fetch-like responses: 1 MiB file ranges
// between a few bytes, sent with sendfile, on one connection.
func BenchmarkFileRange(b *testing.B) {
	seg := newSegment(b, 64<<20)
	b.Run("wait", func(b *testing.B) { benchFileRange(b, seg, false) })
	b.Run("copy-when-blocked", func(b *testing.B) { benchFileRange(b, seg, true) })
}

func benchFileRange(b *testing.B, seg *segment, copyWhenBlocked bool) {
	const size = 1 << 20
	cfg := Config{Loops: 1, CopyWhenBlocked: copyWhenBlocked, Logger: discard()}
	s := start(b, cfg, HandlerFunc(func(r *Request) {
		resp := r.NewResponse()
		resp.B = append(resp.B, "partition header"...)
		off := int64(r.Header.CorrelationID%64) * size
		resp.AddFile(seg.rng(off, size))
		resp.B = append(resp.B, "trailer"...)
		r.Respond(resp)
	}))
	c := dial(b, s)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	pipeline(b, []*client{c}, b.N, nil, func(body []byte) {
		if len(body) != size+len("partition header")+len("trailer") {
			b.Errorf("response of %d bytes", len(body))
		}
	})
	b.StopTimer()
	st := s.Stats()
	b.ReportMetric(float64(st.ZeroCopyBytes)/float64(st.ZeroCopyBytes+st.CopiedBytes)*100, "%zerocopy")
	b.ReportMetric(float64(st.SocketFull)/float64(b.N), "socketfull/op")
}

// pipeline sends n requests spread over the clients, keeping up to 64 in
// flight per client, and checks each response with check. A nil req sends
// echo frames with the correlation id set.
func pipeline(b *testing.B, clients []*client, n int, req []byte, check func([]byte)) {
	const depth = 64
	var wg sync.WaitGroup
	for k, c := range clients {
		count := n / len(clients)
		if k < n%len(clients) {
			count++
		}
		credits := make(chan struct{}, depth)
		wg.Go(func() {
			var batch []byte
			for i := range count {
				credits <- struct{}{}
				f := req
				if f == nil {
					f = echoFrame(int32(i), nil)
				}
				batch = append(batch[:0], f...)
				if _, err := c.conn.Write(batch); err != nil {
					b.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range count {
				_, body, err := c.read()
				if err != nil {
					b.Error(err)
					return
				}
				check(body)
				<-credits
			}
		})
	}
	wg.Wait()
}
