package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// securityCase is one way in: a listener, with a client certificate or
// not, and a SASL mechanism with its user and password (or token).
type securityCase struct {
	name, listener string
	cert           bool
	mech           string // "" for SSL and PLAINTEXT
	user, pass     string
}

func (c securityCase) tls() bool { return c.listener == "SSL" || c.listener == "SASL_SSL" }

// securityCases: every security protocol, SSL with and without a client
// certificate, and each SASL mechanism over both SASL protocols.
func securityCases() []securityCase {
	cases := []securityCase{
		{name: "plaintext", listener: "PLAINTEXT"},
		{name: "ssl", listener: "SSL"},
		{name: "ssl-cert", listener: "SSL", cert: true},
	}
	for _, l := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
		for _, m := range []struct{ mech, user, pass string }{
			{"PLAIN", "alice", "alice-pw"},
			{"SCRAM-SHA-256", "bob", "bob-pw"},
			{"SCRAM-SHA-512", "dave", "dave-pw"},
			{"OAUTHBEARER", "erin", ""},
		} {
			cases = append(cases, securityCase{name: strings.ToLower(l + "-" + m.mech), listener: l, mech: m.mech, user: m.user, pass: m.pass})
		}
	}
	return cases
}

// TestSecurityMatrix: kgo, sarama and kcat each produce and consume over
// every case of securityCases on one broker: PLAINTEXT; SSL without and
// with a client certificate (ssl.client.auth=requested); SASL_PLAINTEXT
// and SASL_SSL with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER
// (unsecured tokens, Kafka's default validator).
func TestSecurityMatrix(t *testing.T) {
	certs := newTestCerts(t)
	plainJAAS := `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-pw";`
	oauthJAAS := `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`
	b := startTestBroker(t, t.TempDir(),
		"listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
		"inter.broker.listener.name", "PLAINTEXT",
		"ssl.keystore.type", "PEM",
		"ssl.keystore.location", certs.brokerK,
		"ssl.truststore.type", "PEM",
		"ssl.truststore.location", certs.caFile,
		"ssl.client.auth", "requested",
		"sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config", plainJAAS,
		"listener.name.sasl_ssl.plain.sasl.jaas.config", plainJAAS,
		"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config", oauthJAAS,
		"listener.name.sasl_ssl.oauthbearer.sasl.jaas.config", oauthJAAS,
		"connection.failed.authentication.delay.ms", "0",
	)
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(newClient(t, b)).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "bob-pw"},
		{User: "dave", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "dave-pw"},
	}); err != nil {
		t.Fatal(err)
	}
	kcat, kcatErr := exec.LookPath("kcat")
	clientCert, clientKey := certs.issue(pkix.Name{CommonName: "kcat"}, false)
	certFile, keyFile := certs.write("matrix.pem", clientCert), certs.write("matrix.key", clientKey)
	token := unsecuredToken(fmt.Sprintf(`{"sub":"erin","iat":%d,"exp":%d}`, time.Now().Unix(), time.Now().Add(time.Hour).Unix()))

	for _, c := range securityCases() {
		addr := b.ListenerAddr(c.listener).String()
		var tlsCfg *tls.Config
		if c.tls() {
			cn := ""
			if c.cert {
				cn = "matrix"
			}
			tlsCfg = certs.client(cn)
		}
		t.Run("kgo/"+c.name, func(t *testing.T) {
			var opts []kgo.Opt
			if tlsCfg != nil {
				opts = append(opts, kgo.DialTLSConfig(tlsCfg))
			}
			if c.mech != "" {
				opts = append(opts, kgo.SASL(kgoMechanism(c, token)))
			}
			produceConsume(t, ctx, addr, "kgo-"+c.name, 10, opts...)
		})
		t.Run("sarama/"+c.name, func(t *testing.T) {
			cfg := sarama.NewConfig()
			if c.mech != "" {
				cfg = saramaSASLConfig(saramaMechanism(c.mech), c.user, c.pass, sarama.SASLHandshakeV1)
				if c.mech == "OAUTHBEARER" {
					cfg.Net.SASL.TokenProvider = saramaToken(token)
				}
			}
			cfg.Version = sarama.V4_0_0_0
			cfg.Producer.Return.Successes = true
			if tlsCfg != nil {
				cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, tlsCfg
			}
			saramaTopicRoundTrip(t, ctx, addr, "sarama-"+c.name, cfg)
		})
		t.Run("kcat/"+c.name, func(t *testing.T) {
			if kcatErr != nil {
				t.Skip("kcat not installed (.ci/run installs it)")
			}
			args := []string{"-b", addr, "-X", "security.protocol=" + strings.ToLower(c.listener)}
			if c.tls() {
				args = append(args, "-X", "ssl.ca.location="+certs.caFile)
			}
			if c.cert {
				args = append(args, "-X", "ssl.certificate.location="+certFile, "-X", "ssl.key.location="+keyFile)
			}
			switch c.mech {
			case "":
			case "OAUTHBEARER":
				// librdkafka makes its own unsecured token for the principal.
				args = append(args, "-X", "sasl.mechanism=OAUTHBEARER", "-X", "enable.sasl.oauthbearer.unsecure.jwt=true",
					"-X", "sasl.oauthbearer.config=principal="+c.user)
			default:
				args = append(args, "-X", "sasl.mechanism="+c.mech, "-X", "sasl.username="+c.user, "-X", "sasl.password="+c.pass)
			}
			kcatRoundTrip(t, ctx, kcat, args, "kcat-"+c.name, 20)
		})
	}
}

