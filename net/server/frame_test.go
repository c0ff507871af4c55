package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"kzero/net/wire"
)

// memInbound is a connection's read side in memory: data[:avail] has
// arrived, data[pos:avail] is buffered.
type memInbound struct {
	data       []byte
	pos, avail int
}

func (m *memInbound) InboundBuffered() int { return m.avail - m.pos }

func (m *memInbound) Peek(n int) ([]byte, error) {
	if n > m.avail-m.pos {
		return nil, io.ErrShortBuffer
	}
	return m.data[m.pos : m.pos+n], nil
}

func (m *memInbound) Discard(n int) (int, error) {
	n = min(n, m.avail-m.pos)
	m.pos += n
	return n, nil
}

func (m *memInbound) Fd() int { return -1 }

func (m *memInbound) Read(p []byte) (int, error) {
	n := copy(p, m.data[m.pos:m.avail])
	m.pos += n
	return n, nil
}

// splitFrames is the reference: the frames of a whole stream, and whether
// the stream ended with a bad size.
func splitFrames(b []byte, max int) (frames [][]byte, bad bool) {
	for len(b) >= wire.SizeLen {
		size, err := wire.FrameSize(b, max)
		if err != nil {
			return frames, true
		}
		if len(b) < wire.SizeLen+size {
			return frames, false
		}
		frames = append(frames, b[wire.SizeLen:wire.SizeLen+size])
		b = b[wire.SizeLen+size:]
	}
	return frames, false
}

// FuzzFrameReader feeds a byte stream in arbitrary pieces: the frames cut
// must be the stream's frames whatever the pieces, and a bad size must
// stop the stream exactly where the reference stops.
func FuzzFrameReader(f *testing.F) {
	fm := kmsg.NewRequestFormatter(kmsg.FormatterClientID("fuzz"))
	seed := fm.AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), 1)
	f.Add(append(append([]byte{}, seed...), seed...), []byte{1, 3, 200})
	f.Add(produceStream(3), []byte{0, 0, 0, 255, 17})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 9, 0xff, 0xff, 0xff, 0xff}, []byte{2})
	f.Add([]byte{0, 0, 1, 0}, []byte{})
	f.Fuzz(func(t *testing.T, stream, pieces []byte) {
		const max = 64
		want, wantBad := splitFrames(stream, max)
		in := &memInbound{data: stream}
		r := frameReader{max: max}
		defer r.release()
		var got [][]byte
		bad := false
		for i := 0; in.avail < len(stream) && !bad; i++ {
			step := len(stream)
			if i < len(pieces) {
				step = int(pieces[i]) + 1
			}
			in.avail = min(len(stream), in.avail+step)
			for {
				frame, _, err := r.next(in)
				if err != nil {
					if !errors.Is(err, wire.ErrFrameTooLarge) && !errors.Is(err, wire.ErrNegativeSize) {
						t.Fatalf("unexpected error %v", err)
					}
					bad = true
					break
				}
				if frame == nil {
					break
				}
				got = append(got, bytes.Clone(frame.B))
				framePool.Put(frame)
			}
		}
		if bad != wantBad || len(got) != len(want) {
			t.Fatalf("got %d frames (bad %v), want %d (bad %v)", len(got), bad, len(want), wantBad)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("frame %d: %x, want %x", i, got[i], want[i])
			}
		}
	})
}

// produceStream is n pipelined Produce v11 request frames.
func produceStream(n int) []byte {
	fm := kmsg.NewRequestFormatter(kmsg.FormatterClientID("producer-1"))
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(11)
	req.Acks, req.TimeoutMillis = -1, 30000
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = "events"
	part := kmsg.NewProduceRequestTopicPartition()
	part.Records = bytes.Repeat([]byte{7}, 512)
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)
	var b []byte
	for i := range n {
		// AppendRequest writes the size at dst[0:4]: give it a fresh slice.
		b = append(b, fm.AppendRequest(nil, req, int32(i))...)
	}
	return b
}

// decodeOne cuts, decodes and recycles one request: the loop's work per
// request up to the handoff.
func decodeOne(tb testing.TB, r *frameReader, in *memInbound) {
	frame, _, err := r.next(in)
	if err != nil || frame == nil {
		tb.Fatalf("frame %v %v", frame, err)
	}
	h, body, err := wire.ParseRequestHeader(frame.B)
	if err != nil {
		tb.Fatal(err)
	}
	newRequest(nil, h, body, frame, 0).free()
}

