package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tlsServer starts a server with one SSL listener; the handler answers
// "listener principal" unless the body asks for a file range.
func tlsServer(t testing.TB, set TLSSettings, h Handler) (*Server, *TLS) {
	t.Helper()
	tl, err := NewTLS(set)
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		h = HandlerFunc(func(r *Request) {
			resp := r.NewResponse()
			resp.B = append(resp.B, r.Conn().Listener()+" "+r.Conn().Principal()...)
			r.Respond(resp)
		})
	}
	// Quiet: these tests provoke failed handshakes and check them by Stats.
	s := startWith(t, Config{Listeners: []Listener{{Name: "SSL", Addr: "127.0.0.1:0", TLS: tl}}, Logger: discard()}, h, nil)
	return s, tl
}

// tlsClient is a raw Kafka-protocol client over TLS.
type tlsClient struct {
	t  testing.TB
	c  *tls.Conn
	r  *bufio.Reader
	cl *client
}

func dialTLS(t testing.TB, s *Server, cfg *tls.Config) (*tlsClient, error) {
	t.Helper()
	c, err := tls.Dial("tcp", s.Addr().String(), cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return &tlsClient{t: t, c: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// call sends one request and returns its response body.
func (c *tlsClient) call(corr int32, body []byte) ([]byte, error) {
	if _, err := c.c.Write(echoFrame(corr, body)); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c.r, size[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.r, b); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(b)); got != corr {
		return nil, fmt.Errorf("correlation id %d, want %d", got, corr)
	}
	return b[4:], nil
}

// TestTLSListener: requests and answers (bytes and a large file range,
// sendfile into whatever the loop writes to) over TLS 1.2 and 1.3, with
// kTLS where the kernel takes it and through the user-space relay when it
// is disabled; each connection counted on its path.
func TestTLSListener(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	seg := newSegment(t, 3<<20)
	h := HandlerFunc(func(r *Request) {
		resp := r.NewResponse()
		if string(r.Body) == "file" {
			resp.B = append(resp.B, "head"...)
			fr := seg.rng(5, int64(len(seg.data)-10))
			resp.AddFile(fr)
		} else {
			resp.B = append(resp.B, r.Body...)
		}
		r.Respond(resp)
	})
	for _, kernel := range []bool{true, false} {
		for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			t.Run(fmt.Sprintf("kernel=%v/%s", kernel, tls.VersionName(v)), func(t *testing.T) {
				s, _ := tlsServer(t, TLSSettings{KeystoreChain: cert, KeystoreKey: key, DisableKernelTLS: !kernel}, h)
				cfg := pki.clientConfig("", "")
				cfg.MaxVersion = v
				c, err := dialTLS(t, s, cfg)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 3 {
					body, err := c.call(int32(i), []byte("hello"))
					if err != nil || string(body) != "hello" {
						t.Fatalf("call %d: %q %v", i, body, err)
					}
				}
				body, err := c.call(9, []byte("file"))
				if err != nil {
					t.Fatal(err)
				}
				if want := append([]byte("head"), seg.data[5:len(seg.data)-5]...); !bytes.Equal(body, want) {
					t.Fatalf("file range: %d bytes, want %d", len(body), len(want))
				}
				// The loop counts a range's bytes once its syscall returns,
				// which may be after the client (through the relay, or the
				// kernel) already has them: wait for the count to catch up.
				eventually(t, "the file range counted", func() bool {
					st := s.Stats()
					return st.ZeroCopyBytes+st.CopiedBytes >= int64(len(seg.data)-10)
				})
				st := s.Stats()
				if st.TLSHandshakes != 1 || st.KernelTLSConns+st.UserTLSConns != 1 {
					t.Fatalf("stats %+v", st)
				}
				if !kernel && st.UserTLSConns != 1 {
					t.Fatalf("kTLS disabled, yet %+v", st)
				}
				// With kTLS the range goes out with sendfile; through the
				// relay it is sendfile into the pair, then copied: counted
				// as copied.
				if sent := st.ZeroCopyBytes; st.UserTLSConns > 0 {
					if st.CopiedBytes < int64(len(seg.data)-10) || sent != 0 {
						t.Fatalf("relayed file range not counted as copied: %+v", st)
					}
				} else if sent < int64(len(seg.data)-10) {
					t.Fatalf("file range not sent with sendfile over kTLS: %+v", st)
				}
				if kernel && st.KernelTLSConns == 0 {
					t.Skip("the kernel refused kTLS (no TLS ULP: CONFIG_TLS, modprobe tls): served in user space, the kTLS path not exercised")
				}
			})
		}
	}
}

// TestTLSBadHandshake: a plaintext client on the SSL port is closed and
// counted; a TLS client connected at the same time is served throughout.
func TestTLSBadHandshake(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	s, _ := tlsServer(t, TLSSettings{KeystoreChain: cert, KeystoreKey: key}, nil)
	good, err := dialTLS(t, s, pki.clientConfig("", ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := good.call(1, nil); err != nil {
		t.Fatal(err)
	}
	plain := dial(t, s)
	plain.write(echoFrame(1, []byte("hello")))
	plain.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	// Closed: an end of stream, or a reset (it closed with our bytes unread).
	if _, err := io.Copy(io.Discard, plain.r); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("plaintext client: %v", err)
	}
	eventually(t, "the failed handshake counted", func() bool { return s.Stats().TLSHandshakeFailures == 1 })
	if body, err := good.call(2, nil); err != nil || string(body) != "SSL " {
		t.Fatalf("TLS client after the bad one: %q %v", body, err)
	}
	// The failed connection gave its slot back (connection limits).
	s.conns.mu.Lock()
	total := s.conns.total
	s.conns.mu.Unlock()
	if total != 1 {
		t.Fatalf("%d connections counted, one open", total)
	}
}

// TestTLSClientAuth: ssl.client.auth=required refuses a client without a
// certificate and maps one with a certificate to its principal by the
// rules; requested takes both; a certificate no rule maps is refused.
func TestTLSClientAuth(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	alice, aliceKey := pki.issue(pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"kzero"}}, false, false)
	bob, bobKey := pki.issue(pkix.Name{CommonName: "bob", Organization: []string{"other"}}, false, false)
	base := TLSSettings{KeystoreChain: cert, KeystoreKey: key, TruststoreCertificates: pki.caPEM,
		PrincipalRules: `RULE:^CN=(.*?),OU=eng,O=kzero$/$1@ENG/L, RULE:^CN=([^,]*),O=other$/other-$1/U`}

	req := base
	req.ClientAuth = "required"
	s, _ := tlsServer(t, req, nil)
	if c, err := dialTLS(t, s, pki.clientConfig("", "")); err == nil {
		if _, err := c.call(1, nil); err == nil {
			t.Fatal("a client without a certificate was served")
		}
	}
	for _, tc := range []struct{ cert, key, want string }{{alice, aliceKey, "SSL User:alice@eng"}, {bob, bobKey, "SSL User:OTHER-BOB"}} {
		c, err := dialTLS(t, s, pki.clientConfig(tc.cert, tc.key))
		if err != nil {
			t.Fatal(err)
		}
		if body, err := c.call(1, nil); err != nil || string(body) != tc.want {
			t.Fatalf("got %q %v, want %q", body, err, tc.want)
		}
	}

	opt := base
	opt.ClientAuth = "requested"
	opt.PrincipalRules = `RULE:^CN=(.*?),OU=eng,O=kzero$/$1/`
	s2, _ := tlsServer(t, opt, nil)
	for _, tc := range []struct{ cert, key, want string }{{"", "", "SSL "}, {alice, aliceKey, "SSL User:alice"}} {
		c, err := dialTLS(t, s2, pki.clientConfig(tc.cert, tc.key))
		if err != nil {
			t.Fatal(err)
		}
		if body, err := c.call(1, nil); err != nil || string(body) != tc.want {
			t.Fatalf("got %q %v, want %q", body, err, tc.want)
		}
	}
	// bob's DN matches no rule: refused.
	if c, err := dialTLS(t, s2, pki.clientConfig(bob, bobKey)); err == nil {
		if _, err := c.call(1, nil); err == nil {
			t.Fatal("a certificate no rule maps was served")
		}
	}
	eventually(t, "refusal counted", func() bool { return s2.Stats().TLSHandshakeFailures == 1 })
}

