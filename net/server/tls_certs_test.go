package server

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"
)

// testPKI is a CA and the certificates it issues, made in the test.
type testPKI struct {
	t      testing.TB
	caCert *x509.Certificate
	caKey  crypto.Signer
	caPEM  string
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kzero test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testPKI{t: t, caCert: cert, caKey: key, caPEM: pemString("CERTIFICATE", der)}
}

var serial int64 = 1

// issue returns a certificate for subject as PEM (chain, PKCS#8 key),
// for a server (127.0.0.1, localhost) or a client. rsaKey picks RSA over
// ECDSA (TLS 1.2's ECDHE_RSA suites need it).
func (p *testPKI) issue(subject pkix.Name, server, rsaKey bool) (certPEM, keyPEM string) {
	p.t.Helper()
	var key crypto.Signer
	var err error
	if rsaKey {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		p.t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		p.t.Fatal(err)
	}
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		p.t.Fatal(err)
	}
	return pemString("CERTIFICATE", der), pemString("PRIVATE KEY", k)
}

// clientConfig trusts the CA and presents cert (if any).
func (p *testPKI) clientConfig(certPEM, keyPEM string) *tls.Config {
	p.t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	cfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	if certPEM != "" {
		c, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
		if err != nil {
			p.t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg
}

func pemString(typ string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}
