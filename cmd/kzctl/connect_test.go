package main

// TLS and SASL, end to end: kzctl against a kfake cluster that listens
// with TLS (a self-signed certificate) or wants SASL, since kzero has
// neither yet.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// selfSigned makes a self-signed certificate for 127.0.0.1 named name, and
// writes it and its key as PEM files in dir.
func selfSigned(t *testing.T, dir, name string) (cert tls.Certificate, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA:        true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if cert, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	return cert, certFile, keyFile
}

// handshakes records the TLS handshakes a listener completed: the common
// name of the client certificate of each, "" when none was sent.
type handshakes struct {
	mu      sync.Mutex
	clients []string
}

func (h *handshakes) verify(cs tls.ConnectionState) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	name := ""
	if len(cs.PeerCertificates) > 0 {
		name = cs.PeerCertificates[0].Subject.CommonName
	}
	h.clients = append(h.clients, name)
	return nil
}

func (h *handshakes) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.clients
	h.clients = nil
	return c
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	brokerCert, brokerPEM, _ := selfSigned(t, dir, "broker")
	_, clientPEM, clientKey := selfSigned(t, dir, "kzctl-client")
	_, otherPEM, _ := selfSigned(t, dir, "other")
	clientPool := x509.NewCertPool()
	pemBytes, _ := os.ReadFile(clientPEM)
	clientPool.AppendCertsFromPEM(pemBytes)

	seen := &handshakes{}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.TLS(&tls.Config{
		Certificates: []tls.Certificate{brokerCert}, MinVersion: tls.VersionTLS12,
		ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: clientPool,
		VerifyConnection: seen.verify,
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]

	ok := func(args ...string) {
		t.Helper()
		code, stdout, stderr := kzctl(t, "", append([]string{"--brokers", addr, "--timeout", "10s"}, args...)...)
		if code != 0 || !strings.Contains(stdout, "CONTROLLER") {
			t.Fatalf("kzctl %q: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	fails := func(want string, args ...string) {
		t.Helper()
		code, _, stderr := kzctl(t, "", append([]string{"--brokers", addr, "--timeout", "10s"}, args...)...)
		t.Logf("kzctl %q: %s", args, stderr)
		if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
			t.Fatalf("kzctl %q: exit %d, stderr %q, want one line with %q", args, code, stderr, want)
		}
	}

	ok("cluster", "info", "--tls-ca", brokerPEM)
	if got := seen.take(); len(got) == 0 || got[0] != "" {
		t.Fatalf("handshakes with --tls-ca: %q, want at least one without a client certificate", got)
	}
	ok("--tls", "--tls-ca", brokerPEM, "--tls-cert", clientPEM, "--tls-key", clientKey, "cluster", "info")
	if got := seen.take(); len(got) == 0 || got[0] != "kzctl-client" {
		t.Fatalf("handshakes with --tls-cert: %q, want the client's certificate", got)
	}
	ok("cluster", "info", "--tls-insecure-skip-verify")
	seen.take()

	// The broker's certificate signed by no CA kzctl trusts: the system
	// roots (--tls alone) or another certificate.
	fails("certificate signed by unknown authority", "cluster", "info", "--tls")
	fails("certificate signed by unknown authority", "topic", "list", "--tls-ca", otherPEM)
	if got := seen.take(); len(got) != 0 {
		t.Fatalf("the broker completed handshakes kzctl refused: %q", got)
	}
	fails("no such file", "cluster", "info", "--tls-ca", filepath.Join(dir, "missing.pem"))

	code, _, stderr := kzctl(t, "", "--brokers", addr, "cluster", "info", "--tls-cert", clientPEM)
	if code != 2 || !strings.Contains(stderr, "--tls-cert and --tls-key go together") {
		t.Fatalf("--tls-cert alone: exit %d, %q", code, stderr)
	}
}

func TestSASL(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "plain-user", "plain-pass"),
		kfake.Superuser("SCRAM-SHA-256", "scram-user", "scram-256-pass"),
		kfake.Superuser("SCRAM-SHA-512", "scram-user", "scram-512-pass"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	run := func(args ...string) (int, string) {
		t.Helper()
		code, _, stderr := kzctl(t, "", append([]string{"--brokers", addr, "--timeout", "10s", "cluster", "info"}, args...)...)
		return code, stderr
	}
	for _, args := range [][]string{
		{"--sasl-mechanism", "PLAIN", "--sasl-user", "plain-user", "--sasl-password", "plain-pass"},
		{"--sasl-mechanism", "scram-sha-256", "--sasl-user", "scram-user", "--sasl-password", "scram-256-pass"},
		{"--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "scram-user", "--sasl-password", "scram-512-pass"},
	} {
		if code, stderr := run(args...); code != 0 {
			t.Fatalf("kzctl %q: exit %d: %s", args, code, stderr)
		}
	}
	// The password from the environment when no flag gives one.
	t.Setenv("KZERO_SASL_PASSWORD", "plain-pass")
	if code, stderr := run("--sasl-mechanism", "PLAIN", "--sasl-user", "plain-user"); code != 0 {
		t.Fatalf("password from KZERO_SASL_PASSWORD: exit %d: %s", code, stderr)
	}
	// kfake closes the connection on a failed authentication, where
	// Kafka answers SASL_AUTHENTICATION_FAILED first.
	for _, args := range [][]string{
		{"--sasl-mechanism", "PLAIN", "--sasl-user", "plain-user", "--sasl-password", "wrong"},
		{"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "scram-user", "--sasl-password", "wrong"},
	} {
		code, stderr := run(args...)
		t.Logf("kzctl %q: %s", args, stderr)
		if code != 1 || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, "SASL_AUTHENTICATION_FAILED") && !strings.Contains(stderr, "closed the connection") {
			t.Fatalf("kzctl %q: exit %d, %q", args, code, stderr)
		}
	}
	for _, args := range [][]string{
		{"--sasl-mechanism", "GSSAPI", "--sasl-user", "u"},
		{"--sasl-mechanism", "PLAIN"},
		{"--sasl-user", "u"},
	} {
		if code, stderr := run(args...); code != 2 {
			t.Fatalf("kzctl %q: exit %d, want 2: %s", args, code, stderr)
		}
	}
}
