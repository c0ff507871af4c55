package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"kzero/kzerotest/await"
	"kzero/net/wire"
	"kzero/node"
)

// saslProps configure a broker with a PLAINTEXT and a SASL_PLAINTEXT
// listener serving PLAIN (alice, from the listener's JAAS config) and both
// SCRAM mechanisms.
func saslProps() []string {
	return []string{
		"listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-pw";`,
		"inter.broker.listener.name", "PLAINTEXT",
		"connection.failed.authentication.delay.ms", "0",
	}
}

func saslAddr(b *node.Node) string { return b.ListenerAddr("SASL_PLAINTEXT").String() }

// roundTrip creates a topic, produces a record and consumes it back with
// a client authenticating with mech: the whole path (metadata, produce,
// fetch) over the SASL listener.
func saslRoundTrip(t *testing.T, ctx context.Context, b *node.Node, mech sasl.Mechanism, topic string) {
	t.Helper()
	cl := newSASLClient(t, b, mech, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	adm := kadm.NewClient(cl)
	// Metadata names the SASL listener's address, not the PLAINTEXT one.
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatalf("%s: metadata: %v", mech.Name(), err)
	}
	if len(md.Brokers) != 1 || net.JoinHostPort(md.Brokers[0].Host, itoa(md.Brokers[0].Port)) != saslAddr(b) {
		t.Fatalf("%s: brokers %+v, want %s", mech.Name(), md.Brokers, saslAddr(b))
	}
	// So do DescribeCluster and FindCoordinator.
	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
	if err != nil || len(dc.Brokers) != 1 || net.JoinHostPort(dc.Brokers[0].Host, itoa(dc.Brokers[0].Port)) != saslAddr(b) {
		t.Fatalf("%s: DescribeCluster %+v, %v", mech.Name(), dc, err)
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "g-" + topic
	var fcr *kmsg.FindCoordinatorResponse
	// The first asks create __consumer_offsets: COORDINATOR_NOT_AVAILABLE
	// until it is led, which clients retry.
	await.PollCtx(ctx, func() bool {
		fcr, err = fc.RequestWith(ctx, cl)
		return err != nil || fcr.ErrorCode != kerr.CoordinatorNotAvailable.Code
	})
	if err != nil || fcr.ErrorCode != 0 || net.JoinHostPort(fcr.Host, itoa(fcr.Port)) != saslAddr(b) {
		t.Fatalf("%s: FindCoordinator %+v, %v", mech.Name(), fcr, err)
	}
	createTopic(t, ctx, cl, topic, 1, nil)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(mech.Name())}).FirstErr(); err != nil {
		t.Fatalf("%s: produce: %v", mech.Name(), err)
	}
	recs := consumeN(t, ctx, cl, 1)
	if string(recs[0].Value) != mech.Name() {
		t.Fatalf("%s: consumed %q", mech.Name(), recs[0].Value)
	}
}

func itoa(p int32) string { return strconv.Itoa(int(p)) }

func newSASLClient(t *testing.T, b *node.Node, mech sasl.Mechanism, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(saslAddr(b)), kgo.SASL(mech)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestSASLWithFranzGo: PLAIN from the JAAS config, SCRAM credentials made
// with kadm AlterUserScramCredentials over the PLAINTEXT listener, each
// mechanism's round trip over the SASL listener, wrong passwords refused
// with SASL_AUTHENTICATION_FAILED, credentials described and refused as
// Kafka does, and still there after a restart.
func TestSASLWithFranzGo(t *testing.T) {
	dir := t.TempDir()
	b := startTestBroker(t, dir, saslProps()...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	adm := kadm.NewClient(newClient(t, b))
	altered, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "bob-pw"},
		{User: "carol", Mechanism: kadm.ScramSha512, Iterations: 8192, Password: "carol-pw"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range altered {
		if a.Err != nil {
			t.Fatalf("alter %s: %v %s", a.User, a.Err, a.ErrMessage)
		}
	}

	saslRoundTrip(t, ctx, b, plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism(), "plain")
	saslRoundTrip(t, ctx, b, scram.Auth{User: "bob", Pass: "bob-pw"}.AsSha256Mechanism(), "scram256")
	saslRoundTrip(t, ctx, b, scram.Auth{User: "carol", Pass: "carol-pw"}.AsSha512Mechanism(), "scram512")

	for _, mech := range []sasl.Mechanism{
		plain.Auth{User: "alice", Pass: "nope"}.AsMechanism(),
		plain.Auth{User: "mallory", Pass: "alice-pw"}.AsMechanism(),
		scram.Auth{User: "bob", Pass: "nope"}.AsSha256Mechanism(),
		scram.Auth{User: "bob", Pass: "bob-pw"}.AsSha512Mechanism(), // no SHA-512 credential
		scram.Auth{User: "nobody", Pass: "x"}.AsSha256Mechanism(),
	} {
		cl := newSASLClient(t, b, mech, kgo.RequestRetries(0))
		err := cl.Ping(ctx)
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s wrong credentials: err %v, want SASL_AUTHENTICATION_FAILED", mech.Name(), err)
		}
		cl.Close()
	}

	described, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := described["bob"]; d.Err != nil || len(d.CredInfos) != 1 || d.CredInfos[0].Mechanism != kadm.ScramSha256 || d.CredInfos[0].Iterations != 4096 {
		t.Errorf("bob described as %+v", d)
	}
	if d := described["carol"]; d.Err != nil || len(d.CredInfos) != 1 || d.CredInfos[0].Iterations != 8192 {
		t.Errorf("carol described as %+v", d)
	}
	if d, err := adm.DescribeUserSCRAMs(ctx, "nobody"); err != nil || !errors.Is(d["nobody"].Err, kerr.ResourceNotFound) {
		t.Errorf("nobody described as %+v, %v", d, err)
	}

	// Kafka's refusals.
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	for _, u := range []struct {
		name       string
		mech       int8
		iterations int32
	}{{"few", 1, 4095}, {"many", 1, 16385}, {"", 1, 4096}, {"mech", 3, 4096}, {"twice", 1, 4096}, {"twice", 2, 4096}} {
		up := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		up.Name, up.Mechanism, up.Iterations, up.Salt, up.SaltedPassword = u.name, u.mech, u.iterations, []byte("salt"), make([]byte, 32)
		req.Upsertions = append(req.Upsertions, up)
	}
	del := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	del.Name, del.Mechanism = "carol", 1 // carol has SHA-512 only
	req.Deletions = append(req.Deletions, del)
	resp, err := req.RequestWith(ctx, newClient(t, b))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*kerr.Error{"few": kerr.UnacceptableCredential, "many": kerr.UnacceptableCredential, "": kerr.UnacceptableCredential,
		"mech": kerr.UnsupportedSaslMechanism, "twice": kerr.DuplicateResource, "carol": kerr.ResourceNotFound}
	if len(resp.Results) != len(want) {
		t.Fatalf("%d results: %+v", len(resp.Results), resp.Results)
	}
	for _, r := range resp.Results {
		if r.ErrorCode != want[r.User].Code {
			t.Errorf("user %q: error %d, want %s", r.User, r.ErrorCode, want[r.User])
		}
	}

	// Change bob's password: the new one logs in, the old one no more.
	if _, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "new-pw"}}); err != nil {
		t.Fatal(err)
	}
	if err := newSASLClient(t, b, scram.Auth{User: "bob", Pass: "new-pw"}.AsSha256Mechanism()).Ping(ctx); err != nil {
		t.Fatalf("new password: %v", err)
	}
	if err := newSASLClient(t, b, scram.Auth{User: "bob", Pass: "bob-pw"}.AsSha256Mechanism(), kgo.RequestRetries(0)).Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("old password: %v", err)
	}

	// Credentials are metadata: they survive a restart.
	stopBroker(t, b)
	b = startTestBroker(t, dir, saslProps()...)
	defer stopBroker(t, b)
	if err := newSASLClient(t, b, scram.Auth{User: "bob", Pass: "new-pw"}.AsSha256Mechanism()).Ping(ctx); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if err := newSASLClient(t, b, scram.Auth{User: "carol", Pass: "carol-pw"}.AsSha512Mechanism()).Ping(ctx); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

// saslConn is a Kafka connection without a client library.
type saslConn struct {
	t    *testing.T
	c    net.Conn
	corr int32
}

func dialSASL(t *testing.T, addr string) *saslConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &saslConn{t: t, c: c}
}

// send writes req; read returns the response's body, or the error that
// ended the connection.
func (r *saslConn) send(req kmsg.Request) {
	r.t.Helper()
	r.corr++
	h := wire.RequestHeader{APIKey: req.Key(), APIVersion: req.GetVersion(), CorrelationID: r.corr, ClientID: []byte("raw")}
	h.Version, _ = wire.RequestHeaderVersion(h.APIKey, h.APIVersion)
	b := wire.AppendRequestHeader(make([]byte, 4), &h)
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

func (r *saslConn) read(resp kmsg.Response, flexibleHeader bool) error {
	var size [4]byte
	if _, err := io.ReadFull(r.c, size[:]); err != nil {
		return err
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(r.c, b); err != nil {
		return err
	}
	b = b[4:]
	if flexibleHeader {
		b = b[1:]
	}
	return resp.ReadFrom(b)
}

// expectClosed waits for the broker to close the connection, reading
// (and failing on) nothing.
func (r *saslConn) expectClosed() {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var b [1]byte
	if n, err := r.c.Read(b[:]); err != io.EOF {
		r.t.Fatalf("read %d bytes, err %v: want the connection closed", n, err)
	}
}

// TestSASLBeforeAuthentication: on the SASL listener ApiVersions is
// answered, anything else but the SASL requests closes the connection,
// and an unknown mechanism is answered UNSUPPORTED_SASL_MECHANISM with
// the enabled list, then the connection closes. On the PLAINTEXT listener
// SaslHandshake is ILLEGAL_SASL_STATE.
func TestSASLBeforeAuthentication(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), saslProps()...)
	defer stopBroker(t, b)

	c := dialSASL(t, saslAddr(b))
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "raw", "1"
	c.send(av)
	avr := kmsg.NewPtrApiVersionsResponse()
	avr.Version = 3
	if err := c.read(avr, false); err != nil || avr.ErrorCode != 0 {
		t.Fatalf("ApiVersions: %v, code %d", err, avr.ErrorCode)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	c.send(md)
	c.expectClosed()

	// SaslAuthenticate before the handshake closes too.
	c = dialSASL(t, saslAddr(b))
	sa := kmsg.NewPtrSASLAuthenticateRequest()
	sa.Version = 2
	c.send(sa)
	c.expectClosed()

	// After a v1 handshake, only SaslAuthenticate.
	c = dialSASL(t, saslAddr(b))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	c.send(hs)
	hsr := kmsg.NewPtrSASLHandshakeResponse()
	hsr.Version = 1
	if err := c.read(hsr, false); err != nil || hsr.ErrorCode != 0 {
		t.Fatalf("handshake: %v, code %d", err, hsr.ErrorCode)
	}
	c.send(md)
	c.expectClosed()

	c = dialSASL(t, saslAddr(b))
	hs.Mechanism = "GSSAPI"
	c.send(hs)
	if err := c.read(hsr, false); err != nil || hsr.ErrorCode != kerr.UnsupportedSaslMechanism.Code ||
		!slices.Equal(hsr.SupportedMechanisms, []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}) {
		t.Fatalf("GSSAPI handshake: %v, %+v", err, hsr)
	}
	c.expectClosed()

	// A wrong password: SASL_AUTHENTICATION_FAILED with Kafka's message,
	// then the close.
	c = dialSASL(t, saslAddr(b))
	hs.Mechanism = "PLAIN"
	c.send(hs)
	if err := c.read(hsr, false); err != nil || hsr.ErrorCode != 0 {
		t.Fatalf("handshake: %v, code %d", err, hsr.ErrorCode)
	}
	sa.SASLAuthBytes = []byte("\x00alice\x00wrong")
	c.send(sa)
	sar := kmsg.NewPtrSASLAuthenticateResponse()
	sar.Version = 2
	if err := c.read(sar, true); err != nil || sar.ErrorCode != kerr.SaslAuthenticationFailed.Code ||
		sar.ErrorMessage == nil || *sar.ErrorMessage != "Authentication failed: Invalid username or password" {
		t.Fatalf("wrong password: %v, %+v", err, sar)
	}
	c.expectClosed()

	// Before authentication a frame above sasl.server.max.receive.size
	// (524288) closes the connection as soon as its size is read.
	c = dialSASL(t, saslAddr(b))
	if _, err := c.c.Write(binary.BigEndian.AppendUint32(nil, 524289)); err != nil {
		t.Fatal(err)
	}
	c.expectClosed()

	// The PLAINTEXT listener has no SASL.
	c = dialSASL(t, b.ListenerAddr("PLAINTEXT").String())
	c.send(hs)
	if err := c.read(hsr, false); err != nil || hsr.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("handshake on PLAINTEXT: %v, %+v", err, hsr)
	}
}

// TestSASLWithSarama: sarama with PLAIN and SCRAM, over the KIP-152 path
// (SaslHandshake v1, SaslAuthenticate) and the legacy one (SaslHandshake
// v0, then raw tokens), produces and reads back; a wrong password fails.
// Sarama's SCRAM client is franz-go's SCRAM session behind sarama's
// interface.
func TestSASLWithSarama(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), saslProps()...)
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b))
	if _, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "bob-pw"},
		{User: "dave", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "dave-pw"},
	}); err != nil {
		t.Fatal(err)
	}
	createTopic(t, ctx, newClient(t, b), "sarama-sasl", 1, nil)

	cases := []struct {
		name, mech, user, pass string
	}{
		{"plain", sarama.SASLTypePlaintext, "alice", "alice-pw"},
		{"scram256", sarama.SASLTypeSCRAMSHA256, "bob", "bob-pw"},
		{"scram512", sarama.SASLTypeSCRAMSHA512, "dave", "dave-pw"},
	}
	n := 0
	for _, c := range cases {
		for _, v := range []int16{sarama.SASLHandshakeV1, sarama.SASLHandshakeV0} {
			cfg := saramaSASLConfig(c.mech, c.user, c.pass, v)
			p, err := sarama.NewSyncProducer([]string{saslAddr(b)}, cfg)
			if err != nil {
				t.Fatalf("%s v%d: %v", c.name, v, err)
			}
			_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: "sarama-sasl", Value: sarama.StringEncoder(c.name)})
			p.Close()
			if err != nil || off != int64(n) {
				t.Fatalf("%s v%d: offset %d, err %v", c.name, v, off, err)
			}
			n++

			cfg = saramaSASLConfig(c.mech, c.user, "wrong", v)
			cfg.Metadata.Retry.Max = 0
			if p, err := sarama.NewSyncProducer([]string{saslAddr(b)}, cfg); err == nil {
				p.Close()
				t.Fatalf("%s v%d: wrong password accepted", c.name, v)
			}
		}
	}
	// The records are there, read over the SASL listener by sarama.
	cfg := saramaSASLConfig(sarama.SASLTypeSCRAMSHA256, "bob", "bob-pw", sarama.SASLHandshakeV1)
	cons, err := sarama.NewConsumer([]string{saslAddr(b)}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition("sarama-sasl", 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	for i := 0; i < n; i++ {
		select {
		case m := <-pc.Messages():
			if want := cases[i/2].name; string(m.Value) != want {
				t.Fatalf("record %d: %q, want %q", i, m.Value, want)
			}
		case <-ctx.Done():
			t.Fatalf("consumed %d of %d", i, n)
		}
	}
}

func saramaSASLConfig(mech, user, pass string, version int16) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Mechanism = sarama.SASLMechanism(mech)
	cfg.Net.SASL.User, cfg.Net.SASL.Password = user, pass
	cfg.Net.SASL.Version = version
	cfg.Net.SASL.Handshake = true
	if version == sarama.SASLHandshakeV0 {
		cfg.ApiVersionsRequest = false // sarama's rule for the v0 exchange
	}
	switch mech {
	case sarama.SASLTypeSCRAMSHA256:
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &saramaSCRAM{sha512: false} }
	case sarama.SASLTypeSCRAMSHA512:
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &saramaSCRAM{sha512: true} }
	}
	return cfg
}

// saramaSCRAM is sarama's SCRAMClient over franz-go's SCRAM client.
type saramaSCRAM struct {
	sha512  bool
	auth    scram.Auth
	session sasl.Session
	done    bool
}

func (s *saramaSCRAM) Begin(user, pass, authzID string) error {
	s.auth = scram.Auth{User: user, Pass: pass, Zid: authzID}
	return nil
}

func (s *saramaSCRAM) Step(challenge string) (string, error) {
	if s.session == nil {
		m := s.auth.AsSha256Mechanism()
		if s.sha512 {
			m = s.auth.AsSha512Mechanism()
		}
		sess, first, err := m.Authenticate(context.Background(), "")
		s.session = sess
		return string(first), err
	}
	done, resp, err := s.session.Challenge([]byte(challenge))
	s.done = done
	return string(resp), err
}

func (s *saramaSCRAM) Done() bool { return s.done }

// authenticate runs a PLAIN handshake and authenticate on c and returns
// the SaslAuthenticate response.
func (c *saslConn) authenticate(user, pass string) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	return c.authenticateMech("PLAIN", []byte("\x00"+user+"\x00"+pass))
}

// authenticateMech runs a handshake for mech and one SaslAuthenticate
// with token.
func (c *saslConn) authenticateMech(mech string, token []byte) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, mech
	c.send(hs)
	hsr := kmsg.NewPtrSASLHandshakeResponse()
	hsr.Version = 1
	if err := c.read(hsr, false); err != nil || hsr.ErrorCode != 0 {
		c.t.Fatalf("handshake: %v, code %d", err, hsr.ErrorCode)
	}
	sa := kmsg.NewPtrSASLAuthenticateRequest()
	sa.Version, sa.SASLAuthBytes = 2, token
	c.send(sa)
	sar := kmsg.NewPtrSASLAuthenticateResponse()
	sar.Version = 2
	if err := c.read(sar, true); err != nil {
		c.t.Fatalf("authenticate: %v", err)
	}
	return sar
}

// metadataOK sends a Metadata request and reads its answer.
func (c *saslConn) metadataOK() {
	c.t.Helper()
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	c.send(md)
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	if err := c.read(resp, true); err != nil {
		c.t.Fatalf("metadata: %v", err)
	}
}

// TestSASLReauthentication (KIP-368): with connections.max.reauth.ms the
// answer carries the session lifetime; the connection re-authenticates
// as the same principal and goes on; a different principal is refused and
// closes it; an expired session is closed at its next request.
func TestSASLReauthentication(t *testing.T) {
	props := append(saslProps(), "listener.name.sasl_plaintext.plain.sasl.jaas.config",
		`org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-pw" user_eve="eve-pw";`)
	b := startTestBroker(t, t.TempDir(), append(props, "connections.max.reauth.ms", "60000")...)
	c := dialSASL(t, saslAddr(b))
	if r := c.authenticate("alice", "alice-pw"); r.ErrorCode != 0 || r.SessionLifetimeMillis != 60000 {
		t.Fatalf("first authentication: %+v", r)
	}
	c.metadataOK()
	if r := c.authenticate("alice", "alice-pw"); r.ErrorCode != 0 || r.SessionLifetimeMillis != 60000 {
		t.Fatalf("re-authentication: %+v", r)
	}
	c.metadataOK()
	if r := c.authenticate("eve", "eve-pw"); r.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("re-authentication as another principal: %+v", r)
	}
	c.expectClosed()
	stopBroker(t, b)

	// A 1 ms session: once that has passed (the broker set the expiry
	// before it answered), the next request closes the connection.
	b = startTestBroker(t, t.TempDir(), append(props, "connections.max.reauth.ms", "1")...)
	defer stopBroker(t, b)
	c = dialSASL(t, saslAddr(b))
	if r := c.authenticate("alice", "alice-pw"); r.ErrorCode != 0 || r.SessionLifetimeMillis != 1 {
		t.Fatalf("authentication: %+v", r)
	}
	time.Sleep(2 * time.Millisecond) // pacing: the session's lifetime, not synchronisation
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	c.send(md)
	c.expectClosed()
}

