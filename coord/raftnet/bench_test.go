package raftnet

import (
	"context"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
)

// BenchmarkTransport measures messages per second from one node to another
// over loopback: MsgApp with one 256-byte entry, sent in batches of 16,
// with at most 1024 in flight so that no queue overflows.
func BenchmarkTransport(b *testing.B) {
	tokens := make(chan struct{}, 1024)
	done := make(chan struct{})
	var got int
	a := startNode(b, 1, func(c *Config) { c.QueueSize = 2048 })
	defer a.Close()
	r := startNode(b, 2, func(c *Config) {
		c.Deliver = func(ctx context.Context, m *pb.Message) error {
			<-tokens
			if got++; got == b.N {
				close(done)
			}
			return nil
		}
	})
	defer r.Close()
	connect(a, r)
	m := msg(pb.MsgApp, 1, 2, 0)
	m.Entries = []*pb.Entry{{Index: new(uint64(1)), Term: new(uint64(1)), Data: make([]byte, 256)}}
	batch := make([]*pb.Message, 16)
	for i := range batch {
		batch[i] = m
	}
	b.ReportAllocs()
	b.ResetTimer()
	for sent := 0; sent < b.N; {
		n := min(len(batch), b.N-sent)
		for range n {
			tokens <- struct{}{}
		}
		a.Send(batch[:n])
		sent += n
	}
	<-done
	b.StopTimer()
	if s := a.Stats(); s.Dropped != 0 {
		b.Fatalf("dropped %d", s.Dropped)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
