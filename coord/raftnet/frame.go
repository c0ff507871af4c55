package raftnet

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// doc.go has the byte layouts of frames and of the hello.

const (
	frameHeaderLen = 8 // length, crc

	kindHello   byte = 1
	kindMessage byte = 2
	kindRefuse  byte = 3
	kindQuorum  byte = 4
	kindVoters  byte = 5
	kindAuth    byte = 6

	magic = "kz-raft\n"
	// Version is the protocol version a hello carries; both ends must speak
	// the same one.
	Version = 1

	helloFixedLen   = len(magic) + 2 + 4 + 4 + 2
	maxClusterIDLen = 255
	maxRefuseLen    = 512
	// anyNode is the to of a learner's hello: it dials a controller by
	// address and learns its id from the answer.
	anyNode = -1
	// maxVoters bounds a voters frame: far more than a quorum has.
	maxVoters = 64
	// maxAddrLen bounds one voter's address in a voters frame.
	maxAddrLen = 255
	// maxVotersFrame is the largest voters frame body.
	maxVotersFrame = 1 + 2 + maxVoters*(4+2+maxAddrLen)
	// handshakeMaxFrame bounds frames before the hello is accepted: a
	// stranger cannot make us buffer more than this.
	handshakeMaxFrame = 1 + max(helloFixedLen+maxClusterIDLen, maxRefuseLen)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBadFrame marks input that breaks the protocol (as opposed to a
// connection that ends): it closes the connection and is counted.
var errBadFrame = errors.New("bad frame")

// errTooLarge marks a message whose frame would exceed the limit.
var errTooLarge = errors.New("message too large")

// beginFrame appends a frame header with room for length and crc, and the
// kind; finishFrame fills them in once the payload follows.
func beginFrame(b []byte, kind byte) ([]byte, int) {
	start := len(b)
	return append(b, 0, 0, 0, 0, 0, 0, 0, 0, kind), start
}

func finishFrame(b []byte, start int) {
	body := b[start+frameHeaderLen:]
	binary.BigEndian.PutUint32(b[start:], uint32(len(body)))
	binary.BigEndian.PutUint32(b[start+4:], crc32.Checksum(body, castagnoli))
}

// appendFrame appends one frame of kind and payload to b.
func appendFrame(b []byte, kind byte, payload []byte) []byte {
	b, start := beginFrame(b, kind)
	b = append(b, payload...)
	finishFrame(b, start)
	return b
}

// appendMessage appends m as one message frame. A message whose frame body
// would exceed maxBody bytes is refused with errTooLarge and b is returned
// unchanged.
func appendMessage(b []byte, m *pb.Message, maxBody int) ([]byte, error) {
	size := proto.Size(m)
	if 1+size > maxBody {
		return b, fmt.Errorf("%w: %d bytes, limit %d", errTooLarge, size, maxBody-1)
	}
	b = slices.Grow(b, frameHeaderLen+1+size)
	out, start := beginFrame(b, kindMessage)
	out, err := proto.MarshalOptions{}.MarshalAppend(out, m)
	if err != nil {
		return b, fmt.Errorf("marshal %s: %w", m.GetType(), err)
	}
	finishFrame(out, start)
	return out, nil
}

// frameReader reads frames from a connection, reusing one buffer: a
// payload is valid only until the next call.
type frameReader struct {
	r   *bufio.Reader
	hdr [frameHeaderLen]byte // here, not on the stack: io.ReadFull would move it to the heap
	buf []byte
	max int // largest accepted length (kind + payload)
}

// keepBuf is the largest buffer a frameReader keeps between frames: one
// snapshot must not pin its size for the connection's lifetime.
const keepBuf = 4 << 20

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// buffered is the number of bytes read from the connection and not yet
// returned as frames.
func (fr *frameReader) buffered() int { return fr.r.Buffered() }

// next returns the next frame. It returns io.EOF when the input ends
// between frames, io.ErrUnexpectedEOF (or the reader's error) when it ends
// inside one, and an error wrapping errBadFrame for a length out of bounds
// or a checksum mismatch.
func (fr *frameReader) next() (kind byte, payload []byte, err error) {
	if cap(fr.buf) > keepBuf {
		fr.buf = nil
	}
	hdr := fr.hdr[:]
	if _, err := io.ReadFull(fr.r, hdr); err != nil {
		return 0, nil, err
	}
	length := binary.BigEndian.Uint32(hdr[0:])
	if length == 0 || uint64(length) > uint64(fr.max) {
		return 0, nil, fmt.Errorf("%w: length %d, limit %d", errBadFrame, length, fr.max)
	}
	// Grow in steps so that a lying length costs what the peer sends, not
	// what it claims.
	fr.buf = fr.buf[:0]
	for remaining := int(length); remaining > 0; {
		chunk := min(remaining, 1<<20)
		fr.buf = slices.Grow(fr.buf, chunk)
		n, err := io.ReadFull(fr.r, fr.buf[len(fr.buf):len(fr.buf)+chunk])
		fr.buf = fr.buf[:len(fr.buf)+n]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, nil, err
		}
		remaining -= n
	}
	if crc32.Checksum(fr.buf, castagnoli) != binary.BigEndian.Uint32(hdr[4:]) {
		return 0, nil, fmt.Errorf("%w: checksum mismatch in a frame of %d bytes", errBadFrame, length)
	}
	return fr.buf[0], fr.buf[1:], nil
}

// hello opens a connection, sent by each end: who it is, whom it thinks it
// talks to, in which cluster, in which protocol version.
type hello struct {
	version uint16
	from    int32
	to      int32
	cluster string
}

func appendHello(b []byte, h hello) []byte {
	b = append(b, magic...)
	b = binary.BigEndian.AppendUint16(b, h.version)
	b = binary.BigEndian.AppendUint32(b, uint32(h.from))
	b = binary.BigEndian.AppendUint32(b, uint32(h.to))
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.cluster)))
	return append(b, h.cluster...)
}

