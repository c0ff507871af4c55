package raftnet

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	pb "go.etcd.io/raft/v3/raftpb"

	"kzero/net/sasl"
)

// saslServer is a controller listener enabling PLAIN (user "ctl",
// password "ctl-pw"), SCRAM-SHA-256 (the same) and OAUTHBEARER
// (unsecured tokens).
func saslServer(t testing.TB) map[string]func() Exchange {
	m := sasl.ScramByName(sasl.ScramSHA256)
	cred, err := m.NewCredential("ctl-pw", 4096)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]func() Exchange{
		sasl.Plain: func() Exchange { return sasl.NewPlain(sasl.PlainUsers(map[string]string{"ctl": "ctl-pw"})) },
		sasl.ScramSHA256: func() Exchange {
			return sasl.NewScram(m, func(user string, _ *sasl.ScramMechanism) (sasl.Credential, bool) {
				return cred, user == "ctl"
			}, nil)
		},
		sasl.OAuthBearer: func() Exchange { return sasl.NewOAuthBearer(sasl.OAuthConfig{}) },
	}
}

// unsecuredToken is an unsecured JWS for sub, expiring in an hour.
func unsecuredToken(sub string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." +
		enc(fmt.Appendf(nil, `{"sub":%q,"exp":%d}`, sub, time.Now().Add(time.Hour).Unix())) + "."
}

func plainClient(pass string) ClientMechanism {
	return plain.Auth{User: "ctl", Pass: pass}.AsMechanism()
}

// TestSASL: voters and a learner on a SASL controller listener
// authenticate (PLAIN, SCRAM-SHA-256, OAUTHBEARER, and PLAIN inside TLS)
// and exchange messages; a node with a wrong password, a mechanism the
// listener does not enable, or no SASL at all never connects, and
// nothing it sends is delivered.
func TestSASL(t *testing.T) {
	noLeaks(t)
	srv := saslServer(t)
	learned := make(chan int32, 4)
	a := startNode(t, 1, func(c *Config) {
		c.SASL, c.ClientSASL = srv, plainClient("ctl-pw")
		c.OnLearner = func(id int32) { offer(learned, id) }
	})
	b := startNode(t, 2, func(c *Config) {
		c.SASL, c.ClientSASL = srv, scram.Auth{User: "ctl", Pass: "ctl-pw"}.AsSha256Mechanism()
	})
	connect(a, b)
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, 7)})
	if m := recv(t, b.got, "message after PLAIN"); m.GetIndex() != 7 || m.GetFrom() != RaftID(1) {
		t.Fatalf("got %v", m)
	}
	b.Send([]*pb.Message{msg(pb.MsgAppResp, 2, 1, 8)})
	if m := recv(t, a.got, "answer after SCRAM-SHA-256"); m.GetIndex() != 8 {
		t.Fatalf("got %v", m)
	}

	// A learner authenticates with OAUTHBEARER; its link carries
	// messages both ways.
	l := startNode(t, 5, func(c *Config) {
		c.Learner, c.Bootstrap = true, []string{a.addr()}
		c.ClientSASL = oauth.Auth{Token: unsecuredToken("ctl")}.AsMechanism()
	})
	if id := recv(t, learned, "learner after OAUTHBEARER"); id != 5 {
		t.Fatalf("learner %d", id)
	}
	a.Send([]*pb.Message{msg(pb.MsgApp, 1, 5, 12)})
	if m := recv(t, l.got, "message to the learner"); m.GetIndex() != 12 {
		t.Fatalf("learner got %v", m)
	}
	l.Send([]*pb.Message{msg(pb.MsgAppResp, 5, 1, 13)})
	if m := recv(t, a.got, "message from the learner"); m.GetIndex() != 13 {
		t.Fatalf("got %v", m)
	}
	l.Close()

	for _, tc := range []struct {
		name string
		id   int32
		edit func(*Config)
	}{
		{"wrong password", 3, func(c *Config) { c.ClientSASL = plainClient("nope") }},
		{"mechanism not enabled", 4, func(c *Config) {
			c.ClientSASL = scram.Auth{User: "ctl", Pass: "ctl-pw"}.AsSha512Mechanism()
		}},
		{"no SASL", 6, nil},
		{"expired token", 7, func(c *Config) {
			enc := base64.RawURLEncoding.EncodeToString
			c.ClientSASL = oauth.Auth{Token: enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(`{"sub":"ctl","exp":1}`)) + "."}.AsMechanism()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := startNode(t, tc.id, func(c *Config) {
				c.SASL = srv
				if tc.edit != nil {
					tc.edit(c)
				}
			})
			connect(a, b, x)
			x.Send([]*pb.Message{msg(pb.MsgApp, tc.id, 1, 9)})
			recv(t, x.unreachable, "x reporting a unreachable")
			if s := x.Stats(); s.Connects != 0 {
				t.Errorf("x connected without authenticating: %+v", s)
			}
			select {
			case m := <-a.got:
				t.Errorf("a delivered %v from a node that did not authenticate", m)
			default:
			}
			x.Close()
			connect(a, b)
			if !x.log.contains("refused") && !x.log.contains("closed the connection during SASL") {
				t.Errorf("x's log does not say it was refused")
			}
		})
	}
	// The refusals are counted and logged as their accept goroutines
	// end: Close waits for them.
	a.Close()
	if s := a.Stats(); s.AuthFailures < 4 || s.BadFrames != 0 {
		t.Errorf("a's stats after four refused nodes: %+v", s)
	}
	for _, want := range []string{"Invalid username or password", "Unsupported SASL mechanism SCRAM-SHA-512",
		"instead of SASL", "the token expired"} {
		if !a.log.contains(want) {
			t.Errorf("a's log lacks %q", want)
		}
	}
	if !a.log.contains("failed SASL authentication") {
		t.Errorf("a's log lacks the refusals")
	}

	// PLAIN inside TLS (SASL_SSL).
	ca := newTestCA(t)
	s1, c1 := ca.configs(t, "c")
	s2, c2 := ca.configs(t, "d")
	c := startNode(t, 1, func(c *Config) { c.TLS, c.ClientTLS, c.SASL, c.ClientSASL = s1, c1, srv, plainClient("ctl-pw") })
	d := startNode(t, 2, func(c *Config) { c.TLS, c.ClientTLS, c.SASL, c.ClientSASL = s2, c2, srv, plainClient("ctl-pw") })
	connect(c, d)
	c.Send([]*pb.Message{msg(pb.MsgApp, 1, 2, 20)})
	if m := recv(t, d.got, "message over SASL_SSL"); m.GetIndex() != 20 {
		t.Fatalf("got %v", m)
	}
}