// TestFrameDecodeAllocs: cutting a frame out of the stream, decoding its
// header and making its Request allocate nothing in steady state.
func TestFrameDecodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	const n = 2000
	stream := produceStream(n)
	in := &memInbound{data: stream, avail: len(stream)}
	r := frameReader{max: wire.DefaultMaxRequestBytes}
	for range 100 { // warm the pools
		decodeOne(t, &r, in)
	}
	allocs := testing.AllocsPerRun(n-200, func() { decodeOne(t, &r, in) })
	if allocs != 0 {
		t.Fatalf("%v allocations per request", allocs)
	}
}

func BenchmarkFrameDecode(b *testing.B) {
	const n = 4096
	stream := produceStream(n)
	in := &memInbound{data: stream, avail: len(stream)}
	r := frameReader{max: wire.DefaultMaxRequestBytes}
	b.SetBytes(int64(len(stream) / n))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == n {
			in.pos, i = 0, 0
		}
		decodeOne(b, &r, in)
		i++
	}
}

// TestFrameReaderStraddles: a frame arriving a byte at a time is cut once
// whole, and the size prefix split across reads is handled.
func TestFrameReaderStraddles(t *testing.T) {
	stream := produceStream(3)
	want, _ := splitFrames(stream, wire.DefaultMaxRequestBytes)
	in := &memInbound{data: stream}
	r := frameReader{max: wire.DefaultMaxRequestBytes}
	var got int
	for in.avail < len(stream) {
		in.avail++
		frame, _, err := r.next(in)
		if err != nil {
			t.Fatal(err)
		}
		if frame != nil {
			if !bytes.Equal(frame.B, want[got]) {
				t.Fatalf("frame %d differs", got)
			}
			got++
			framePool.Put(frame)
		}
	}
	if got != 3 {
		t.Fatalf("%d frames", got)
	}
	if binary.BigEndian.Uint32(stream) == 0 {
		t.Fatal("empty stream")
	}
}

// TestLargeFramesReadDirect sends frames larger than gnet's read buffer,
// in pieces with pauses, several per write: the part of each frame read
// straight from the socket must join the part gnet buffered, in order.
func TestLargeFramesReadDirect(t *testing.T) {
	s := start(t, Config{Inline: func(int16, int16) bool { return true }}, echo)
	c := dial(t, s)
	var stream []byte
	var bodies [][]byte
	for i := range 6 {
		body := bytes.Repeat([]byte{byte('a' + i)}, 300<<10+i*7919)
		binary.BigEndian.PutUint32(body, uint32(i))
		bodies = append(bodies, body)
		stream = append(stream, echoFrame(int32(i), body)...)
	}
	go func() {
		for len(stream) > 0 {
			n := min(len(stream), 50_000+len(stream)%70_000)
			c.write(stream[:n])
			stream = stream[n:]
			time.Sleep(time.Millisecond) // pacing: the pieces arrive apart, each read finds part of a frame
		}
	}()
	for i, want := range bodies {
		corr, body := c.mustRead()
		if corr != int32(i) || !bytes.Equal(body, want) {
			t.Fatalf("response %d: correlation %d, %d bytes (want %d)", i, corr, len(body), len(want))
		}
	}
}

// fdInbound is memInbound whose socket is real: the rest of a frame waits
// there, as it does behind gnet's buffer.
type fdInbound struct {
	memInbound
	fd int
}

func (f *fdInbound) Fd() int { return f.fd }

// TestLargeFrameAllocs: a large frame, its start in gnet's buffer and the
// rest in the socket, gets a buffer of its full size at once (FIONREAD
// says it has arrived), is read straight from the socket into it, is
// never copied again, and allocates nothing in steady state.
func TestLargeFrameAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	const size, head = 96 << 10, 16 << 10
	stream := echoFrame(1, bytes.Repeat([]byte{9}, size))
	in := &fdInbound{memInbound: memInbound{data: stream[:head], avail: head}, fd: fds[0]}
	r := frameReader{max: wire.DefaultMaxRequestBytes}
	one := func() {
		in.pos = 0
		if n, err := unix.Write(fds[1], stream[head:]); err != nil || n != len(stream)-head {
			t.Fatalf("write %d: %v", n, err)
		}
		frame, _, err := r.next(in)
		if err != nil || frame == nil || len(frame.B) != len(stream)-4 {
			t.Fatalf("frame %v %v", frame, err)
		}
		framePool.Put(frame)
	}
	for range 10 {
		one()
	}
	if allocs := testing.AllocsPerRun(200, one); allocs != 0 {
		t.Fatalf("%v allocations per large frame", allocs)
	}
	if r.grown != 0 {
		t.Fatalf("%d bytes copied into larger buffers", r.grown)
	}
}

