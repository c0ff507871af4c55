package server

import (
	"encoding/binary"
	"net"
)

// recordHeaderLen is a TLS record header: type, version, length.
const recordHeaderLen = 5

// tlsWire is the TCP connection under crypto/tls during a handshake. Its
// reads stop at TLS record boundaries, so crypto/tls never reads past the
// client's last handshake record: the client's first request, often sent
// right behind its Finished, stays in the socket for the kernel (kTLS) to
// decrypt. Its first write, the server's ServerHello, gives up the server
// random TLS 1.2's key schedule needs. Only the handshake goroutine uses
// it.
type tlsWire struct {
	net.Conn
	hdr  [recordHeaderLen]byte
	hdrN int // header bytes read of the next record
	rem  int // bytes of the current record's body still to read

	serverRandom []byte
	wrote        bool
}

// Read reads at most to the end of the current record (or its header).
func (w *tlsWire) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if w.rem == 0 {
		n, err := w.Conn.Read(p[:min(len(p), recordHeaderLen-w.hdrN)])
		copy(w.hdr[w.hdrN:], p[:n])
		w.hdrN += n
		if w.hdrN == recordHeaderLen {
			w.rem, w.hdrN = int(binary.BigEndian.Uint16(w.hdr[3:])), 0
		}
		return n, err
	}
	n, err := w.Conn.Read(p[:min(len(p), w.rem)])
	w.rem -= n
	return n, err
}

// Write notes the server random of the ServerHello, the first handshake
// record the server writes: record header (5), handshake type 2 and
// length (4), version (2), then the 32-byte random.
func (w *tlsWire) Write(p []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
		const at = recordHeaderLen + 4 + 2
		if len(p) >= at+32 && p[0] == 22 && p[recordHeaderLen] == 2 {
			w.serverRandom = append([]byte(nil), p[at:at+32]...)
		}
	}
	return w.Conn.Write(p)
}

// atBoundary reports whether every byte read so far belongs to whole
// records: nothing of the next record was taken from the socket.
func (w *tlsWire) atBoundary() bool { return w.hdrN == 0 && w.rem == 0 }
