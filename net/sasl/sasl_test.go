package sasl

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	kscram "github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestScramWithFranzGo runs franz-go's SCRAM client (an independent
// implementation) against the server exchange, for both hashes, and
// checks that a wrong password fails with Kafka's generic message.
func TestScramWithFranzGo(t *testing.T) {
	for _, m := range []*ScramMechanism{SHA256, SHA512} {
		t.Run(m.Name, func(t *testing.T) {
			cred, err := m.NewCredential("s3cret", MinIterations)
			if err != nil {
				t.Fatal(err)
			}
			lookup := func(user string, mm *ScramMechanism) (Credential, bool) {
				return cred, user == "ali,ce=" && mm == m
			}
			run := func(pass string) (string, error) {
				auth := kscram.Auth{User: "ali,ce=", Pass: pass}
				mech := auth.AsSha256Mechanism()
				if m == SHA512 {
					mech = auth.AsSha512Mechanism()
				}
				sess, tok, err := mech.Authenticate(context.Background(), "host")
				if err != nil {
					return "", err
				}
				x := NewScram(m, lookup, nil)
				for {
					resp, done, err := x.Step(tok)
					if err != nil {
						return "", err
					}
					cdone, next, err := sess.Challenge(resp)
					if err != nil {
						return "", err
					}
					if done {
						if !cdone {
							t.Fatal("server done, client not")
						}
						return x.User(), nil
					}
					tok = next
				}
			}
			user, err := run("s3cret")
			if err != nil || user != "ali,ce=" {
				t.Fatalf("login: user %q, err %v", user, err)
			}
			_, err = run("wrong")
			if err == nil {
				t.Fatal("wrong password accepted")
			}
			if msg := FailureMessage(m.Name, err); !strings.Contains(msg, "invalid credentials with SASL mechanism "+m.Name) {
				t.Fatalf("message %q", msg)
			}
		})
	}
}

func TestScramRefusesLowIterationsAndUnknownUsers(t *testing.T) {
	cred, _ := SHA256.NewCredential("pw", MinIterations)
	low := cred
	low.Iterations = MinIterations - 1
	for name, lookup := range map[string]Credentials{
		"unknown": func(string, *ScramMechanism) (Credential, bool) { return Credential{}, false },
		"low":     func(string, *ScramMechanism) (Credential, bool) { return low, true },
	} {
		x := NewScram(SHA256, lookup, nil)
		if _, _, err := x.Step([]byte("n,,n=u,r=abc")); err == nil {
			t.Errorf("%s: first message accepted", name)
		}
	}
}

