package server

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/sys/unix"
)

// These tests drive the kernel TLS path for real. They need a kernel with
// the TLS upper layer protocol (CONFIG_TLS, the tls module loaded): `make
// test-ktls` boots one in qemu (test/ktls/run.sh) and sets
// KZERO_KTLS_REQUIRED=1, which turns the skip on other kernels into a
// failure.

// needKernelTLS skips (or, with KZERO_KTLS_REQUIRED=1, fails) unless a
// loopback TCP socket takes the "tls" ULP.
func needKernelTLS(t testing.TB) {
	t.Helper()
	srv, cli := tcpPair(t)
	defer srv.Close()
	defer cli.Close()
	rc, err := srv.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) {
		opErr = unix.SetsockoptString(int(fd), unix.SOL_TCP, unix.TCP_ULP, "tls")
	}); err != nil {
		t.Fatal(err)
	}
	if opErr == nil {
		return
	}
	msg := fmt.Sprintf("the kernel has no TLS ULP (%v: CONFIG_TLS, modprobe tls); `make test-ktls` runs this in a VM whose kernel has it", opErr)
	if os.Getenv("KZERO_KTLS_REQUIRED") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// tcpPair is a connected pair of loopback TCP sockets.
func tcpPair(t testing.TB) (srv, cli *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	return s.(*net.TCPConn), c.(*net.TCPConn)
}

// tlsStat reads the kernel's kTLS counters (/proc/net/tls_stat): TlsTxSw
// and TlsRxSw count sockets that took software kTLS in each direction.
func tlsStat(t testing.TB) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tls_stat")
	if err != nil {
		t.Fatalf("kTLS counters: %v", err)
	}
	m := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			m[f[0]], _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	return m
}

// recordCipher is a user-space reference for the record protection the
// kernel applies with the keys offload hands it (RFC 5288 and RFC 7905
// for TLS 1.2, RFC 8446 section 5.2 for TLS 1.3): the tests check the
// kernel against it byte for byte.
type recordCipher struct {
	version uint16
	suite   aead
	keys    trafficKeys
	aead    cipher.AEAD
}

