package server

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// Kernel TLS (Documentation/networking/tls.rst): the TCP socket gets the
// "tls" upper layer protocol, then one crypto_info per direction with
// setsockopt(SOL_TLS, TLS_TX / TLS_RX). From then on write(2), writev(2)
// and sendfile(2) on the socket send plaintext that the kernel encrypts
// into records, and read(2) returns decrypted application data, so gnet
// and the response writer work unchanged and fetches stay zero-copy.
//
// A record that is not application data (an alert such as close_notify, a
// TLS 1.3 KeyUpdate or NewSessionTicket) makes read(2) fail with EIO when
// no control message buffer is given, as gnet's reads give none: gnet
// closes the connection on that error, which is what kzero wants for all
// of them (a peer's KeyUpdate cannot be followed without rekeying the
// kernel, which Linux only learned in 6.14, and Kafka's clients
// reconnect). onClose counts those closes (Stats.KernelTLSRecordCloses).
// The kernel's EIO comes before it consumes the record, on every kernel
// (6.14's rekeying too needs the record read with a control message
// first), so nothing decrypted with a stale key reaches the broker.
//
// None of this runs where the kernel lacks the tls module: `make
// test-ktls` (test/ktls) boots a Debian kernel that has it and runs the
// tests that check the crypto_info layouts, sendfile over kTLS and the
// KeyUpdate close against it.
//
// golang.org/x/sys/unix has SOL_TLS and TCP_ULP but not the rest of
// linux/tls.h; these are its values.
const (
	tlsTX = 1 // TLS_TX
	tlsRX = 2 // TLS_RX
)

// errSpoiled means the kernel took the receive side but refused the send
// side: the socket can neither go back to user-space TLS nor on, so the
// connection is closed.
var errSpoiled = errors.New("kernel TLS took receive but refused send")

// offload hands the connection's record keys to the kernel. An error
// before errSpoiled leaves the socket as plain TCP under crypto/tls, so
// the connection can go on in user space.
func offload(nc *net.TCPConn, k sessionKeys) error {
	rc, err := nc.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	err = rc.Control(func(fd uintptr) {
		s := int(fd)
		if err := unix.SetsockoptString(s, unix.SOL_TCP, unix.TCP_ULP, "tls"); err != nil {
			opErr = fmt.Errorf("setsockopt TCP_ULP tls: %w", err)
			return
		}
		// Receive first: kernels without TLS_RX (before 4.17), or without
		// it for this version or cipher, refuse here, while the socket is
		// still plain TCP for user-space TLS.
		if err := unix.SetsockoptString(s, unix.SOL_TLS, tlsRX, string(k.cryptoInfo(k.rx))); err != nil {
			opErr = fmt.Errorf("setsockopt TLS_RX: %w", err)
			return
		}
		if err := unix.SetsockoptString(s, unix.SOL_TLS, tlsTX, string(k.cryptoInfo(k.tx))); err != nil {
			opErr = fmt.Errorf("%w: setsockopt TLS_TX: %w", errSpoiled, err)
		}
	})
	if err != nil {
		return err
	}
	return opErr
}

// cryptoInfo is linux/tls.h's struct for one direction:
//
//	struct tls_crypto_info { u16 version; u16 cipher_type; }
//	aes_gcm_128: info, iv[8], key[16], salt[4], rec_seq[8]
//	aes_gcm_256: info, iv[8], key[32], salt[4], rec_seq[8]
//	chacha20_poly1305: info, iv[12], key[32], rec_seq[8]
//
// For AES-GCM the 12-byte nonce is salt+iv: in TLS 1.3 the traffic IV
// split 4+8; in TLS 1.2 the fixed IV and the first explicit nonce, which
// the kernel then increments per record (the sequence number, as
// crypto/tls uses).
func (k sessionKeys) cryptoInfo(d trafficKeys) []byte {
	b := make([]byte, 4, 56)
	binary.NativeEndian.PutUint16(b[0:], k.version)
	binary.NativeEndian.PutUint16(b[2:], k.suite.kernel)
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], d.seq)
	switch {
	case k.suite.kernel == kernelChaCha20:
		b = append(b, d.iv...)
		b = append(b, d.key...)
	case k.version == tls.VersionTLS13:
		b = append(b, d.iv[4:12]...)
		b = append(b, d.key...)
		b = append(b, d.iv[:4]...)
	default:
		b = append(b, seq[:]...)
		b = append(b, d.key...)
		b = append(b, d.iv[:4]...)
	}
	return append(b, seq[:]...)
}