// decodeHello reads a hello payload. It checks the layout only; the caller
// checks the values.
func decodeHello(p []byte) (hello, error) {
	if len(p) < helloFixedLen || string(p[:len(magic)]) != magic {
		return hello{}, fmt.Errorf("%w: not a kzero raft hello", errBadFrame)
	}
	p = p[len(magic):]
	h := hello{
		version: binary.BigEndian.Uint16(p[0:]),
		from:    int32(binary.BigEndian.Uint32(p[2:])),
		to:      int32(binary.BigEndian.Uint32(p[6:])),
	}
	n := int(binary.BigEndian.Uint16(p[10:]))
	p = p[12:]
	if n != len(p) || n > maxClusterIDLen {
		return hello{}, fmt.Errorf("%w: hello cluster id of %d bytes in %d", errBadFrame, n, len(p))
	}
	h.cluster = string(p)
	return h, nil
}

// check returns why a hello from the other end is unacceptable to us, or
// "" when it is fine. want is the hello we would send back.
func (h hello) check(want hello) string {
	switch {
	case h.version != want.version:
		return fmt.Sprintf("protocol version %d, this node speaks %d", h.version, want.version)
	case h.cluster != want.cluster && h.cluster != "" && want.cluster != "":
		// "" is a node new to a cluster, which learns the id from it.
		return fmt.Sprintf("cluster id %q, this node is in %q", h.cluster, want.cluster)
	case h.to != want.from:
		return fmt.Sprintf("addressed to node %d, this is node %d", h.to, want.from)
	case h.from != want.to:
		return fmt.Sprintf("from node %d, expected node %d", h.from, want.to)
	}
	return ""
}

// voter is one entry of a voters frame: a controller's node id and its
// controller listener.
type voter struct {
	id   int32
	addr string
}

// appendVoters appends a voters payload: a count, then each voter's id and
// address (doc.go has the layout). Voters beyond maxVoters, and addresses
// longer than maxAddrLen, are left out.
func appendVoters(b []byte, vs []voter) []byte {
	n := 0
	for _, v := range vs {
		if len(v.addr) <= maxAddrLen && n < maxVoters {
			n++
		}
	}
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	for _, v := range vs {
		if len(v.addr) > maxAddrLen || n == 0 {
			continue
		}
		n--
		b = binary.BigEndian.AppendUint32(b, uint32(v.id))
		b = binary.BigEndian.AppendUint16(b, uint16(len(v.addr)))
		b = append(b, v.addr...)
	}
	return b
}

// decodeVoters reads a voters payload; anything but exactly the layout is
// a bad frame.
func decodeVoters(p []byte) ([]voter, error) {
	if len(p) < 2 {
		return nil, fmt.Errorf("%w: voters frame of %d bytes", errBadFrame, len(p))
	}
	n := int(binary.BigEndian.Uint16(p))
	p = p[2:]
	if n > maxVoters {
		return nil, fmt.Errorf("%w: %d voters, at most %d", errBadFrame, n, maxVoters)
	}
	out := make([]voter, 0, n)
	for range n {
		if len(p) < 6 {
			return nil, fmt.Errorf("%w: voters frame cut short", errBadFrame)
		}
		id := int32(binary.BigEndian.Uint32(p))
		l := int(binary.BigEndian.Uint16(p[4:]))
		p = p[6:]
		if id < 0 || l == 0 || l > maxAddrLen || l > len(p) {
			return nil, fmt.Errorf("%w: voter %d with an address of %d bytes", errBadFrame, id, l)
		}
		out = append(out, voter{id: id, addr: string(p[:l])})
		p = p[l:]
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the voters", errBadFrame, len(p))
	}
	return out, nil
}