// TestSASLRefusedDeliversNothing: a dialer that ignores the refusal of
// its authentication and goes on with a hello and messages on the same
// connection has nothing delivered: serve returns at the refusal.
func TestSASLRefusedDeliversNothing(t *testing.T) {
	hi := appendFrame(nil, kindHello, appendHello(nil, hello{version: Version, from: 1, to: 2, cluster: "c"}))
	m, _ := appendMessage(nil, msg(pb.MsgApp, 1, 2, 1), 1<<10)
	rest := slices.Concat(hi, m)
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"wrong password", slices.Concat(appendFrame(nil, kindAuth, appendAuthStart(nil, "PLAIN", []byte("\x00ctl\x00bad"))), rest), errAuth},
		{"unknown mechanism", slices.Concat(appendFrame(nil, kindAuth, appendAuthStart(nil, "GSSAPI", []byte("x"))), rest), errAuth},
		{"no SASL", rest, errAuth},
		{"bad auth frame", slices.Concat(appendFrame(nil, kindAuth, []byte{200, 'P'}), rest), errBadFrame},
		{"right password", slices.Concat(appendFrame(nil, kindAuth, appendAuthStart(nil, "PLAIN", []byte("\x00ctl\x00ctl-pw"))), rest), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			delivered := 0
			tr := New(Config{NodeID: 2, ClusterID: "c", Peers: map[int32]string{1: "unused"}, SASL: saslServer(t),
				Deliver: func(context.Context, *pb.Message) error { delivered++; return nil }, Logger: slog.New(slog.DiscardHandler)})
			var out bytes.Buffer
			err := tr.serve(struct {
				io.Reader
				io.Writer
			}{bytes.NewReader(tc.in), &out})
			if tc.want == nil {
				if !errors.Is(err, io.EOF) || delivered != 1 {
					t.Fatalf("serve: %v, %d delivered", err, delivered)
				}
				return
			}
			if !errors.Is(err, tc.want) || delivered != 0 {
				t.Fatalf("serve: %v (want %v), %d delivered", err, tc.want, delivered)
			}
			if kind, _, _ := newFrameReader(&out, maxAuthFrame).next(); tc.want == errAuth && kind != kindRefuse {
				t.Errorf("answered kind %d, not a refusal", kind)
			}
		})
	}
}

