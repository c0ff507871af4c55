package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"kzero/kzerotest/await"
	"kzero/node"
)

// testCerts is a CA made in the test and the PEM files it issued, in a
// temp dir: the broker's keystore (chain + PKCS#8 key, Kafka's PEM
// keystore form) and the clients' certificates and keys.
type testCerts struct {
	t       testing.TB
	dir     string
	ca      *x509.Certificate
	caKey   *ecdsa.PrivateKey
	caFile  string
	serial  int64
	brokerK string // the broker's keystore file
}

func newTestCerts(t testing.TB) *testCerts {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kzero test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	c := &testCerts{t: t, dir: t.TempDir(), ca: ca, caKey: key, serial: 1}
	c.caFile = c.write("ca.pem", pemOf("CERTIFICATE", der))
	cert, k := c.issue(pkix.Name{CommonName: "broker"}, true)
	c.brokerK = c.write("broker.keystore.pem", cert+k)
	return c
}

func pemOf(typ string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

func (c *testCerts) write(name, content string) string {
	c.t.Helper()
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// issue makes a certificate for subject (a server's names 127.0.0.1 and
// localhost) and returns it and its PKCS#8 key, PEM.
func (c *testCerts) issue(subject pkix.Name, server bool) (certPEM, keyPEM string) {
	c.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		c.t.Fatal(err)
	}
	c.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(c.serial), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses, tmpl.DNSNames = []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.ca, key.Public(), c.caKey)
	if err != nil {
		c.t.Fatal(err)
	}
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		c.t.Fatal(err)
	}
	return pemOf("CERTIFICATE", der), pemOf("PRIVATE KEY", k)
}