func newRecordCipher(t testing.TB, version uint16, suite aead, keys trafficKeys) *recordCipher {
	t.Helper()
	var a cipher.AEAD
	var err error
	if suite.kernel == kernelChaCha20 {
		a, err = chacha20poly1305.New(keys.key)
	} else {
		var b cipher.Block
		if b, err = aes.NewCipher(keys.key); err == nil {
			a, err = cipher.NewGCM(b)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return &recordCipher{version: version, suite: suite, keys: keys, aead: a}
}

// explicitNonce reports whether records carry TLS 1.2 AES-GCM's 8-byte
// explicit nonce.
func (r *recordCipher) explicitNonce() bool {
	return r.version == tls.VersionTLS12 && r.suite.kernel != kernelChaCha20
}

// nonce is the record's nonce: the fixed IV XOR the sequence number, or
// TLS 1.2 AES-GCM's salt followed by the explicit part.
func (r *recordCipher) nonce(explicit []byte) []byte {
	if r.explicitNonce() {
		return append(append([]byte(nil), r.keys.iv[:4]...), explicit...)
	}
	n := append([]byte(nil), r.keys.iv...)
	for i := range 8 {
		n[4+i] ^= byte(r.keys.seq >> (56 - 8*i))
	}
	return n
}

// aad12 is TLS 1.2's additional data: seq, type, version, length.
func (r *recordCipher) aad12(typ byte, n int) []byte {
	b := binary.BigEndian.AppendUint64(nil, r.keys.seq)
	return append(b, typ, 3, 3, byte(n>>8), byte(n))
}

// seal protects one record of type typ and moves the sequence on.
func (r *recordCipher) seal(typ byte, payload []byte) []byte {
	defer func() { r.keys.seq++ }()
	if r.version == tls.VersionTLS13 {
		inner := append(append([]byte(nil), payload...), typ)
		n := len(inner) + r.aead.Overhead()
		hdr := []byte{23, 3, 3, byte(n >> 8), byte(n)}
		return r.aead.Seal(hdr, r.nonce(nil), inner, hdr)
	}
	var explicit []byte
	if r.explicitNonce() {
		explicit = binary.BigEndian.AppendUint64(nil, r.keys.seq)
	}
	n := len(explicit) + len(payload) + r.aead.Overhead()
	rec := append([]byte{typ, 3, 3, byte(n >> 8), byte(n)}, explicit...)
	return r.aead.Seal(rec, r.nonce(explicit), payload, r.aad12(typ, len(payload)))
}

// open reads one record from rd and returns its type and plaintext.
func (r *recordCipher) open(rd io.Reader) (byte, []byte, error) {
	var hdr [recordHeaderLen]byte
	if _, err := io.ReadFull(rd, hdr[:]); err != nil {
		return 0, nil, err
	}
	body := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
	if _, err := io.ReadFull(rd, body); err != nil {
		return 0, nil, err
	}
	defer func() { r.keys.seq++ }()
	if r.version == tls.VersionTLS13 {
		if hdr[0] != 23 {
			return 0, nil, fmt.Errorf("TLS 1.3 record of outer type %d", hdr[0])
		}
		inner, err := r.aead.Open(nil, r.nonce(nil), body, hdr[:])
		if err != nil {
			return 0, nil, err
		}
		inner = bytes.TrimRight(inner, "\x00")
		if len(inner) == 0 {
			return 0, nil, errors.New("TLS 1.3 record without a content type")
		}
		return inner[len(inner)-1], inner[:len(inner)-1], nil
	}
	var explicit []byte
	if r.explicitNonce() {
		explicit, body = body[:8], body[8:]
	}
	n := len(body) - r.aead.Overhead()
	if n < 0 {
		return 0, nil, errors.New("record shorter than its tag")
	}
	p, err := r.aead.Open(nil, r.nonce(explicit), body, r.aad12(hdr[0], n))
	return hdr[0], p, err
}

// kernelSuites are the (version, cipher suite) pairs offload hands to the
// kernel: each AEAD kTLS has, in TLS 1.2 and 1.3.
var kernelSuites = []struct {
	version uint16
	suite   uint16
}{
	{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
	{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
	{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256},
	{tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256},
	{tls.VersionTLS13, tls.TLS_AES_256_GCM_SHA384},
	{tls.VersionTLS13, tls.TLS_CHACHA20_POLY1305_SHA256},
}

// TestKTLSCryptoInfo: for each version and cipher the kernel takes, the
// crypto_info offload builds makes the kernel seal records that the
// reference opens (TLS_TX, sendfile included) and open records the
// reference seals (TLS_RX), from a sequence number that is not zero. Go's
// client cannot pick TLS 1.3's cipher suite, so this is where TLS 1.3
// AES-256-GCM and ChaCha20-Poly1305 meet the kernel.
func TestKTLSCryptoInfo(t *testing.T) {
	needKernelTLS(t)
	seg := newSegment(t, 100<<10)
	for _, ks := range kernelSuites {
		t.Run(fmt.Sprintf("%s/%s", tls.VersionName(ks.version), tls.CipherSuiteName(ks.suite)), func(t *testing.T) {
			a := offloadable[ks.suite]
			dir := func(seq uint64) trafficKeys {
				d := trafficKeys{key: make([]byte, a.keyLen), iv: make([]byte, 12), seq: seq}
				if ks.version == tls.VersionTLS12 {
					d.iv = make([]byte, a.ivLen)
				}
				_, _ = rand.Read(d.key)
				_, _ = rand.Read(d.iv)
				return d
			}
			k := sessionKeys{version: ks.version, suite: a, tx: dir(7), rx: dir(1<<40 + 3)}
			srv, cli := tcpPair(t)
			defer srv.Close()
			defer cli.Close()
			if err := offload(srv, k); err != nil {
				t.Fatalf("offload: %v", err)
			}
			// TLS_TX: a write, then a file range with sendfile.
			if _, err := srv.Write([]byte("hello from the kernel")); err != nil {
				t.Fatal(err)
			}
			ref := newRecordCipher(t, ks.version, a, k.tx)
			rd := bufio.NewReader(cli)
			typ, p, err := ref.open(rd)
			if err != nil || typ != 23 || string(p) != "hello from the kernel" {
				t.Fatalf("TLS_TX record: type %d %q %v", typ, p, err)
			}
			sf, err := srv.File()
			if err != nil {
				t.Fatal(err)
			}
			defer sf.Close()
			off := int64(10)
			want := seg.data[10 : 10+40<<10] // three records, within the socket buffers: nothing reads yet
			for sent := 0; sent < len(want); {
				n, err := unix.Sendfile(int(sf.Fd()), seg.fd, &off, len(want)-sent)
				if err != nil {
					t.Fatalf("sendfile over kTLS: %v", err)
				}
				sent += n
			}
			var got []byte
			for len(got) < len(want) {
				typ, p, err := ref.open(rd)
				if err != nil || typ != 23 {
					t.Fatalf("sendfile record %d: type %d %v", ref.keys.seq, typ, err)
				}
				got = append(got, p...)
			}
			if !bytes.Equal(got, want) {
				t.Fatal("sendfile over kTLS: the records do not hold the file's bytes")
			}
			// TLS_RX: two records the reference seals, read as plaintext.
			in := newRecordCipher(t, ks.version, a, k.rx)
			msg := append(in.seal(23, []byte("hello ")), in.seal(23, []byte("from the client"))...)
			if _, err := cli.Write(msg); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			var read []byte
			for len(read) < len("hello from the client") {
				n, err := sf.Read(buf)
				if err != nil {
					t.Fatalf("TLS_RX read: %v", err)
				}
				read = append(read, buf[:n]...)
			}
			if string(read) != "hello from the client" {
				t.Fatalf("TLS_RX read %q", read)
			}
		})
	}
}

// TestKTLSFetch: a TLS connection the kernel takes, for each TLS 1.2 AEAD
// suite and TLS 1.3: requests arrive through TLS_RX, answers and a 3 MiB
// file range go out through TLS_TX, the range with sendfile; crypto/tls
// on the client side reads them intact.
func TestKTLSFetch(t *testing.T) {
	needKernelTLS(t)
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	seg := newSegment(t, 3<<20)
	h := HandlerFunc(func(r *Request) {
		resp := r.NewResponse()
		if string(r.Body) == "fetch" {
			resp.B = append(resp.B, "head"...)
			resp.AddFile(seg.rng(0, int64(len(seg.data))))
		} else {
			resp.B = append(resp.B, r.Body...)
		}
		r.Respond(resp)
	})
	for _, ks := range kernelSuites {
		if ks.version == tls.VersionTLS13 && ks.suite != tls.TLS_AES_128_GCM_SHA256 && ks.suite != tls.TLS_CHACHA20_POLY1305_SHA256 {
			continue // Go's client and server agree on one of these two
		}
		t.Run(fmt.Sprintf("%s/%s", tls.VersionName(ks.version), tls.CipherSuiteName(ks.suite)), func(t *testing.T) {
			s, _ := tlsServer(t, TLSSettings{KeystoreChain: cert, KeystoreKey: key}, h)
			before := tlsStat(t)
			cfg := pki.clientConfig("", "")
			cfg.MinVersion, cfg.MaxVersion = ks.version, ks.version
			if ks.version == tls.VersionTLS12 {
				cfg.CipherSuites = []uint16{ks.suite}
			}
			c, err := dialTLS(t, s, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if ks.version == tls.VersionTLS13 && c.c.ConnectionState().CipherSuite != ks.suite {
				t.Skipf("Go's TLS 1.3 agreed on %s on this CPU", tls.CipherSuiteName(c.c.ConnectionState().CipherSuite))
			}
			for i := range 3 {
				body, err := c.call(int32(i), bytes.Repeat([]byte{byte(i)}, 20000*i))
				if err != nil || len(body) != 20000*i {
					t.Fatalf("call %d: %d bytes %v", i, len(body), err)
				}
			}
			body, err := c.call(9, []byte("fetch"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, append([]byte("head"), seg.data...)) {
				t.Fatalf("fetch: %d bytes, not the file's", len(body))
			}
			// Counted once sendfile returns, maybe after the client has
			// the bytes: wait for the count to catch up.
			eventually(t, "the file range counted", func() bool {
				st := s.Stats()
				return st.ZeroCopyBytes+st.CopiedBytes >= int64(len(seg.data))
			})
			st := s.Stats()
			if st.KernelTLSConns != 1 || st.UserTLSConns != 0 {
				t.Fatalf("not on kernel TLS: %+v", st)
			}
			if st.ZeroCopyBytes < int64(len(seg.data)) || st.CopiedBytes != 0 {
				t.Fatalf("the file range did not go out with sendfile: %+v", st)
			}
			after := tlsStat(t)
			if after["TlsTxSw"]-before["TlsTxSw"] != 1 || after["TlsRxSw"]-before["TlsRxSw"] != 1 {
				t.Fatalf("kernel counters: TlsTxSw %d→%d, TlsRxSw %d→%d, want one more each",
					before["TlsTxSw"], after["TlsTxSw"], before["TlsRxSw"], after["TlsRxSw"])
			}
			if after["TlsDecryptError"] != before["TlsDecryptError"] {
				t.Fatalf("kernel decrypt errors: %d→%d", before["TlsDecryptError"], after["TlsDecryptError"])
			}
		})
	}
}

// TestTLSFallbackSuite: a cipher suite kTLS has no cipher for (AES-CBC)
// goes through the user-space relay, with the same answers; the next
// connection, on an AEAD suite, takes the kernel path again when the
// kernel has it.
func TestTLSFallbackSuite(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	seg := newSegment(t, 1<<20)
	h := HandlerFunc(func(r *Request) {
		resp := r.NewResponse()
		resp.B = append(resp.B, "head"...)
		resp.AddFile(seg.rng(0, int64(len(seg.data))))
		r.Respond(resp)
	})
	s, _ := tlsServer(t, TLSSettings{KeystoreChain: cert, KeystoreKey: key,
		CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}}, h)
	cbc := pki.clientConfig("", "")
	cbc.MaxVersion = tls.VersionTLS12
	cbc.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}
	c, err := dialTLS(t, s, cbc)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := c.call(1, nil); err != nil || !bytes.Equal(body, append([]byte("head"), seg.data...)) {
		t.Fatalf("over AES-CBC: %d bytes %v", len(body), err)
	}
	if st := s.Stats(); st.UserTLSConns != 1 || st.KernelTLSConns != 0 {
		t.Fatalf("AES-CBC not relayed: %+v", st)
	}
	gcm := pki.clientConfig("", "")
	gcm.MaxVersion = tls.VersionTLS12
	gcm.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
	c2, err := dialTLS(t, s, gcm)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := c2.call(2, nil); err != nil || !bytes.Equal(body, append([]byte("head"), seg.data...)) {
		t.Fatalf("over AES-GCM: %d bytes %v", len(body), err)
	}
	st := s.Stats()
	if st.KernelTLSConns+st.UserTLSConns != 2 {
		t.Fatalf("stats %+v", st)
	}
	if st.KernelTLSConns == 0 {
		needKernelTLS(t) // the kernel has kTLS, yet AES-GCM was relayed: fail
		t.Fatalf("AES-GCM relayed on a kernel with kTLS: %+v", st)
	}
}

// TestKTLSKeyUpdate: a TLS 1.3 client's KeyUpdate reaches a connection the
// kernel holds. Linux before 6.14 cannot take new receive keys, and no
// kernel gives the connection back to user space, so kzero closes it (the
// client reconnects): the client must see the connection end, never bytes
// decrypted with the wrong key, and other connections go on.
func TestKTLSKeyUpdate(t *testing.T) {
	needKernelTLS(t)
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	s, _ := tlsServer(t, TLSSettings{KeystoreChain: cert, KeystoreKey: key}, nil)
	other, err := dialTLS(t, s, pki.clientConfig("", ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, requested := range []byte{0, 1} {
		t.Run(fmt.Sprintf("update_requested=%d", requested), func(t *testing.T) {
			before := s.Stats().KernelTLSRecordCloses
			raw, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			_ = raw.SetDeadline(time.Now().Add(time.Minute)) // against a hang, not a timing check
			var kl keyLog
			cfg := pki.clientConfig("", "")
			cfg.MinVersion, cfg.KeyLogWriter = tls.VersionTLS13, &kl
			tc := tls.Client(raw, cfg)
			c := &tlsClient{t: t, c: tc, r: bufio.NewReader(tc)}
			if body, err := c.call(1, nil); err != nil || string(body) != "SSL " {
				t.Fatalf("before the KeyUpdate: %q %v", body, err)
			}
			st := tc.ConnectionState()
			a := offloadable[st.CipherSuite]
			keys, err := tls13Keys(a, kl.clientSecret)
			if err != nil {
				t.Fatal(err)
			}
			keys.seq = 1 // the request above was record 0
			ref := newRecordCipher(t, tls.VersionTLS13, a, keys)
			// KeyUpdate: handshake type 24, length 1, request_update.
			if _, err := raw.Write(ref.seal(22, []byte{24, 0, 0, 1, requested})); err != nil {
				t.Fatal(err)
			}
			if body, err := c.call(2, nil); err == nil {
				t.Fatalf("after a KeyUpdate the connection answered %q", body)
			}
			eventually(t, "the KeyUpdate close counted", func() bool { return s.Stats().KernelTLSRecordCloses == before+1 })
			if body, err := other.call(3, nil); err != nil || string(body) != "SSL " {
				t.Fatalf("another connection after the KeyUpdate: %q %v", body, err)
			}
		})
	}
}

// TestKTLSSlowReader: a 24 MiB file range over kTLS to a client that reads
// slowly through a small receive buffer, pipelined with more answers:
// sendfile meets a full socket (EAGAIN in the middle of a record the
// kernel is building), the writer waits and goes on, and crypto/tls reads
// every byte in order.
func TestKTLSSlowReader(t *testing.T) {
	needKernelTLS(t)
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	tl, err := NewTLS(TLSSettings{KeystoreChain: cert, KeystoreKey: key})
	if err != nil {
		t.Fatal(err)
	}
	seg := newSegment(t, 24<<20)
	ls := map[int32]layout{
		1: {"head", seg.rng(0, 24<<20), "tail"},
		3: {seg.rng(1<<20, 1<<20)},
		4: {"x", seg.rng(7, 1), "y"},
	}
	mk := map[int32]func() layout{}
	for corr, l := range ls {
		mk[corr] = func() layout { return l }
	}
	s := startWith(t, Config{Listeners: []Listener{{Name: "SSL", Addr: "127.0.0.1:0", TLS: tl}},
		SocketSendBuffer: 64 << 10, Logger: discard()}, layoutHandler(mk), nil)
	raw, err := smallRcvBuf.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tc := tls.Client(&slowConn{Conn: raw, slowReads: 400}, pki.clientConfig("", ""))
	r := bufio.NewReaderSize(tc, 64<<10)
	for corr := int32(1); corr <= 4; corr++ {
		if _, err := tc.Write(echoFrame(corr, []byte("echo"))); err != nil {
			t.Fatal(err)
		}
	}
	for corr := int32(1); corr <= 4; corr++ {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(r, b); err != nil {
			t.Fatal(err)
		}
		want := []byte("echo")
		if l, ok := ls[corr]; ok {
			want = l.want(seg)
		}
		if got := int32(binary.BigEndian.Uint32(b)); got != corr || !bytes.Equal(b[4:], want) {
			t.Fatalf("response %d: correlation %d, %d bytes, want %d bytes", corr, got, len(b)-4, len(want))
		}
	}
	st := s.Stats()
	if st.KernelTLSConns != 1 {
		t.Fatalf("not on kernel TLS: %+v", st)
	}
	if want := int64(24<<20 + 1<<20 + 1); st.ZeroCopyBytes != want || st.CopiedBytes != 0 {
		t.Fatalf("zero-copy %d (want %d), copied %d", st.ZeroCopyBytes, want, st.CopiedBytes)
	}
	if st.SocketFull == 0 {
		t.Fatal("the socket never filled up: the test did not test waiting")
	}
}

// TestKTLSRefusedLeavesTCP: when the kernel refuses the keys (here a
// cipher id it does not know, as an older kernel refuses ChaCha20 or
// TLS 1.3), offload fails before errSpoiled and the socket, although it
// now has the tls ULP, still carries bytes unchanged both ways, so
// crypto/tls can go on over it (the relay).
func TestKTLSRefusedLeavesTCP(t *testing.T) {
	needKernelTLS(t)
	srv, cli := tcpPair(t)
	defer srv.Close()
	defer cli.Close()
	bogus := aead{kernel: 999, keyLen: 16, ivLen: 4}
	keys := trafficKeys{key: make([]byte, 16), iv: make([]byte, 12)}
	err := offload(srv, sessionKeys{version: tls.VersionTLS13, suite: bogus, tx: keys, rx: keys})
	if err == nil || errors.Is(err, errSpoiled) {
		t.Fatalf("offload of an unknown cipher: %v", err)
	}
	// A record header in front: a kernel that had taken either side would
	// not pass these bytes through unchanged.
	const msg = "\x16\x03\x03 plain"
	for _, d := range []struct{ from, to *net.TCPConn }{{srv, cli}, {cli, srv}} {
		_ = d.to.SetReadDeadline(time.Now().Add(time.Minute)) // against a hang, not a timing check
		if _, err := d.from.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, len(msg))
		if _, err := io.ReadFull(d.to, b); err != nil || string(b) != msg {
			t.Fatalf("after a refused offload, %s→%s: %q %v", d.from.LocalAddr(), d.to.LocalAddr(), b, err)
		}
	}
}