func kgoMechanism(c securityCase, token string) sasl.Mechanism {
	switch c.mech {
	case "PLAIN":
		return plain.Auth{User: c.user, Pass: c.pass}.AsMechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: c.user, Pass: c.pass}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		return scram.Auth{User: c.user, Pass: c.pass}.AsSha512Mechanism()
	default:
		return oauth.Auth{Token: token}.AsMechanism()
	}
}

func saramaMechanism(mech string) string {
	switch mech {
	case "PLAIN":
		return sarama.SASLTypePlaintext
	case "SCRAM-SHA-256":
		return sarama.SASLTypeSCRAMSHA256
	case "SCRAM-SHA-512":
		return sarama.SASLTypeSCRAMSHA512
	default:
		return sarama.SASLTypeOAuth
	}
}

// saramaToken is sarama's OAUTHBEARER token source: one fixed token.
type saramaToken string

func (s saramaToken) Token() (*sarama.AccessToken, error) {
	return &sarama.AccessToken{Token: string(s)}, nil
}

// saramaTopicRoundTrip produces 10 records to a new topic with sarama and reads
// them back with sarama's consumer.
func saramaTopicRoundTrip(t *testing.T, ctx context.Context, addr, topic string, cfg *sarama.Config) {
	t.Helper()
	admin, err := sarama.NewClusterAdmin([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("admin: %v", err)
	}
	defer admin.Close()
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	p, err := sarama.NewSyncProducer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	for i := range 10 {
		if _, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil || off != int64(i) {
			p.Close()
			t.Fatalf("send %d: offset %d, %v", i, off, err)
		}
	}
	p.Close()
	cons, err := sarama.NewConsumer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	for i := range 10 {
		select {
		case m := <-pc.Messages():
			if string(m.Value) != fmt.Sprint(i) {
				t.Fatalf("record %d: %q", i, m.Value)
			}
		case <-ctx.Done():
			t.Fatalf("consumed %d of 10", i)
		}
	}
}

// kcatRoundTrip produces n keyed records with kcat -P (acks=all) and
// reads them back with kcat -C, over the connection args describe.
func kcatRoundTrip(t *testing.T, ctx context.Context, kcat string, args []string, topic string, n int) {
	t.Helper()
	var in bytes.Buffer
	var want []string
	for i := range n {
		line := fmt.Sprintf("k%d:value-%d", i, i)
		in.WriteString(line + "\n")
		want = append(want, line)
	}
	cmd := exec.CommandContext(ctx, kcat, append(args, "-P", "-t", topic, "-K:", "-X", "topic.request.required.acks=-1")...)
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	var stderr bytes.Buffer
	cmd = exec.CommandContext(ctx, kcat, append(args, "-C", "-t", topic, "-e", "-f", "%k:%s\n")...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat -C: %v\n%s", err, stderr.Bytes())
	}
	if got := strings.TrimSpace(string(out)); got != strings.Join(want, "\n") {
		t.Fatalf("kcat consumed %q...\n%s", got[:min(len(got), 200)], stderr.Bytes())
	}
}