// TestTLSReload: Reload serves a new certificate to new connections; a
// broken keystore file leaves the current one.
func TestTLSReload(t *testing.T) {
	pki := newTestPKI(t)
	dir := t.TempDir()
	ks := filepath.Join(dir, "keystore.pem")
	write := func(cn string) {
		cert, key := pki.issue(pkix.Name{CommonName: cn}, true, false)
		if err := os.WriteFile(ks, []byte(cert+key), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("first")
	s, tl := tlsServer(t, TLSSettings{KeystoreLocation: ks}, nil)
	served := func() string {
		c, err := dialTLS(t, s, pki.clientConfig("", ""))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.call(1, nil); err != nil {
			t.Fatal(err)
		}
		return c.c.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if got := served(); got != "first" {
		t.Fatalf("served %s", got)
	}
	write("second")
	if err := tl.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := served(); got != "second" {
		t.Fatalf("after reload served %s", got)
	}
	if err := os.WriteFile(ks, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tl.Reload(); err == nil {
		t.Fatal("a broken keystore reloaded")
	}
	if got := served(); got != "second" {
		t.Fatalf("after a failed reload served %s", got)
	}
}

// TestTLSSettingsRefused: what kzero cannot serve is refused with a clear
// error.
func TestTLSSettingsRefused(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	enc := strings.ReplaceAll(key, "PRIVATE KEY", "ENCRYPTED PRIVATE KEY")
	for _, tc := range []struct {
		set  TLSSettings
		want string
	}{
		{TLSSettings{}, "no keystore"},
		{TLSSettings{KeystoreChain: cert, KeystoreKey: enc, KeyPassword: "pw"}, "EncryptedPrivateKeyInfo"},
		{TLSSettings{KeystoreChain: cert, KeystoreKey: enc}, "ssl.key.password is not set"},
		{TLSSettings{KeystoreChain: cert, KeystoreKey: "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAAAA\n-----END RSA PRIVATE KEY-----\n"}, "Proc-Type"},
		{TLSSettings{KeystoreChain: cert, KeystoreKey: key, ClientAuth: "sometimes"}, "ssl.client.auth"},
		{TLSSettings{KeystoreChain: cert, KeystoreKey: key, Protocols: []string{"TLSv1.1"}}, "TLSv1.1"},
		{TLSSettings{KeystoreChain: cert, KeystoreKey: key, CipherSuites: []string{"TLS_RSA_WITH_RC4_128_SHA"}}, "TLS_RSA_WITH_RC4_128_SHA"},
		{TLSSettings{KeystoreChain: cert, KeystoreKey: key, PrincipalRules: "RULE:x"}, "ssl.principal.mapping.rules"},
		{TLSSettings{KeystoreChain: cert, KeystoreKey: key, TruststoreCertificates: "nothing"}, "ssl.truststore.certificates"},
	} {
		_, err := NewTLS(tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %q", tc.set, err, tc.want)
		}
	}
	// The PEM body on one line, as in a properties value, is read.
	oneLine := strings.ReplaceAll(strings.ReplaceAll(cert, "\n", " "), "----- ", "-----")
	if _, err := NewTLS(TLSSettings{KeystoreChain: oneLine, KeystoreKey: key, Protocols: []string{"TLSv1.3"},
		CipherSuites: []string{"TLS_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}}); err != nil {
		t.Fatal(err)
	}
}

// TestPrincipalRules: Kafka's rule syntax and DN form.
func TestPrincipalRules(t *testing.T) {
	dn := distinguishedName(pkix.Name{CommonName: "alice, jr", OrganizationalUnit: []string{"eng"}, Organization: []string{"kzero"}, Country: []string{"US"}})
	if dn != `CN=alice\, jr,OU=eng,O=kzero,C=US` {
		t.Fatalf("dn %q", dn)
	}
	for _, tc := range []struct{ rules, dn, want string }{
		{"", "CN=a,O=b", "CN=a,O=b"},
		{"DEFAULT", "CN=a,O=b", "CN=a,O=b"},
		{`RULE:^CN=(.*?),O=(.*)$/$1@$2/U, DEFAULT`, "CN=a,O=b", "A@B"},
		{`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT`, "CN=svc,OU=ServiceUsers,O=x", "svc"},
		{`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT`, "CN=svc,OU=Other", "CN=svc,OU=Other"},
		{`RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L`, "O=x,CN=Bob.Smith,C=US", "bob.smith"},
		{`RULE:^CN=([^\/]*)$/x\/$1/`, "CN=a", "x/a"},
	} {
		rules, err := parsePrincipalRules(tc.rules)
		if err != nil {
			t.Fatalf("%s: %v", tc.rules, err)
		}
		got, err := mapPrincipal(rules, tc.dn)
		if err != nil || got != tc.want {
			t.Errorf("%s on %s: %q %v, want %q", tc.rules, tc.dn, got, err, tc.want)
		}
	}
	rules, _ := parsePrincipalRules(`RULE:^CN=a$/x/`)
	if _, err := mapPrincipal(rules, "CN=b"); err == nil {
		t.Fatal("no rule applied, yet mapped")
	}
}

// TestTLSRelayCloses: through the user-space relay, a client that closes
// closes its server connection, and a connection the server closes (idle
// here) ends at the client; Stop waits for the relays.
func TestTLSRelayCloses(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	tl, err := NewTLS(TLSSettings{KeystoreChain: cert, KeystoreKey: key, DisableKernelTLS: true})
	if err != nil {
		t.Fatal(err)
	}
	s := startWith(t, Config{Listeners: []Listener{{Name: "SSL", Addr: "127.0.0.1:0", TLS: tl}}, Logger: discard(),
		IdleTimeout: 200 * time.Millisecond}, echo, nil)
	a, err := dialTLS(t, s, pki.clientConfig("", ""))
	if err != nil {
		t.Fatal(err)
	}
	if body, err := a.call(1, []byte("a")); err != nil || string(body) != "a" {
		t.Fatalf("%q %v", body, err)
	}
	a.c.Close()
	eventually(t, "the client's close reaches the server", func() bool { return s.Stats().ConnectionsClosed == 1 })

	b, err := dialTLS(t, s, pki.clientConfig("", ""))
	if err != nil {
		t.Fatal(err)
	}
	if body, err := b.call(1, []byte("b")); err != nil || string(body) != "b" {
		t.Fatalf("%q %v", body, err)
	}
	b.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := b.r.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("idle connection: read %v, want it closed", err)
	}
	if st := s.Stats(); st.IdleClosed != 1 || st.UserTLSConns != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestTLSRelayStopStuckClient: Stop returns while a relayed client that
// does not read holds a large answer (both relay directions blocked).
func TestTLSRelayStopStuckClient(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	tl, err := NewTLS(TLSSettings{KeystoreChain: cert, KeystoreKey: key, DisableKernelTLS: true})
	if err != nil {
		t.Fatal(err)
	}
	seg := newSegment(t, 16<<20)
	answered := make(chan struct{})
	h := HandlerFunc(func(r *Request) {
		resp := r.NewResponse()
		resp.AddFile(seg.rng(0, int64(len(seg.data))))
		r.Respond(resp)
		close(answered)
	})
	// Small socket buffers on both TCP ends: what the unix pair holds
	// alone cannot pass, so the relay ends up blocked writing.
	s := New(Config{Listeners: []Listener{{Name: "SSL", Addr: "127.0.0.1:0", TLS: tl}}, Loops: 1, Logger: discard(),
		SocketSendBuffer: 8192}, h)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := tls.DialWithDialer(d, "tcp", s.Addr().String(), pki.clientConfig("", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(echoFrame(1, nil)); err != nil {
		t.Fatal(err)
	}
	<-answered
	eventually(t, "the answer under way", func() bool { return s.Stats().SocketFull > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("stop with a stuck relayed client: %v", err)
	}
}
