package raftnet

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
)

// FuzzServe feeds arbitrary bytes to an inbound connection, optionally
// after a valid hello (or a learner's): it ends with a bad frame or the
// end of the input, never panics, and delivers only messages to this node
// from the node of a hello.
func FuzzServe(f *testing.F) {
	hi := appendFrame(nil, kindHello, appendHello(nil, hello{version: Version, from: 1, to: 2, cluster: "c"}))
	var stream []byte
	for i := range 3 {
		m := msg(pb.MsgApp, 1, 2, uint64(i))
		m.Entries = []*pb.Entry{{Index: new(uint64(i + 1)), Data: []byte("x")}}
		stream, _ = appendMessage(stream, m, 1<<10)
	}
	wrongTo, _ := appendMessage(nil, msg(pb.MsgHeartbeat, 1, 3, 0), 1<<10)
	f.Add(false, append(bytes.Clone(hi), stream...))
	f.Add(true, stream)
	f.Add(true, stream[:len(stream)-2])
	f.Add(true, wrongTo)
	f.Add(true, appendFrame(nil, kindMessage, []byte{0xff, 0xff}))
	f.Add(false, appendFrame(nil, kindHello, appendHello(nil, hello{version: 9, from: 1, to: 2})))
	f.Add(false, []byte("GET / HTTP/1.1\r\n\r\n"))
	// A learner's hello, then frames: messages from it, a quorum frame.
	learnerHi := appendFrame(nil, kindHello, appendHello(nil, hello{version: Version, from: 3, to: anyNode, cluster: "c"}))
	fromLearner, _ := appendMessage(nil, msg(pb.MsgAppResp, 3, 2, 1), 1<<10)
	f.Add(false, slices.Concat(learnerHi, fromLearner, appendFrame(nil, kindQuorum, []byte("{}"))))

	tr := New(Config{NodeID: 2, ClusterID: "c", Peers: map[int32]string{1: "unused"}, MaxMessageBytes: 1 << 10,
		Logger: slog.New(slog.DiscardHandler)})
	f.Fuzz(func(t *testing.T, withHello bool, data []byte) {
		tr.cfg.Deliver = func(_ context.Context, m *pb.Message) error {
			if m.GetTo() != RaftID(2) || m.GetFrom() != RaftID(1) && m.GetFrom() != RaftID(3) {
				t.Fatalf("delivered %v", m)
			}
			return nil
		}
		in := data
		if withHello {
			in = append(bytes.Clone(hi), data...)
		}
		err := tr.serve(struct {
			io.Reader
			io.Writer
		}{bytes.NewReader(in), io.Discard})
		if !errors.Is(err, errBadFrame) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("serve: %v", err)
		}
	})
}

// FuzzHello: what decodeHello accepts encodes back to the same bytes.
func FuzzHello(f *testing.F) {
	f.Add(appendHello(nil, hello{version: Version, from: 1, to: 2, cluster: "c"}))
	f.Add(appendHello(nil, hello{version: 0, from: -1, to: 1 << 30}))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, p []byte) {
		h, err := decodeHello(p)
		if err != nil {
			if !errors.Is(err, errBadFrame) {
				t.Fatalf("error not a bad frame: %v", err)
			}
			return
		}
		if re := appendHello(nil, h); !bytes.Equal(re, p) {
			t.Fatalf("round trip: %x != %x", re, p)
		}
	})
}

// FuzzVoters: decodeVoters refuses with a bad frame or returns voters that
// encode back to the same bytes.
func FuzzVoters(f *testing.F) {
	f.Add(appendVoters(nil, []voter{{1, "127.0.0.1:9093"}, {2, "h:1"}}))
	f.Add(appendVoters(nil, nil))
	f.Add([]byte{0, 1, 0, 0, 0, 1, 0, 200, 'x'})
	f.Fuzz(func(t *testing.T, p []byte) {
		vs, err := decodeVoters(p)
		if err != nil {
			if !errors.Is(err, errBadFrame) {
				t.Fatalf("error not a bad frame: %v", err)
			}
			return
		}
		if re := appendVoters(nil, vs); !bytes.Equal(re, p) {
			t.Fatalf("round trip: %x != %x", re, p)
		}
	})
}
