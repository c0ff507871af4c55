package tools

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 and its
// key as PEM files in dir, and returns their paths.
func writeSelfSigned(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA:        true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	must(t, err)
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	must(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	must(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile
}

func TestConnectOptionsTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeSelfSigned(t, dir, "broker")
	notPEM := filepath.Join(dir, "not.pem")
	must(t, os.WriteFile(notPEM, []byte("hello"), 0o644))

	var env Env
	must(t, (&ConnectOptions{}).Apply(&env))
	if env.TLS != nil || env.SASL != nil {
		t.Fatalf("no options gave TLS %v, SASL %v", env.TLS, env.SASL)
	}
	must(t, (&ConnectOptions{TLS: true}).Apply(&env))
	if env.TLS == nil || env.TLS.RootCAs != nil || env.TLS.MinVersion != tls.VersionTLS12 {
		t.Fatalf("--tls: %+v", env.TLS)
	}
	// Any TLS flag implies --tls.
	must(t, (&ConnectOptions{CAFile: cert, CertFile: cert, KeyFile: key}).Apply(&env))
	if env.TLS == nil || env.TLS.RootCAs == nil || len(env.TLS.Certificates) != 1 {
		t.Fatalf("--tls-ca --tls-cert --tls-key: %+v", env.TLS)
	}
	must(t, (&ConnectOptions{InsecureSkipVerify: true}).Apply(&env))
	if env.TLS == nil || !env.TLS.InsecureSkipVerify {
		t.Fatalf("--tls-insecure-skip-verify: %+v", env.TLS)
	}

	for name, c := range map[string]struct {
		opts  ConnectOptions
		usage bool
		want  string
	}{
		"missing ca":       {ConnectOptions{CAFile: filepath.Join(dir, "nope.pem")}, false, "nope.pem: no such file"},
		"ca not pem":       {ConnectOptions{CAFile: notPEM}, false, "no PEM certificate"},
		"cert without key": {ConnectOptions{CertFile: cert}, true, "--tls-cert and --tls-key go together"},
		"key without cert": {ConnectOptions{KeyFile: key}, true, "--tls-cert and --tls-key go together"},
		"key mismatch":     {ConnectOptions{CertFile: cert, KeyFile: notPEM}, false, "tls client certificate"},
	} {
		env := Env{}
		err := c.opts.Apply(&env)
		if err == nil || errors.Is(err, ErrUsage) != c.usage || !strings.Contains(err.Error(), c.want) || len(ErrorLines(err)) != 1 {
			t.Errorf("%s: %v, want %q (usage error: %t)", name, err, c.want, c.usage)
		}
		if env.TLS != nil {
			t.Errorf("%s: TLS set despite the error", name)
		}
	}
}

func TestConnectOptionsSASL(t *testing.T) {
	for in, want := range map[string]string{
		"PLAIN": "PLAIN", "plain": "PLAIN",
		"SCRAM-SHA-256": "SCRAM-SHA-256", "scram-sha-256": "SCRAM-SHA-256",
		"SCRAM-SHA-512": "SCRAM-SHA-512",
	} {
		var env Env
		must(t, (&ConnectOptions{SASLMechanism: in, SASLUser: "u", SASLPassword: "p"}).Apply(&env))
		if env.SASL == nil || env.SASL.Name() != want || env.TLS != nil {
			t.Errorf("--sasl-mechanism %s: %v", in, env.SASL)
		}
	}
	for name, opts := range map[string]ConnectOptions{
		"unknown mechanism":      {SASLMechanism: "GSSAPI", SASLUser: "u"},
		"no user":                {SASLMechanism: "PLAIN", SASLPassword: "p"},
		"user without mechanism": {SASLUser: "u"},
	} {
		if err := opts.Apply(&Env{}); !errors.Is(err, ErrUsage) {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
}
