package raftnet

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// testCA issues certificates for 127.0.0.1 that both serve and dial.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "raftnet test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// configs are a node's server and client TLS: a certificate of this CA,
// peers verified against it (mutual TLS).
func (ca *testCA) configs(t *testing.T, cn string) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pair := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: ca.pool, ClientAuth: tls.RequireAndVerifyClientCert},
		&tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: ca.pool}
}

// TestTLS: voters and a learner whose controller listener is TLS (mutual)
// exchange messages; a voter with a certificate of another CA is never
// connected to, and its messages are not delivered.
func TestTLS(t *testing.T) {
	noLeaks(t)
	ca, other := newTestCA(t), newTestCA(t)
	withTLS := func(ca *testCA, cn string) func(*Config) {
		srv, cl := ca.configs(t, cn)
		return func(c *Config) { c.TLS, c.ClientTLS = srv, cl }
	}
	learned := make(chan int32, 4)
	a := startNode(t, 1, func(c *Config) {
		withTLS(ca, "a")(c)
		c.OnLearner = func(id int32) { offer(learned, id) }
	})
	b := startNode(t, 2, withTLS(ca, "b"))
	connect(a, b)
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, 7)})
	if m := recv(t, b.got, "message over TLS"); m.GetIndex() != 7 || m.GetFrom() != RaftID(1) {
		t.Fatalf("got %v", m)
	}
	b.Send([]*pb.Message{msg(pb.MsgAppResp, 2, 1, 8)})
	if m := recv(t, a.got, "answer over TLS"); m.GetIndex() != 8 {
		t.Fatalf("got %v", m)
	}

	// A learner (a broker-only node) dials the controller over TLS; the
	// link carries messages both ways.
	_, lcl := ca.configs(t, "learner")
	l := startNode(t, 5, func(c *Config) { c.Learner, c.Bootstrap, c.ClientTLS = true, []string{a.addr()}, lcl })
	if id := recv(t, learned, "learner over TLS"); id != 5 {
		t.Fatalf("learner %d", id)
	}
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 5, 12)})
	if m := recv(t, l.got, "message to the learner over TLS"); m.GetIndex() != 12 {
		t.Fatalf("learner got %v", m)
	}
	l.Close()

	// A node of another CA: both sides refuse the handshake.
	x := startNode(t, 3, withTLS(other, "x"))
	connect(a, b, x)
	x.Send([]*pb.Message{msg(pb.MsgApp, 3, 1, 9)})
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 3, 10)})
	recv(t, x.unreachable, "x reporting a unreachable")
	recv(t, a.unreachable, "a reporting x unreachable")
	if s := x.Stats(); s.Connects != 0 {
		t.Errorf("x of another CA connected: %+v", s)
	}
	select {
	case m := <-a.got:
		t.Errorf("a delivered %v from a node of another CA", m)
	default:
	}
	// Plain TCP to a TLS listener: no hello is ever read.
	p := startNode(t, 4, nil)
	connect(a, p)
	p.Send([]*pb.Message{msg(pb.MsgApp, 4, 1, 11)})
	recv(t, p.unreachable, "plaintext p reporting a unreachable")
	if s := p.Stats(); s.Connects != 0 {
		t.Errorf("plaintext node connected to a TLS listener: %+v", s)
	}
}