func TestPlain(t *testing.T) {
	check := PlainUsers(map[string]string{"alice": "pw"})
	for _, c := range []struct {
		msg  string
		user string
		err  string
	}{
		{"\x00alice\x00pw", "alice", ""},
		{"alice\x00alice\x00pw", "alice", ""},
		{"\x00alice\x00bad", "", "Authentication failed: Invalid username or password"},
		{"\x00bob\x00pw", "", "Authentication failed: Invalid username or password"},
		{"\x00\x00pw", "", "Authentication failed: username not specified"},
		{"\x00alice\x00", "", "Authentication failed: password not specified"},
		{"bob\x00alice\x00pw", "", "Authentication failed: Client requested an authorization id that is different from username"},
		{"alice", "", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"},
		{"a\x00b\x00c\x00d\x00e", "", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"},
	} {
		x := NewPlain(check)
		_, done, err := x.Step([]byte(c.msg))
		if c.err == "" {
			if err != nil || !done || x.User() != c.user {
				t.Errorf("%q: done %v user %q err %v", c.msg, done, x.User(), err)
			}
			continue
		}
		var ae *AuthError
		if !errors.As(err, &ae) || ae.Msg != c.err {
			t.Errorf("%q: err %v, want %q", c.msg, err, c.err)
		}
	}
}

func TestParseJAAS(t *testing.T) {
	mods, err := ParseJAAS(`org.apache.kafka.common.security.plain.PlainLoginModule required
		username="admin" password="admin-secret" // comment
		user_admin="admin-secret" /* another */ user_alice='al"ice;pw';`)
	if err != nil {
		t.Fatal(err)
	}
	users := PlainUsersFromJAAS(mods)
	if len(users) != 2 || users["admin"] != "admin-secret" || users["alice"] != `al"ice;pw` {
		t.Fatalf("users %v", users)
	}
	for _, bad := range []string{
		"",
		"org.Foo",
		"org.Foo bogus;",
		"org.Foo required user_a=;",
		"org.Foo required user_a=\"x\"",
		"org.Foo required user_a \"x\";",
		"org.Foo required user_a=\"x;",
	} {
		if _, err := ParseJAAS(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseClientFirst(t *testing.T) {
	cf, err := ParseClientFirst([]byte("n,a=bob,n=b=2Co=3Db,r=abc,tokenauth=true"))
	if err != nil {
		t.Fatal(err)
	}
	if cf.AuthzID != "bob" || cf.User != "b,o=b" || cf.Nonce != "abc" || cf.Extensions["tokenauth"] != "true" ||
		cf.Bare != "n=b=2Co=3Db,r=abc,tokenauth=true" {
		t.Fatalf("%+v", cf)
	}
	for _, bad := range []string{"", "y,,n=a,r=b", "n,,n=a", "n,,n=a=b,r=x", "n,,n=,r=x", "n,,n=a,r=x y", "n,,n=a,r=x,1=2"} {
		if _, err := ParseClientFirst([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestScramLibrdkafkaNonce: librdkafka's client-final-message repeats its
// own nonce before the server's whole nonce ("r=" cnonce + snonce, where
// snonce already starts with cnonce). Kafka accepts a nonce that ends with
// the server's, so kcat and every librdkafka client can log in; a nonce
// that does not end with it is still refused.
func TestScramLibrdkafkaNonce(t *testing.T) {
	m := SHA256
	salt := []byte("0123456789abcdef")
	salted, err := m.SaltedPassword("pw", salt, MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	cred := m.CredentialFromSalted(salted, salt, MinIterations)
	lookup := func(string, *ScramMechanism) (Credential, bool) { return cred, true }
	login := func(nonceFor func(cnonce, snonce string) string) error {
		const cnonce = "bQnpLN2Lfjp~Kt`.=0}2-ig06IqvYeUE"
		x := NewScram(m, lookup, nil)
		first := "n=bob,r=" + cnonce
		resp, _, err := x.Step([]byte("n,," + first))
		if err != nil {
			return err
		}
		serverFirst := string(resp)
		snonce := strings.TrimPrefix(strings.Split(serverFirst, ",")[0], "r=")
		withoutProof := "c=biws,r=" + nonceFor(cnonce, snonce)
		// The client's proof, over what it sends (RFC 5802 section 3).
		clientKey := m.hmac(salted, []byte("Client Key"))
		h := m.hash()
		h.Write(clientKey)
		sig := m.hmac(h.Sum(nil), []byte(first+","+serverFirst+","+withoutProof))
		proof := make([]byte, len(sig))
		for i := range sig {
			proof[i] = clientKey[i] ^ sig[i]
		}
		_, done, err := x.Step([]byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)))
		if err == nil && !done {
			return errors.New("not done")
		}
		return err
	}
	if err := login(func(_, snonce string) string { return snonce }); err != nil {
		t.Fatalf("RFC 5802 nonce: %v", err)
	}
	if err := login(func(cnonce, snonce string) string { return cnonce + snonce }); err != nil {
		t.Fatalf("librdkafka's nonce: %v", err)
	}
	if err := login(func(cnonce, snonce string) string { return snonce[:len(snonce)-1] }); err == nil {
		t.Fatal("a nonce without the server's end accepted")
	}
}
