package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawClientID names the raw load generator's connections to the broker.
const rawClientID = "kzctl-bench-raw"

// maxRawResponse bounds a response frame the raw client will read: a
// broker that claims more is broken, and the client must not allocate it.
const maxRawResponse = 256 << 20

// rawConn is one TCP connection speaking the Kafka protocol with frames
// the raw load generator encodes itself: a request is written as it
// stands, and a response is read whole into a buffer that is reused.
type rawConn struct {
	c    net.Conn
	buf  []byte // the last response frame read, without its size
	size [4]byte
	corr int32 // correlation id of the next setup request
}

func dialRaw(addr string) (*rawConn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &rawConn{c: c}, nil
}

func (c *rawConn) Close() error { return c.c.Close() }

// readFrame reads one response frame into the reused buffer and returns
// it, without its size prefix.
func (c *rawConn) readFrame() ([]byte, error) {
	if _, err := io.ReadFull(c.c, c.size[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(c.size[:])))
	if n < 4 || n > maxRawResponse {
		return nil, fmt.Errorf("response frame of %d bytes", n)
	}
	if cap(c.buf) < n {
		c.buf = make([]byte, n, n+n/4)
	}
	c.buf = c.buf[:n]
	if _, err := io.ReadFull(c.c, c.buf); err != nil {
		return nil, err
	}
	return c.buf, nil
}

// roundTrip sends req and reads its response into resp, with kmsg: for
// the setup requests (ApiVersions, InitProducerID), not the load.
func (c *rawConn) roundTrip(req kmsg.Request, resp kmsg.Response) error {
	c.corr++
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID(rawClientID)).AppendRequest(nil, req, c.corr)
	if _, err := c.c.Write(frame); err != nil {
		return err
	}
	b, err := c.readFrame()
	if err != nil {
		return err
	}
	d := wireDec{b: b}
	if corr := d.int32(); corr != c.corr {
		return fmt.Errorf("correlation id %d, want %d", corr, c.corr)
	}
	// ApiVersions answers with the first header version whatever its own
	// version (KIP-511).
	if req.IsFlexible() && req.Key() != 18 {
		d.tags()
	}
	if d.err != nil {
		return d.err
	}
	resp.SetVersion(req.GetVersion())
	return resp.ReadFrom(d.b)
}

// versions asks the broker which versions of each API it serves
// (ApiVersions v0, which every broker answers).
func (c *rawConn) versions() (map[int16][2]int16, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	resp := kmsg.NewPtrApiVersionsResponse()
	if err := c.roundTrip(req, resp); err != nil {
		return nil, fmt.Errorf("ApiVersions: %w", err)
	}
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("ApiVersions: error code %d", resp.ErrorCode)
	}
	out := map[int16][2]int16{}
	for _, k := range resp.ApiKeys {
		out[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	return out, nil
}

// pickVersion returns the highest version of key within [lo, hi] that the
// broker serves.
func pickVersion(served map[int16][2]int16, key, lo, hi int16, name string) (int16, error) {
	r, ok := served[key]
	if !ok {
		return 0, fmt.Errorf("the broker does not serve %s", name)
	}
	v := min(hi, r[1])
	if v < lo || v < r[0] {
		return 0, fmt.Errorf("the broker serves %s v%d–v%d; the raw client needs v%d–v%d", name, r[0], r[1], lo, hi)
	}
	return v, nil
}

// errShort is a response that ends before its fields do.
var errShort = errors.New("response truncated")

// wireDec reads the big-endian and varint fields of a response without
// allocating; the first error sticks and every later read returns zero.
type wireDec struct {
	b   []byte
	err error
}

func (d *wireDec) take(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		if d.err == nil {
			d.err = errShort
		}
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *wireDec) int16() int16 {
	if v := d.take(2); v != nil {
		return int16(binary.BigEndian.Uint16(v))
	}
	return 0
}

func (d *wireDec) int32() int32 {
	if v := d.take(4); v != nil {
		return int32(binary.BigEndian.Uint32(v))
	}
	return 0
}

func (d *wireDec) int64() int64 {
	if v := d.take(8); v != nil {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

func (d *wireDec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

// compactLen reads a compact array's or string's length (stored plus
// one); -1 is null.
func (d *wireDec) compactLen() int {
	n := d.uvarint()
	if n > uint64(len(d.b))+1 {
		if d.err == nil {
			d.err = errShort
		}
		return 0
	}
	return int(n) - 1
}

// compactBytes reads a compact (nullable) string or bytes field.
func (d *wireDec) compactBytes() []byte {
	n := d.compactLen()
	if n < 0 {
		return nil
	}
	return d.take(n)
}

// tags skips a tagged-field section.
func (d *wireDec) tags() {
	for n := d.uvarint(); n > 0 && d.err == nil; n-- {
		d.uvarint() // tag
		d.take(int(min(d.uvarint(), uint64(len(d.b))+1)))
	}
}

// varint reads a zig-zag varint, as record fields are written.
func (d *wireDec) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}
