package sasl

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// unsecuredJWS makes an unsigned token with these claims (JSON text).
func unsecuredJWS(claims string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString([]byte(claims)) + "."
}

// TestOAuthBearerWithFranzGo runs franz-go's OAUTHBEARER client against
// the unsecured validator: a valid token logs in as its sub; an expired
// token, one without the required scope and a signed one are answered with
// Kafka's JSON error and then fail with it.
func TestOAuthBearerWithFranzGo(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	cfg := OAuthConfig{RequiredScope: []string{"kafka"}, Now: func() time.Time { return now }}
	run := func(token, zid string) (string, error) {
		sess, first, err := oauth.Auth{Token: token, Zid: zid, Extensions: map[string]string{"traceId": "x"}}.AsMechanism().Authenticate(context.Background(), "")
		if err != nil {
			return "", err
		}
		x := NewOAuthBearer(cfg)
		tok := first
		for {
			resp, done, err := x.Step(tok)
			if err != nil {
				return "", err
			}
			cdone, next, cerr := sess.Challenge(resp)
			if done {
				if !cdone || cerr != nil {
					t.Fatalf("server done, client: %v %v", cdone, cerr)
				}
				return x.User(), nil
			}
			tok = next
		}
	}
	good := unsecuredJWS(fmt.Sprintf(`{"sub":"alice","exp":%d,"iat":%d,"scope":"kafka other"}`, now.Unix()+60, now.Unix()-1))
	if user, err := run(good, ""); err != nil || user != "alice" {
		t.Fatalf("valid token: %q, %v", user, err)
	}
	if user, err := run(good, "alice"); err != nil || user != "alice" {
		t.Fatalf("valid token with authzid: %q, %v", user, err)
	}
	if _, err := run(good, "bob"); err == nil {
		t.Fatal("authzid of another principal accepted")
	}
	for name, c := range map[string]struct{ token, msg string }{
		"expired":  {unsecuredJWS(fmt.Sprintf(`{"sub":"alice","exp":%d,"scope":"kafka"}`, now.Unix()-1)), `{"status":"invalid_token"}`},
		"scope":    {unsecuredJWS(fmt.Sprintf(`{"sub":"alice","exp":%d,"scope":["x"]}`, now.Unix()+60)), `{"status":"invalid_token", "scope":"kafka"}`},
		"signed":   {good + "c2ln", `{"status":"invalid_token"}`},
		"no sub":   {unsecuredJWS(fmt.Sprintf(`{"exp":%d,"scope":"kafka"}`, now.Unix()+60)), `{"status":"invalid_token"}`},
		"not json": {"YQ.YQ.", `{"status":"invalid_token"}`},
	} {
		_, err := run(c.token, "")
		if err == nil || FailureMessage(OAuthBearer, err) != c.msg {
			t.Errorf("%s: err %v, message %q, want %q", name, err, FailureMessage(OAuthBearer, err), c.msg)
		}
	}
}

// FuzzParseOAuthClientFirst: refused, or a token and extensions without
// the separators.
func FuzzParseOAuthClientFirst(f *testing.F) {
	f.Add([]byte("n,,\x01auth=Bearer abc.def.\x01\x01"))
	f.Add([]byte("n,a=u=2C,\x01auth=bearer x\x01k=v w\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseOAuthClientFirst(b)
		if err != nil {
			return
		}
		if m.Token == "" {
			t.Fatalf("%q: empty token", b)
		}
		for k, v := range m.Extensions {
			if k == "" || v == "" || k == "auth" {
				t.Fatalf("%q: extension %q=%q", b, k, v)
			}
		}
	})
}

// FuzzParseUnsecuredJWS: refused, or a principal and an expiry.
func FuzzParseUnsecuredJWS(f *testing.F) {
	f.Add(unsecuredJWS(`{"sub":"a","exp":1e9,"iat":1,"scope":["s"]}`))
	f.Add("e30.e30.")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := ParseUnsecuredJWS(s, "sub", "scope")
		if err != nil {
			return
		}
		if tok.Principal == "" {
			t.Fatalf("%q: no principal", s)
		}
	})
}
