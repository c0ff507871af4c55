package server

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

// TestKernelKeys checks the keys, IVs and sequence numbers handed to the
// kernel without the kernel (this test machine's has no TLS ULP): a real
// crypto/tls client talks to a server whose handshake ran as secure runs
// it; then the test protects records in user space exactly as kTLS would
// with the derived crypto_info (AES-GCM with salt and explicit nonce for
// TLS 1.2, the XORed IV for TLS 1.3 and ChaCha20-Poly1305) and the client
// must accept them, and the client's records, the first sent right behind
// its Finished, must open. Any wrong byte of a key, IV, random or sequence
// number fails the AEAD.
func TestKernelKeys(t *testing.T) {
	pki := newTestPKI(t)
	ecCert, ecKey := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	rsaCert, rsaKey := pki.issue(pkix.Name{CommonName: "server"}, true, true)
	cases := []struct {
		version uint16
		suite   uint16
		rsa     bool
	}{
		{tls.VersionTLS13, 0, false},
		{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, false},
		{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, false},
		{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, false},
		{tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, true},
		{tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, true},
		{tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, true},
	}
	for _, tc := range cases {
		name := tls.VersionName(tc.version) + "/" + tls.CipherSuiteName(tc.suite)
		t.Run(name, func(t *testing.T) {
			certPEM, keyPEM := ecCert, ecKey
			if tc.rsa {
				certPEM, keyPEM = rsaCert, rsaKey
			}
			srv, err := NewTLS(TLSSettings{KeystoreChain: certPEM, KeystoreKey: keyPEM})
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			type result struct {
				nc   *net.TCPConn
				keys sessionKeys
				err  error
			}
			done := make(chan result, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					done <- result{err: err}
					return
				}
				nc := c.(*net.TCPConn)
				w := &tlsWire{Conn: nc}
				var kl keyLog
				cfg := srv.Config().Clone()
				cfg.KeyLogWriter = &kl
				s := tls.Server(w, cfg)
				if err := s.Handshake(); err != nil {
					done <- result{err: err}
					return
				}
				if !w.atBoundary() {
					done <- result{err: fmt.Errorf("handshake read past a record")}
					return
				}
				k, err := deriveKeys(s.ConnectionState(), &kl, w.serverRandom)
				done <- result{nc: nc, keys: k, err: err}
			}()
			ccfg := pki.clientConfig("", "")
			ccfg.MinVersion, ccfg.MaxVersion = tc.version, tc.version
			if tc.suite != 0 {
				ccfg.CipherSuites = []uint16{tc.suite}
			}
			cl, err := tls.Dial("tcp", ln.Addr().String(), ccfg)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			// Right behind the Finished, as a Kafka client's ApiVersions.
			if _, err := cl.Write([]byte("first request")); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			defer r.nc.Close()
			if tc.suite != 0 && cl.ConnectionState().CipherSuite != tc.suite {
				t.Fatalf("negotiated %s", tls.CipherSuiteName(cl.ConnectionState().CipherSuite))
			}
			k := r.keys
			for i, want := range []string{"first request", "second request"} {
				if i > 0 {
					if _, err := cl.Write([]byte(want)); err != nil {
						t.Fatal(err)
					}
				}
				got, err := openRecord(r.nc, k, &k.rx)
				if err != nil {
					t.Fatalf("record %d from the client: %v", i, err)
				}
				if string(got) != want {
					t.Fatalf("record %d from the client: %q, want %q", i, got, want)
				}
			}
			for i, msg := range []string{"first answer", "second answer"} {
				if _, err := r.nc.Write(sealRecord(k, &k.tx, []byte(msg))); err != nil {
					t.Fatal(err)
				}
				buf := make([]byte, len(msg))
				if _, err := io.ReadFull(cl, buf); err != nil {
					t.Fatalf("answer %d: the client refused the record: %v", i, err)
				}
				if string(buf) != msg {
					t.Fatalf("answer %d: %q", i, buf)
				}
			}
			info := k.cryptoInfo(k.tx)
			if want := map[uint16]int{kernelAESGCM128: 40, kernelAESGCM256: 56, kernelChaCha20: 56}[k.suite.kernel]; len(info) != want {
				t.Fatalf("crypto_info of %d bytes, want %d", len(info), want)
			}
		})
	}
}