// client is a TLS client config trusting the CA, presenting a certificate
// for cn when cn is not empty.
func (c *testCerts) client(cn string) *tls.Config {
	c.t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(c.ca)
	cfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	if cn != "" {
		cert, key := c.issue(pkix.Name{CommonName: cn, OrganizationalUnit: []string{"clients"}, Organization: []string{"kzero"}}, false)
		kp, err := tls.X509KeyPair([]byte(cert), []byte(key))
		if err != nil {
			c.t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{kp}
	}
	return cfg
}

// sslProps: PLAINTEXT (inter-broker), SSL (kTLS where the kernel takes
// it), SSLUSER (an SSL listener forced to user-space TLS by its own
// listener.name.ssluser.ssl.kernel.offload.enable) and SASL_SSL with
// PLAIN, all with the same keystore.
func sslProps(c *testCerts) []string {
	return []string{
		"listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SSLUSER://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,SSLUSER:SSL,SASL_SSL:SASL_SSL",
		"inter.broker.listener.name", "PLAINTEXT",
		"ssl.keystore.type", "PEM",
		"ssl.keystore.location", c.brokerK,
		"ssl.truststore.type", "PEM",
		"ssl.truststore.location", c.caFile,
		"listener.name.ssluser.ssl.kernel.offload.enable", "false",
		"sasl.enabled.mechanisms", "PLAIN",
		"listener.name.sasl_ssl.plain.sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-pw";`,
		"connection.failed.authentication.delay.ms", "0",
	}
}

// produceConsume produces n records of 10 KiB (uncompressed) to a new
// topic and reads them back, returning the record bytes read.
func produceConsume(t *testing.T, ctx context.Context, addr, topic string, n int, opts ...kgo.Opt) int64 {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatalf("%s: create topic: %v", topic, err)
	}
	value := make([]byte, 10<<10)
	rand.Read(value)
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: value}).FirstErr(); err != nil {
			t.Fatalf("%s: produce %d: %v", topic, i, err)
		}
	}
	var got int
	var size int64
	for got < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("%s: fetch: %v", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Key) != fmt.Sprint(got) || !bytes.Equal(r.Value, value) {
				t.Fatalf("%s: record %d: key %q", topic, got, r.Key)
			}
			got++
			size += int64(len(r.Value))
		})
	}
	return size
}

// TestSSLWithFranzGo: kgo over SSL (kTLS if the kernel takes it), over an
// SSL listener forced to user-space TLS, and over SASL_SSL with PLAIN:
// produce and consume; each path counted on /metrics's counters; the
// fetched records go out with sendfile over kTLS, and through the relay
// (sendfile into its socket pair, then encrypted in user space) they are
// counted as copied.
func TestSSLWithFranzGo(t *testing.T) {
	c := newTestCerts(t)
	b := startTestBroker(t, t.TempDir(), sslProps(c)...)
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	before := b.ServerStats()
	fetched := produceConsume(t, ctx, b.ListenerAddr("SSL").String(), "ssl", 50, kgo.DialTLSConfig(c.client("")))
	st := b.ServerStats()
	if st.TLSHandshakes == before.TLSHandshakes {
		t.Fatalf("no TLS handshake counted: %+v", st)
	}
	kernel := st.KernelTLSConns > 0
	if zc := st.ZeroCopyBytes - before.ZeroCopyBytes; kernel && zc < fetched {
		t.Fatalf("%d record bytes fetched over kTLS, %d sent with sendfile: %+v", fetched, zc, st)
	}
	if kernel && st.UserTLSBytes != before.UserTLSBytes {
		t.Fatalf("kTLS connections, yet bytes encrypted in user space: %+v", st)
	}
	if !kernel {
		t.Logf("kernel TLS unavailable here (no TLS ULP): the SSL listener served through user-space TLS")
		if cp := st.CopiedBytes - before.CopiedBytes; cp < fetched || st.UserTLSBytes-before.UserTLSBytes < fetched {
			t.Fatalf("%d record bytes fetched through the relay, %d counted as copied: %+v", fetched, cp, st)
		}
	}

	before = b.ServerStats()
	fetched = produceConsume(t, ctx, b.ListenerAddr("SSLUSER").String(), "ssl-user", 50, kgo.DialTLSConfig(c.client("")))
	st = b.ServerStats()
	if st.UserTLSConns == before.UserTLSConns || st.KernelTLSConns != before.KernelTLSConns {
		t.Fatalf("the user-space listener's connections: %+v, before %+v", st, before)
	}
	if st.UserTLSBytes-before.UserTLSBytes < fetched {
		t.Fatalf("%d record bytes fetched, %d encrypted by the relay", fetched, st.UserTLSBytes-before.UserTLSBytes)
	}
	// sendfile into the relay's socket pair, then copied: counted as
	// copied, not zero-copy.
	if cp := st.CopiedBytes - before.CopiedBytes; cp < fetched || st.ZeroCopyBytes != before.ZeroCopyBytes {
		t.Fatalf("%d record bytes fetched through the relay, %d counted as copied, %d as zero-copy", fetched, cp, st.ZeroCopyBytes-before.ZeroCopyBytes)
	}

	produceConsume(t, ctx, b.ListenerAddr("SASL_SSL").String(), "sasl-ssl", 20, kgo.DialTLSConfig(c.client("")),
		kgo.SASL(plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism()))
	// A wrong password over SASL_SSL is refused as over SASL_PLAINTEXT.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.ListenerAddr("SASL_SSL").String()), kgo.DialTLSConfig(c.client("")),
		kgo.SASL(plain.Auth{User: "alice", Pass: "wrong"}.AsMechanism()), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).ListTopics(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong password over SASL_SSL: %v", err)
	}
	// Metadata over an SSL listener names the SSL listener's address.
	md, err := kadm.NewClient(newTLSClient(t, b.ListenerAddr("SSL").String(), c.client(""))).BrokerMetadata(ctx)
	if err != nil || len(md.Brokers) != 1 || net.JoinHostPort(md.Brokers[0].Host, itoa(md.Brokers[0].Port)) != b.ListenerAddr("SSL").String() {
		t.Fatalf("metadata over SSL: %+v %v", md.Brokers, err)
	}
}

func newTLSClient(t *testing.T, addr string, cfg *tls.Config, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTLSConfig(cfg)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestSSLWithSarama: sarama with Net.TLS over SSL and over SASL_SSL
// (PLAIN): produce and consume.
func TestSSLWithSarama(t *testing.T) {
	c := newTestCerts(t)
	b := startTestBroker(t, t.TempDir(), sslProps(c)...)
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, l := range []string{"SSL", "SSLUSER", "SASL_SSL"} {
		cfg := sarama.NewConfig()
		cfg.Version = sarama.V4_0_0_0
		cfg.Producer.Return.Successes = true
		cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, c.client("")
		if l == "SASL_SSL" {
			cfg.Net.SASL.Enable, cfg.Net.SASL.Mechanism = true, sarama.SASLTypePlaintext
			cfg.Net.SASL.User, cfg.Net.SASL.Password = "alice", "alice-pw"
		}
		addr := []string{b.ListenerAddr(l).String()}
		topic := "sarama-" + strings.ToLower(l)
		p, err := sarama.NewSyncProducer(addr, cfg)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		for i := range 10 {
			if _, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil || off != int64(i) {
				t.Fatalf("%s: send %d: offset %d, %v", l, i, off, err)
			}
		}
		p.Close()
		cons, err := sarama.NewConsumer(addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			select {
			case m := <-pc.Messages():
				if string(m.Value) != fmt.Sprint(i) {
					t.Fatalf("%s: record %d: %q", l, i, m.Value)
				}
			case <-ctx.Done():
				t.Fatalf("%s: consumed %d of 10", l, i)
			}
		}
		pc.Close()
		cons.Close()
	}
}

// TestSSLWithKcat: kcat (librdkafka, OpenSSL) produces and consumes over
// SSL with a client certificate (mTLS required), over the user-space
// listener, and over SASL_SSL with PLAIN.
func TestSSLWithKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed (.ci/run installs it)")
	}
	c := newTestCerts(t)
	cert, key := c.issue(pkix.Name{CommonName: "kcat"}, false)
	certFile, keyFile := c.write("kcat.pem", cert), c.write("kcat.key", key)
	// Broker-wide ssl.client.auth=required applies to SSL listeners, not to
	// SASL_SSL (KIP-684): SSLUSER opts out with its own key, SASL_SSL
	// needs none.
	b := startTestBroker(t, t.TempDir(), append(sslProps(c), "ssl.client.auth", "required",
		"listener.name.ssluser.ssl.client.auth", "none")...)
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, tc := range []struct {
		listener string
		args     []string
	}{
		{"SSL", []string{"-X", "security.protocol=ssl", "-X", "ssl.certificate.location=" + certFile, "-X", "ssl.key.location=" + keyFile}},
		{"SSLUSER", []string{"-X", "security.protocol=ssl"}},
		{"SASL_SSL", []string{"-X", "security.protocol=sasl_ssl", "-X", "sasl.mechanism=PLAIN", "-X", "sasl.username=alice", "-X", "sasl.password=alice-pw"}},
	} {
		args := append([]string{"-b", b.ListenerAddr(tc.listener).String(), "-X", "ssl.ca.location=" + c.caFile}, tc.args...)
		t.Run(tc.listener, func(t *testing.T) {
			kcatRoundTrip(t, ctx, kcat, args, "kcat-"+strings.ToLower(tc.listener), 100)
		})
	}
	// Without its certificate kcat is refused by the mTLS listener.
	args := []string{"-b", b.ListenerAddr("SSL").String(), "-X", "ssl.ca.location=" + c.caFile, "-X", "security.protocol=ssl", "-L", "-m", "5"}
	if out, err := exec.CommandContext(ctx, kcat, args...).CombinedOutput(); err == nil {
		t.Fatalf("kcat without a client certificate listed metadata:\n%s", out)
	}
}

// TestSSLClientCertificateACLs: ssl.client.auth=required with
// ssl.principal.mapping.rules mapping the certificate's DN to its CN; the
// StandardAuthorizer sees that principal: the super user (by certificate)
// creates a topic and an ACL for alice; alice produces and consumes; bob,
// with no ACL, is refused; a DENY for alice beats her ALLOW; a client
// without a certificate cannot connect.
func TestSSLClientCertificateACLs(t *testing.T) {
	c := newTestCerts(t)
	b := startTestBroker(t, t.TempDir(),
		"listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"inter.broker.listener.name", "PLAINTEXT",
		"ssl.keystore.location", c.brokerK,
		"ssl.truststore.location", c.caFile,
		"ssl.client.auth", "required",
		"ssl.principal.mapping.rules", "RULE:^CN=([a-z]+),OU=clients,O=kzero$/$1/L,DEFAULT",
		"authorizer.class.name", standardAuthorizer,
		"super.users", "User:admin",
		"offsets.topic.replication.factor", "1",
	)
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr := b.ListenerAddr("SSL").String()
	admin := kadm.NewClient(newTLSClient(t, addr, c.client("admin")))
	if _, err := admin.CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpRead, kadm.OpWrite)); err != nil {
		t.Fatal(err)
	}
	alice := newTLSClient(t, addr, c.client("alice"), kgo.DefaultProduceTopic("orders"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err := alice.ProduceSync(ctx, &kgo.Record{Value: []byte("from alice")}).FirstErr(); err != nil {
		t.Fatalf("alice produces: %v", err)
	}
	fs := alice.PollFetches(ctx)
	if err := fs.Err(); err != nil || fs.NumRecords() != 1 {
		t.Fatalf("alice consumes: %d records, %v", fs.NumRecords(), err)
	}
	bob := newTLSClient(t, addr, c.client("bob"), kgo.DefaultProduceTopic("orders"), kgo.RequestRetries(0),
		kgo.RecordRetries(1), kgo.UnknownTopicRetries(0))
	if err := bob.ProduceSync(ctx, &kgo.Record{Value: []byte("from bob")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob produces: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if _, err := admin.CreateACLs(ctx, kadm.NewACLs().Deny("User:alice").Topics("orders").Operations(kadm.OpWrite)); err != nil {
		t.Fatal(err)
	}
	// Not idempotent: with no WRITE left anywhere, InitProducerId would be
	// refused first (CLUSTER_AUTHORIZATION_FAILED, as in Kafka).
	alice2 := newTLSClient(t, addr, c.client("alice"), kgo.DefaultProduceTopic("orders"), kgo.RequestRetries(0),
		kgo.RecordRetries(1), kgo.UnknownTopicRetries(0), kgo.DisableIdempotentWrite())
	if err := alice2.ProduceSync(ctx, &kgo.Record{Value: []byte("denied")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice produces after a DENY: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	anon := newTLSClient(t, addr, c.client(""), kgo.RequestRetries(0))
	if _, err := kadm.NewClient(anon).ListTopics(ctx); err == nil {
		t.Fatal("a client without a certificate was served by ssl.client.auth=required")
	}
}

// TestSSLReload: the keystore file replaced, reloadTLS (SIGHUP's action)
// makes new connections get the new certificate; a broken file keeps the
// old one.
func TestSSLReload(t *testing.T) {
	c := newTestCerts(t)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	over := map[string]string{"log.dirs": t.TempDir(), "admin.listener": "127.0.0.1:0"}
	props := sslProps(c)
	for i := 0; i+1 < len(props); i += 2 {
		over[props[i]] = props[i+1]
	}
	cfg, err := loadConfig(nil, over, logger)
	if err != nil {
		t.Fatal(err)
	}
	ncfg, err := cfg.nodeConfig(logger)
	if err != nil {
		t.Fatal(err)
	}
	b, err := node.Start(ncfg)
	if err != nil {
		t.Fatal(err)
	}
	defer stopBroker(t, b)
	served := func() string {
		conn, err := tls.Dial("tcp", b.ListenerAddr("SSL").String(), c.client(""))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if got := served(); got != "broker" {
		t.Fatalf("served %s", got)
	}
	cert, key := c.issue(pkix.Name{CommonName: "broker-renewed"}, true)
	c.write("broker.keystore.pem", cert+key)
	reloadTLS(ncfg.Listeners, logger)
	if got := served(); got != "broker-renewed" {
		t.Fatalf("after reload served %s", got)
	}
	c.write("broker.keystore.pem", "not a keystore")
	reloadTLS(ncfg.Listeners, slog.New(slog.DiscardHandler))
	if got := served(); got != "broker-renewed" {
		t.Fatalf("after a failed reload served %s", got)
	}
}

// TestSSLConfigRefused: what kzero cannot serve is refused at start with
// one clear line.
func TestSSLConfigRefused(t *testing.T) {
	c := newTestCerts(t)
	base := map[string]string{"log.dirs": t.TempDir(), "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"ssl.keystore.location": c.brokerK}
	for _, tc := range []struct {
		over map[string]string
		want string
	}{
		{map[string]string{"ssl.keystore.type": "JKS"}, "PEM stores only"},
		{map[string]string{"listener.name.ssl.ssl.truststore.type": "PKCS12"}, "ssl.truststore.type=PKCS12"},
		{map[string]string{"ssl.keystore.location": ""}, "no keystore"},
		{map[string]string{"ssl.keystore.location": filepath.Join(c.dir, "missing.pem")}, "missing.pem"},
		{map[string]string{"ssl.client.auth": "always"}, "ssl.client.auth"},
		{map[string]string{"inter.broker.listener.name": "SSL", "ssl.endpoint.identification.algorithm": "dns"}, "ssl.endpoint.identification.algorithm=dns"},
		{map[string]string{"inter.broker.listener.name": "SSL", "security.inter.broker.protocol": "SSL"}, "only one of"},
		{map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
			"sasl.jaas.config":           `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="a";`,
			"inter.broker.listener.name": "SASL_PLAINTEXT"}, "sasl.mechanism.inter.broker.protocol=GSSAPI"},
		{map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
			"sasl.jaas.config":           `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="a";`,
			"inter.broker.listener.name": "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol": "PLAIN"}, "names no username"},
		{map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
			"controller.listener.names": "CONTROLLER", "listener.security.protocol.map": "CONTROLLER:SASL_SSL"}, "sasl.mechanism.controller.protocol: GSSAPI"},
		{map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
			"controller.listener.names": "CONTROLLER", "listener.security.protocol.map": "CONTROLLER:SSL",
			"listener.name.controller.ssl.keystore.location": filepath.Join(c.dir, "none.pem")}, "none.pem"},
		{map[string]string{"listener.name.ssl.ssl.kernel.offload.enable": "maybe"}, "ssl.kernel.offload.enable"},
	} {
		over := map[string]string{}
		for k, v := range base {
			over[k] = v
		}
		for k, v := range tc.over {
			over[k] = v
		}
		_, err := loadConfig(nil, over, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %q", tc.over, err, tc.want)
		}
	}
}

// TestBinarySIGHUPReloadsCertificates: the kzero binary with an SSL
// listener reads its keystore again on SIGHUP (new connections get the
// renewed certificate), keeps serving, and still exits cleanly on SIGTERM.
func TestBinarySIGHUPReloadsCertificates(t *testing.T) {
	c := newTestCerts(t)
	// SSL first: the ready line names the first listener.
	p := startBinary(t, binaryArgs(t.TempDir(), "listeners=SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
		"inter.broker.listener.name=PLAINTEXT", "ssl.keystore.location="+c.brokerK)...)
	served := func() string {
		conn, err := tls.Dial("tcp", p.Addr, c.client(""))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if got := served(); got != "broker" {
		t.Fatalf("served %s", got)
	}
	cert, key := c.issue(pkix.Name{CommonName: "broker-renewed"}, true)
	c.write("broker.keystore.pem", cert+key)
	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !await.Poll(30*time.Second, func() bool { return strings.Contains(p.Stderr.String(), "TLS certificates reloaded") }) {
		t.Fatalf("no reload logged after SIGHUP; stderr:\n%s", p.Stderr)
	}
	if got := served(); got != "broker-renewed" {
		t.Fatalf("after SIGHUP served %s", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	produceConsume(t, ctx, p.Addr, "after-hup", 5, kgo.DialTLSConfig(c.client("")))
	p.Stop(t)
}
