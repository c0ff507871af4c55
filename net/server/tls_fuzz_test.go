package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// chunkConn is a net.Conn whose reads return the stream in pieces of the
// given sizes (cycled), as a socket may.
type chunkConn struct {
	net.Conn
	data   []byte
	sizes  []byte
	i      int
	writes bytes.Buffer
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(p)
	if len(c.sizes) > 0 {
		n = min(n, int(c.sizes[c.i%len(c.sizes)])+1)
		c.i++
	}
	n = copy(p, c.data[:min(n, len(c.data))])
	c.data = c.data[n:]
	return n, nil
}

func (c *chunkConn) Write(p []byte) (int, error) { return c.writes.Write(p) }

// FuzzTLSWire: whatever bytes arrive, in whatever pieces, tlsWire passes
// them on unchanged, never returns bytes of two records from one read,
// and is at a boundary exactly when the bytes read end a record. Writes
// pass through, and a server random is taken only from a ServerHello.
func FuzzTLSWire(f *testing.F) {
	rec := func(typ byte, body string) []byte {
		b := []byte{typ, 3, 3, 0, 0}
		binary.BigEndian.PutUint16(b[3:], uint16(len(body)))
		return append(b, body...)
	}
	f.Add(append(rec(22, "client hello"), rec(23, "data")...), []byte{0, 3, 200})
	f.Add(rec(21, ""), []byte{})
	f.Add([]byte{22, 3, 3, 255, 255, 1}, []byte{1})
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		c := &chunkConn{data: data, sizes: sizes}
		w := &tlsWire{Conn: c}
		var got []byte
		buf := make([]byte, 300)
		// A reference parse of the record layout: offset of each record end.
		ends := map[int]bool{}
		for at := 0; at+recordHeaderLen <= len(data); {
			at += recordHeaderLen + int(binary.BigEndian.Uint16(data[at+3:]))
			ends[at] = true
		}
		for {
			n, err := w.Read(buf)
			start := len(got)
			got = append(got, buf[:n]...)
			for i := start + 1; i < len(got); i++ {
				if ends[i] && i > start {
					t.Fatalf("a read of [%d,%d) crosses the record end at %d", start, len(got), i)
				}
			}
			if n > 0 && w.atBoundary() != ends[len(got)] {
				t.Fatalf("at %d: atBoundary %v, reference %v", len(got), w.atBoundary(), ends[len(got)])
			}
			if err != nil {
				break
			}
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("read %d bytes, sent %d", len(got), len(data))
		}
		if _, err := w.Write(data); err != nil || !bytes.Equal(c.writes.Bytes(), data) {
			t.Fatal("write changed the bytes")
		}
		if w.serverRandom != nil && (len(data) < 43 || data[0] != 22 || data[5] != 2 || !bytes.Equal(w.serverRandom, data[11:43])) {
			t.Fatalf("server random taken from a record that is not a ServerHello")
		}
	})
}

// FuzzParsePEM: keystore and truststore text (from a file or a property)
// never panics the PEM reader, and what it reads round-trips.
func FuzzParsePEM(f *testing.F) {
	f.Add("-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----\n")
	f.Add("-----BEGIN PRIVATE KEY----- AA EC -----END PRIVATE KEY-----")
	f.Add("-----BEGIN X-----Proc-Type: 4\n-----END X-----")
	f.Fuzz(func(t *testing.T, s string) {
		blocks, err := parsePEM(s)
		if err != nil {
			return
		}
		var b bytes.Buffer
		for _, blk := range blocks {
			writePEM(&b, blk)
		}
		again, err := parsePEM(b.String())
		if err != nil || len(again) != len(blocks) {
			t.Fatalf("re-read: %d blocks, %v", len(again), err)
		}
		for i := range again {
			if again[i].typ != blocks[i].typ || !bytes.Equal(again[i].der, blocks[i].der) {
				t.Fatalf("block %d changed", i)
			}
		}
	})
}
