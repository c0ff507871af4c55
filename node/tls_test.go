package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest/await"
	"kzero/net/api"
	"kzero/net/server"
	"kzero/net/wire"
)

// nodeCA is a test CA that issues each node one certificate (for
// 127.0.0.1, server and client use) in a PEM keystore file, beside the
// CA's own PEM, the truststore.
type nodeCA struct {
	dir   string
	cert  *x509.Certificate
	key   *ecdsa.PrivateKey
	trust string
}

func newNodeCA(t *testing.T, name string) *nodeCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &nodeCA{dir: t.TempDir(), cert: cert, key: key}
	ca.trust = ca.write(t, "ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return ca
}

func (ca *nodeCA) write(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(ca.dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// settings issues a certificate for node id and returns its listener's
// TLS settings: that keystore, this CA as the truststore, client
// certificates required (mutual TLS between the nodes).
func (ca *nodeCA) settings(t *testing.T, id int32) server.TLSSettings {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(id) + 100), Subject: pkix.Name{CommonName: fmt.Sprintf("node-%d", id)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	ks := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})...)
	return server.TLSSettings{KeystoreLocation: ca.write(t, fmt.Sprintf("node-%d.pem", id), ks), TruststoreLocation: ca.trust, ClientAuth: "required"}
}

// sslEverywhere makes a node's only client listener SSL, its inter-broker
// listener, and its controller listener SSL too, all with the settings of
// its certificate from ca.
func sslEverywhere(t *testing.T, ca *nodeCA) func(*Config) {
	return func(cfg *Config) {
		set := ca.settings(t, cfg.NodeID)
		lt, err := server.NewTLS(set)
		if err != nil {
			t.Fatal(err)
		}
		client, err := set.ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Listeners = []Listener{{Listener: api.Listener{Name: "SSL", SecurityProtocol: api.ProtocolSSL}, Addr: "127.0.0.1:0", TLS: lt}}
		cfg.InterBrokerListener, cfg.InterBroker = "SSL", &wire.Dialer{TLS: client}
		cfg.ControllerTLS, cfg.ControllerClientTLS = lt, client
	}
}

// TestSSLCluster: three nodes whose client, inter-broker and controller
// listeners are all SSL with mutual TLS form a quorum, replicate a topic
// (the followers fetch over TLS: the ISR is full and acks=all
// produces), and elect a new leader when the leader stops; the
// records stay readable through the others.
func TestSSLCluster(t *testing.T) {
	ca := newNodeCA(t, "cluster CA")
	c := startClusterWith(t, 3, sslEverywhere(t, ca))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	clientTLS, err := ca.settings(t, 99).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	// An idempotent producer does not give up on a record whose request
	// may have been appended, whatever its context says: with acks=all and
	// min.insync.replicas=3, a follower that cannot reach the leader keeps
	// the first ProduceSync retrying for ever, and the test would never
	// end. Letting the context fail it bounds the test by ctx.
	cl, adm := c.client(0, kgo.DialTLSConfig(clientTLS), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.AllowIdempotentProduceCancellation())
	if res, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": new("3")}, "tls"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res)
	}
	for i := range 3 {
		c.waitTopic(ctx, i, "tls")
	}
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "tls", Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce %d (acks=all, min.insync.replicas=3): %v", i, err)
		}
	}
	md, err := adm.Metadata(ctx, "tls")
	if err != nil {
		t.Fatal(err)
	}
	p := md.Topics["tls"].Partitions[0]
	if isr := slices.Sorted(slices.Values(p.ISR)); !slices.Equal(isr, []int32{1, 2, 3}) {
		t.Fatalf("ISR %v", p.ISR)
	}

	// The leader stops: another replica takes over, elected by the quorum
	// over TLS, and serves what was written.
	old := p.Leader
	c.stop(int(old - 1))
	other := int(old % 3) // another node's index
	cl2, adm2 := c.client(other, kgo.DialTLSConfig(clientTLS), kgo.ConsumeTopics("tls"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if !await.PollCtx(ctx, func() bool {
		if md, err = adm2.Metadata(ctx, "tls"); err != nil {
			return false
		}
		l := md.Topics["tls"].Partitions[0].Leader
		return l != old && l >= 1
	}) {
		t.Fatalf("no new leader after %d stopped: %v", old, err)
	}
	var got []string
	for len(got) < 10 {
		fs := cl2.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume after the election: %v (got %d)", err, len(got))
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if got[0] != "v0" || got[9] != "v9" {
		t.Fatalf("consumed %v", got)
	}
}

// TestSSLClusterWrongCA: a node whose certificate another CA issued (and
// which trusts only that CA) cannot join a quorum whose controller
// listener is SSL: its start fails, and the others never register it.
func TestSSLClusterWrongCA(t *testing.T) {
	good, bad := newNodeCA(t, "cluster CA"), newNodeCA(t, "rogue CA")
	addrs := freeAddrs(t, 3)
	c := &testCluster{t: t, voters: map[int32]string{1: addrs[0], 2: addrs[1], 3: addrs[2]}, nodes: make([]*Node, 3), mutate: sslEverywhere(t, good)}
	for range 3 {
		c.dirs = append(c.dirs, t.TempDir())
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(i)
		}
	})
	rogue := c.config(2)
	sslEverywhere(t, bad)(&rogue)
	// It is refused by the others at every try: fail it sooner than the
	// default minute.
	rogue.InitialRegistrationTimeout = 5 * time.Second
	rogueErr := make(chan error, 1)
	go func() {
		n, err := Start(rogue)
		if err == nil {
			n.Stop(context.Background())
		}
		rogueErr <- err
	}()
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			var err error
			c.nodes[i], err = Start(c.config(i))
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a node of the cluster's CA: %v", err)
		}
	}
	err := <-rogueErr
	if err == nil || !strings.Contains(err.Error(), "quorum") {
		t.Fatalf("the rogue node started: %v", err)
	}
	for i := range 2 {
		if _, ok := c.nodes[i].Controller().Image().Broker(3); ok {
			t.Errorf("node %d knows the rogue broker 3", i+1)
		}
	}
}