// countingMemory is a frameMemory that grants everything and counts.
type countingMemory struct{ reserved, released int }

func (m *countingMemory) reserve(partial, n int) bool { m.reserved += n; return true }
func (m *countingMemory) release(n int)               { m.released += n }

// TestFrameReaderGrowsAsBytesArrive: a frame declaring 1 MiB that arrives
// 10 KiB at a time holds a buffer of at most four times what arrived (and
// at least smallFrame), is cut whole and intact, and what it reserved is
// what it holds.
func TestFrameReaderGrowsAsBytesArrive(t *testing.T) {
	body := make([]byte, 1<<20)
	for i := range body {
		body[i] = byte(i * 7)
	}
	stream := echoFrame(1, body)
	in := &memInbound{data: stream}
	mem := &countingMemory{}
	r := frameReader{max: wire.DefaultMaxRequestBytes, mem: mem}
	var frame []byte
	for in.avail < len(stream) {
		in.avail = min(len(stream), in.avail+10<<10)
		f, held, err := r.next(in)
		if err != nil {
			t.Fatal(err)
		}
		if f != nil {
			frame = bytes.Clone(f.B)
			if held != mem.reserved {
				t.Fatalf("frame holds %d, reserved %d", held, mem.reserved)
			}
			framePool.Put(f)
			break
		}
		if limit := max(4*in.avail, smallFrame); r.held > limit {
			t.Fatalf("%d bytes arrived, buffer of %d", in.avail, r.held)
		}
	}
	if !bytes.Equal(frame, stream[4:]) {
		t.Fatalf("frame of %d bytes differs from the %d sent", len(frame), len(stream)-4)
	}
	// Copies into larger buffers: less than the frame (each buffer at
	// least doubles).
	if r.grown >= int64(len(body)) {
		t.Fatalf("%d bytes copied growing a %d-byte frame", r.grown, len(body))
	}
}

// A partial frame dropped with its connection returns what it reserved.
func TestFrameReaderReleasesPartial(t *testing.T) {
	stream := echoFrame(1, make([]byte, 1<<20))
	in := &memInbound{data: stream, avail: 200 << 10}
	mem := &countingMemory{}
	r := frameReader{max: wire.DefaultMaxRequestBytes, mem: mem}
	if f, _, err := r.next(in); f != nil || err != nil {
		t.Fatalf("partial frame: %v %v", f, err)
	}
	r.release()
	if mem.reserved == 0 || mem.released != mem.reserved {
		t.Fatalf("reserved %d, released %d", mem.reserved, mem.released)
	}
}

// TestFrameReaderTrustsProvenSize: once a connection has sent a 1 MiB
// frame whole, its next frame of up to that size gets its full buffer at
// the first bytes and is never copied into a larger one, however it
// trickles in; a larger frame is sized by what has arrived again.
func TestFrameReaderTrustsProvenSize(t *testing.T) {
	mem := &countingMemory{}
	r := frameReader{max: wire.DefaultMaxRequestBytes, mem: mem}
	// trickle feeds a frame of size bytes 10 KiB at a time and returns the
	// buffer it held after the first 10 KiB and whether it ever held more
	// than four times what had arrived (and more than smallFrame).
	trickle := func(size int) (first int, over bool) {
		t.Helper()
		stream := echoFrame(1, bytes.Repeat([]byte{5}, size))
		in := &memInbound{data: stream}
		for in.avail < len(stream) {
			in.avail = min(len(stream), in.avail+10<<10)
			f, _, err := r.next(in)
			if err != nil {
				t.Fatal(err)
			}
			if f != nil {
				if !bytes.Equal(f.B, stream[4:]) {
					t.Fatalf("frame of %d bytes differs from the %d sent", len(f.B), size)
				}
				framePool.Put(f)
				return first, over
			}
			if first == 0 {
				first = r.held
			}
			over = over || r.held > max(4*in.avail, smallFrame)
		}
		t.Fatalf("the %d-byte frame never came out whole", size)
		return 0, false
	}
	if _, over := trickle(1 << 20); over || r.grown == 0 {
		t.Fatalf("the first frame, trickling in, was not sized by what had arrived (over %v, %d bytes copied growing)", over, r.grown)
	}
	grown := r.grown
	if first, _ := trickle(1 << 20); first < 1<<20 || r.grown != grown {
		t.Fatalf("a frame of the proven size held %d bytes at first and copied %d bytes growing", first, r.grown-grown)
	}
	if _, over := trickle(2 << 20); over || r.grown == grown {
		t.Fatalf("a frame past the proven size was not sized by what had arrived (over %v, %d bytes copied growing)", over, r.grown-grown)
	}
}