// FuzzSASL feeds arbitrary bytes to an inbound connection of a SASL
// controller listener: it never panics, and nothing is delivered unless
// the input authenticated.
func FuzzSASL(f *testing.F) {
	hi := appendFrame(nil, kindHello, appendHello(nil, hello{version: Version, from: 1, to: 2, cluster: "c"}))
	m, _ := appendMessage(nil, msg(pb.MsgApp, 1, 2, 1), 1<<10)
	f.Add(slices.Concat(appendFrame(nil, kindAuth, appendAuthStart(nil, "PLAIN", []byte("\x00ctl\x00ctl-pw"))), hi, m))
	f.Add(slices.Concat(appendFrame(nil, kindAuth, appendAuthStart(nil, "PLAIN", []byte("\x00ctl\x00bad"))), hi, m))
	f.Add(appendFrame(nil, kindAuth, appendAuthStart(nil, "SCRAM-SHA-256", []byte("n,,n=ctl,r=abc"))))
	f.Add(slices.Concat(appendFrame(nil, kindAuth, appendAuthStart(nil, "SCRAM-SHA-256", []byte("n,,n=ctl,r=abc"))),
		appendFrame(nil, kindAuth, []byte("c=biws,r=abc,p=AAAA"))))
	f.Add(appendFrame(nil, kindAuth, appendAuthStart(nil, "OAUTHBEARER", []byte("n,,\x01auth=Bearer x\x01\x01"))))
	f.Add(appendFrame(nil, kindAuth, []byte{0xff}))
	f.Add(hi)
	srv := saslServer(f)
	tr := New(Config{NodeID: 2, ClusterID: "c", Peers: map[int32]string{1: "unused"}, MaxMessageBytes: 1 << 10, SASL: srv,
		Logger: slog.New(slog.DiscardHandler)})
	f.Fuzz(func(t *testing.T, data []byte) {
		authed := false
		tr.cfg.SASL = map[string]func() Exchange{}
		for name, start := range srv {
			tr.cfg.SASL[name] = func() Exchange { return &watched{Exchange: start(), done: &authed} }
		}
		tr.cfg.Deliver = func(context.Context, *pb.Message) error {
			if !authed {
				t.Fatal("delivered a message before authentication")
			}
			return nil
		}
		err := tr.serve(struct {
			io.Reader
			io.Writer
		}{bytes.NewReader(data), io.Discard})
		if !errors.Is(err, errBadFrame) && !errors.Is(err, errAuth) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("serve: %v", err)
		}
	})
}

// watched is an Exchange that records its success.
type watched struct {
	Exchange
	done *bool
}

func (w *watched) Step(token []byte) ([]byte, bool, error) {
	resp, done, err := w.Exchange.Step(token)
	if done {
		*w.done = true
	}
	return resp, done, err
}

// TestSASLFailedAuthenticationDelay: a refused login is answered (and its
// connection closed) only after connection.failed.authentication.delay.ms.
func TestSASLFailedAuthenticationDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	tr := New(Config{NodeID: 2, ClusterID: "c", Peers: map[int32]string{1: "unused"}, SASL: saslServer(t),
		FailedAuthenticationDelay: delay, Logger: slog.New(slog.DiscardHandler)})
	defer tr.Close()
	var out bytes.Buffer
	start := time.Now()
	err := tr.serve(struct {
		io.Reader
		io.Writer
	}{bytes.NewReader(appendFrame(nil, kindAuth, appendAuthStart(nil, "PLAIN", []byte("\x00ctl\x00bad")))), &out})
	if took := time.Since(start); !errors.Is(err, errAuth) || took < delay {
		t.Fatalf("serve: %v after %v, want a refusal after at least %v", err, took, delay)
	}
	if kind, _, _ := newFrameReader(&out, maxAuthFrame).next(); kind != kindRefuse {
		t.Errorf("answered kind %d, not a refusal", kind)
	}
}