// recordAEAD is the record protection kTLS would apply for k.
func recordAEAD(t *sessionKeys, d *trafficKeys) (cipher.AEAD, error) {
	if t.suite.kernel == kernelChaCha20 {
		return chacha20poly1305.New(d.key)
	}
	b, err := aes.NewCipher(d.key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// nonce is the record's nonce and, for TLS 1.2 AES-GCM, its explicit
// part.
func nonce(k *sessionKeys, d *trafficKeys) (n, explicit []byte) {
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], d.seq)
	if k.version == tls.VersionTLS12 && k.suite.kernel != kernelChaCha20 {
		return append(append([]byte(nil), d.iv[:4]...), seq[:]...), seq[:]
	}
	n = append([]byte(nil), d.iv...)
	for i := range 8 {
		n[4+i] ^= seq[i]
	}
	return n, nil
}

// sealRecord protects one application data record as kTLS would.
func sealRecord(k sessionKeys, d *trafficKeys, msg []byte) []byte {
	a, err := recordAEAD(&k, d)
	if err != nil {
		panic(err)
	}
	n, explicit := nonce(&k, d)
	defer func() { d.seq++ }()
	if k.version == tls.VersionTLS13 {
		inner := append(append([]byte(nil), msg...), 23)
		hdr := []byte{23, 3, 3, 0, 0}
		binary.BigEndian.PutUint16(hdr[3:], uint16(len(inner)+a.Overhead()))
		return a.Seal(hdr, n, inner, hdr)
	}
	aad := binary.BigEndian.AppendUint64(nil, d.seq)
	aad = append(aad, 23, 3, 3, byte(len(msg)>>8), byte(len(msg)))
	hdr := []byte{23, 3, 3, 0, 0}
	binary.BigEndian.PutUint16(hdr[3:], uint16(len(explicit)+len(msg)+a.Overhead()))
	return a.Seal(append(hdr, explicit...), n, msg, aad)
}

// openRecord reads one record from the raw socket and opens it as kTLS
// would.
func openRecord(r io.Reader, k sessionKeys, d *trafficKeys) ([]byte, error) {
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	a, err := recordAEAD(&k, d)
	if err != nil {
		return nil, err
	}
	n, explicit := nonce(&k, d)
	defer func() { d.seq++ }()
	if k.version == tls.VersionTLS13 {
		pt, err := a.Open(nil, n, body, hdr)
		if err != nil {
			return nil, fmt.Errorf("open (seq %d): %w", d.seq, err)
		}
		pt = bytes.TrimRight(pt, "\x00")
		if len(pt) == 0 || pt[len(pt)-1] != 23 {
			return nil, fmt.Errorf("inner type is not application data")
		}
		return pt[:len(pt)-1], nil
	}
	if explicit != nil {
		n = append(n[:4], body[:8]...)
		body = body[8:]
	}
	plen := len(body) - a.Overhead()
	aad := binary.BigEndian.AppendUint64(nil, d.seq)
	aad = append(aad, hdr[0], 3, 3, byte(plen>>8), byte(plen))
	pt, err := a.Open(nil, n, body, aad)
	if err != nil {
		return nil, fmt.Errorf("open (seq %d): %w", d.seq, err)
	}
	return pt, nil
}

// TestExpandLabel checks HKDF-Expand-Label against RFC 8448 section 3
// (the server's handshake traffic key and IV).
func TestExpandLabel(t *testing.T) {
	secret, _ := hex.DecodeString("b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38")
	k, err := tls13Keys(offloadable[tls.TLS_AES_128_GCM_SHA256], secret)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(k.key); got != "3fce516009c21727d0f2e4e86ee403bc" {
		t.Fatalf("key %s", got)
	}
	if got := hex.EncodeToString(k.iv); got != "5d313eb2671276ee13000b30" {
		t.Fatalf("iv %s", got)
	}
}
