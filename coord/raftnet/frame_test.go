package raftnet

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func msg(typ pb.MessageType, from, to int32, index uint64) *pb.Message {
	return &pb.Message{Type: typ.Enum(), From: new(RaftID(from)), To: new(RaftID(to)), Term: new(uint64(1)), Index: new(index)}
}

func TestFrameRoundTrip(t *testing.T) {
	m := msg(pb.MsgApp, 1, 2, 7)
	m.Entries = []*pb.Entry{{Term: new(uint64(1)), Index: new(uint64(8)), Data: []byte("payload")}}
	var b []byte
	b = appendFrame(b, kindHello, appendHello(nil, hello{version: Version, from: 1, to: 2, cluster: "c1"}))
	b, err := appendMessage(b, m, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	fr := newFrameReader(bytes.NewReader(b), 1<<20)
	kind, payload, err := fr.next()
	if err != nil || kind != kindHello {
		t.Fatalf("hello frame: kind %d, %v", kind, err)
	}
	h, err := decodeHello(payload)
	if err != nil || h != (hello{version: Version, from: 1, to: 2, cluster: "c1"}) {
		t.Fatalf("hello: %+v, %v", h, err)
	}
	kind, payload, err = fr.next()
	if err != nil || kind != kindMessage {
		t.Fatalf("message frame: kind %d, %v", kind, err)
	}
	var got pb.Message
	if err := proto.Unmarshal(payload, &got); err != nil || !proto.Equal(&got, m) {
		t.Fatalf("message: %v, %v", &got, err)
	}
	if _, _, err := fr.next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

func TestFrameReaderRejects(t *testing.T) {
	good := appendFrame(nil, kindMessage, []byte("0123456789"))
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-1] ^= 1
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"zero length", []byte{0, 0, 0, 0, 0, 0, 0, 0}, errBadFrame},
		{"over the limit", []byte{0, 0, 0, 12, 0, 0, 0, 0}, errBadFrame},
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, errBadFrame},
		{"bad crc", badCRC, errBadFrame},
		{"cut header", good[:5], io.ErrUnexpectedEOF},
		{"cut payload", good[:len(good)-1], io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := newFrameReader(bytes.NewReader(tt.in), 11).next()
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestAppendMessageTooLarge(t *testing.T) {
	m := msg(pb.MsgSnap, 1, 2, 0)
	m.Snapshot = &pb.Snapshot{Data: make([]byte, 100)}
	b, err := appendMessage([]byte("x"), m, 50)
	if !errors.Is(err, errTooLarge) || string(b) != "x" {
		t.Fatalf("got %q, %v", b, err)
	}
}

func TestHelloCheck(t *testing.T) {
	want := hello{version: Version, from: 2, to: 1, cluster: "c"}
	for _, h := range []hello{
		{version: 2, from: 1, to: 2, cluster: "c"},
		{version: Version, from: 1, to: 2, cluster: "d"},
		{version: Version, from: 1, to: 3, cluster: "c"},
		{version: Version, from: 3, to: 2, cluster: "c"},
	} {
		if h.check(want) == "" {
			t.Errorf("%+v accepted", h)
		}
	}
	if r := (hello{version: Version, from: 1, to: 2, cluster: "c"}).check(want); r != "" {
		t.Errorf("refused: %s", r)
	}
}

// The steady-state encode and decode of a frame allocate nothing (decoding
// the protobuf into a Message, which Deliver keeps, does).
func TestFrameAllocs(t *testing.T) {
	m := msg(pb.MsgApp, 1, 2, 7)
	m.Entries = []*pb.Entry{{Term: new(uint64(1)), Index: new(uint64(8)), Data: make([]byte, 300)}}
	var buf []byte
	var err error
	if buf, err = appendMessage(buf, m, 1<<20); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		buf, err = appendMessage(buf[:0], m, 1<<20)
	}); n != 0 || err != nil {
		t.Errorf("appendMessage: %v allocs, %v", n, err)
	}
	r := bytes.NewReader(buf)
	fr := newFrameReader(r, 1<<20)
	if _, _, err := fr.next(); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		r.Reset(buf)
		_, _, err = fr.next()
	}); n != 0 || err != nil {
		t.Errorf("frameReader.next: %v allocs, %v", n, err)
	}
}

// A writer's batch goes out without allocating once its buffer has grown.
func TestWriteAllocs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(io.Discard, c)
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	tr := New(Config{NodeID: 1})
	p := newPeer(tr, 2, ln.Addr().String())
	batch := make([]outbound, 16)
	for i := range batch {
		batch[i].m = msg(pb.MsgApp, 1, 2, uint64(i))
		batch[i].m.Entries = []*pb.Entry{{Index: new(uint64(i)), Data: make([]byte, 200)}}
	}
	buf, err := p.write(conn, batch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		buf, err = p.write(conn, batch, buf)
	}); n != 0 || err != nil {
		t.Errorf("write: %v allocs, %v", n, err)
	}
	conn.Close()
	<-drained
	// One warm-up write, AllocsPerRun's own warm-up, 100 runs.
	if s := tr.Stats(); s.Sent != 102*16 {
		t.Errorf("sent %d", s.Sent)
	}
}