// unsecuredToken is an unsigned JWS for OAUTHBEARER's unsecured validator.
func unsecuredToken(claims string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString([]byte(claims)) + "."
}

// TestSASLOAuthBearer: franz-go's OAUTHBEARER client with an unsecured
// token (Kafka's default validator, the required scope from the JAAS
// options) goes the whole round trip; an expired token and one without the
// scope are refused with SASL_AUTHENTICATION_FAILED.
func TestSASLOAuthBearer(t *testing.T) {
	props := append(saslProps(),
		"sasl.enabled.mechanisms", "OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config",
		`org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorRequiredScope="kafka";`)
	b := startTestBroker(t, t.TempDir(), props...)
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	exp := time.Now().Add(time.Hour).Unix()
	good := unsecuredToken(fmt.Sprintf(`{"sub":"alice","exp":%d,"scope":"kafka"}`, exp))
	saslRoundTrip(t, ctx, b, oauth.Auth{Token: good}.AsMechanism(), "oauth")
	for name, tok := range map[string]string{
		"expired":  unsecuredToken(`{"sub":"alice","exp":1000,"scope":"kafka"}`),
		"no scope": unsecuredToken(fmt.Sprintf(`{"sub":"alice","exp":%d}`, exp)),
	} {
		err := newSASLClient(t, b, oauth.Auth{Token: tok}.AsMechanism(), kgo.RequestRetries(0)).Ping(ctx)
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s token: %v, want SASL_AUTHENTICATION_FAILED", name, err)
		}
	}
}
