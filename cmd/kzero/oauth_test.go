package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"kzero/kzerotest/await"
)

// idpKey is a signing key of the test identity provider.
type idpKey struct {
	kid  string
	priv crypto.Signer // *ecdsa.PrivateKey (ES256) or *rsa.PrivateKey (RS256)
}

func newIDPKey(t *testing.T, kid string, rsaKey bool) idpKey {
	t.Helper()
	var priv crypto.Signer
	var err error
	if rsaKey {
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	return idpKey{kid: kid, priv: priv}
}

// jwks is the identity provider's key set document.
func jwks(keys ...idpKey) []byte {
	enc := base64.RawURLEncoding
	var set []map[string]string
	for _, k := range keys {
		switch pub := k.priv.Public().(type) {
		case *rsa.PublicKey:
			set = append(set, map[string]string{"kty": "RSA", "kid": k.kid, "alg": "RS256", "n": enc.EncodeToString(pub.N.Bytes()), "e": enc.EncodeToString(big.NewInt(int64(pub.E)).Bytes())})
		case *ecdsa.PublicKey:
			b, _ := pub.Bytes()
			set = append(set, map[string]string{"kty": "EC", "kid": k.kid, "use": "sig", "crv": "P-256", "x": enc.EncodeToString(b[1:33]), "y": enc.EncodeToString(b[33:])})
		}
	}
	b, _ := json.Marshal(map[string]any{"keys": set})
	return b
}

// sign makes a JWT with these claims, signed with k (ES256 or RS256).
func (k idpKey) sign(t *testing.T, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	alg := "ES256"
	if _, ok := k.priv.(*rsa.PrivateKey); ok {
		alg = "RS256"
	}
	h, _ := json.Marshal(map[string]string{"alg": alg, "kid": k.kid, "typ": "JWT"})
	c, _ := json.Marshal(claims)
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	d := sha256.Sum256([]byte(input))
	var sig []byte
	switch priv := k.priv.(type) {
	case *rsa.PrivateKey:
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, d[:]); err != nil {
			t.Fatal(err)
		}
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, priv, d[:])
		if err != nil {
			t.Fatal(err)
		}
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	}
	return input + "." + enc.EncodeToString(sig)
}

// idp is an identity provider's https JWKS endpoint; the test swaps its
// key set.
type idp struct {
	srv *httptest.Server
	mu  sync.Mutex
	set []byte
	ca  string // its certificate, PEM, in a file
}

func newIDP(t *testing.T, keys ...idpKey) *idp {
	p := &idp{set: jwks(keys...)}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		w.Write(p.set)
	}))
	t.Cleanup(p.srv.Close)
	p.ca = filepath.Join(t.TempDir(), "idp-ca.pem")
	if err := os.WriteFile(p.ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *idp) serve(keys ...idpKey) {
	p.mu.Lock()
	p.set = jwks(keys...)
	p.mu.Unlock()
}

// signedOAuthProps configure the SASL_PLAINTEXT listener to validate
// signed OAUTHBEARER tokens against the identity provider's endpoint
// (Kafka's OAuthBearerValidatorCallbackHandler), its certificate trusted
// through the JAAS options.
func signedOAuthProps(p *idp) []string {
	return append(saslProps(),
		"sasl.enabled.mechanisms", "OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config",
		`org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ssl.truststore.type="PEM" ssl.truststore.location="`+p.ca+`";`,
		"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"sasl.oauthbearer.jwks.endpoint.url", p.srv.URL+"/jwks",
		"sasl.oauthbearer.expected.audience", "kafka,other",
		"listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.expected.issuer", "https://idp.test",
		"sasl.oauthbearer.clock.skew.seconds", "5",
	)
}

// TestSASLOAuthBearerSigned: franz-go's OAUTHBEARER client with JWTs
// signed by the identity provider's keys (ES256 and RS256): a valid token
// goes the whole round trip; a wrong audience or issuer, an expired
// token, a forged signature, an unsigned token and an unknown key id are
// refused with SASL_AUTHENTICATION_FAILED; a key the provider adds
// (rotation) is accepted once the set has been refreshed, which the
// unknown key id itself set off.
func TestSASLOAuthBearerSigned(t *testing.T) {
	es, rs := newIDPKey(t, "es-1", false), newIDPKey(t, "rs-1", true)
	p := newIDP(t, es, rs)
	b := startTestBroker(t, t.TempDir(), signedOAuthProps(p)...)
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	now := time.Now()
	claims := func(edit func(map[string]any)) map[string]any {
		c := map[string]any{"sub": "alice", "iss": "https://idp.test", "aud": "kafka", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "scope": "kafka"}
		if edit != nil {
			edit(c)
		}
		return c
	}
	saslRoundTrip(t, ctx, b, oauth.Auth{Token: es.sign(t, claims(nil))}.AsMechanism(), "oauth-es")
	saslRoundTrip(t, ctx, b, oauth.Auth{Token: rs.sign(t, claims(func(c map[string]any) { c["aud"] = []string{"x", "other"} }))}.AsMechanism(), "oauth-rs")

	forger := newIDPKey(t, "es-1", false) // the same kid, not the provider's key
	refused := func(name, tok string) {
		t.Helper()
		err := newSASLClient(t, b, oauth.Auth{Token: tok}.AsMechanism(), kgo.RequestRetries(0)).Ping(ctx)
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s: %v, want SASL_AUTHENTICATION_FAILED", name, err)
		}
	}
	for name, tok := range map[string]string{
		"wrong audience": es.sign(t, claims(func(c map[string]any) { c["aud"] = "billing" })),
		"wrong issuer":   es.sign(t, claims(func(c map[string]any) { c["iss"] = "https://evil.test" })),
		"expired":        es.sign(t, claims(func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() })),
		"bad signature":  forger.sign(t, claims(nil)),
		"unsigned":       unsecuredToken(`{"sub":"alice","exp":4000000000,"iat":1,"aud":"kafka","iss":"https://idp.test"}`),
	} {
		refused(name, tok)
	}

	// Rotation: the provider adds es-2. A token signed with it names a kid
	// the broker lacks: refused, and the broker refreshes its set at once;
	// clients that retry get in once the refresh has landed.
	es2 := newIDPKey(t, "es-2", false)
	rotated := es2.sign(t, claims(nil))
	p.serve(es, rs, es2)
	refused("unknown kid", rotated)
	var err error
	if !await.PollCtx(ctx, func() bool {
		err = newSASLClient(t, b, oauth.Auth{Token: rotated}.AsMechanism(), kgo.RequestRetries(0)).Ping(ctx)
		if err != nil && !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("rotated key es-2 never accepted: %v", err)
		}
		return err == nil
	}) {
		t.Fatalf("rotated key es-2 never accepted: %v", err)
	}
	saslRoundTrip(t, ctx, b, oauth.Auth{Token: rotated}.AsMechanism(), "oauth-rotated")
}

// TestSASLOAuthBearerSignedFile: a file:// key set named on the listener
// itself (listener.name.<l>.oauthbearer.sasl.oauthbearer.*), with its
// own sub claim name; the session lifetime is the token's.
func TestSASLOAuthBearerSignedFile(t *testing.T) {
	k := newIDPKey(t, "k", false)
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwks(k), 0o600); err != nil {
		t.Fatal(err)
	}
	props := append(saslProps(),
		"sasl.enabled.mechanisms", "OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.jwks.endpoint.url", "file://"+path,
		"listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.sub.claim.name", "client_id",
	)
	b := startTestBroker(t, t.TempDir(), props...)
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	now := time.Now()
	tok := k.sign(t, map[string]any{"client_id": "svc", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	saslRoundTrip(t, ctx, b, oauth.Auth{Token: tok}.AsMechanism(), "oauth-file")

	c := dialSASL(t, saslAddr(b))
	resp := c.authenticateOAuth(tok)
	if resp.ErrorCode != 0 || resp.SessionLifetimeMillis <= 0 || resp.SessionLifetimeMillis > time.Hour.Milliseconds() {
		t.Fatalf("SaslAuthenticate: error %d, session lifetime %d ms, want the token's hour", resp.ErrorCode, resp.SessionLifetimeMillis)
	}
	noSub := k.sign(t, map[string]any{"sub": "svc", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	err := newSASLClient(t, b, oauth.Auth{Token: noSub}.AsMechanism(), kgo.RequestRetries(0)).Ping(ctx)
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("token without client_id: %v", err)
	}
}

// TestSignedOAuthConfigRefused: a signed validator without a key set, with
// a protocol Kafka does not fetch from, an unknown validator class, or a
// key set that cannot be read stops the broker from starting.
func TestSignedOAuthConfigRefused(t *testing.T) {
	handler := "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class"
	signed := "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
	logger := slog.New(slog.DiscardHandler)
	for name, extra := range map[string][]string{
		"no url":        {handler, signed},
		"ftp":           {handler, signed, "sasl.oauthbearer.jwks.endpoint.url", "ftp://idp/jwks"},
		"unknown class": {handler, "com.example.Validator", "sasl.oauthbearer.jwks.endpoint.url", "file:///x"},
		"backoff":       {handler, signed, "sasl.oauthbearer.jwks.endpoint.url", "file:///x", "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", "1"},
	} {
		props := append(append(saslProps(), "sasl.enabled.mechanisms", "OAUTHBEARER", "log.dirs", t.TempDir()), extra...)
		over := map[string]string{}
		for i := 0; i+1 < len(props); i += 2 {
			over[props[i]] = props[i+1]
		}
		if _, err := loadConfig(nil, over, logger); err == nil {
			t.Errorf("%s: config accepted", name)
		}
	}
	// Valid config, missing file: the node does not start.
	over := map[string]string{"log.dirs": t.TempDir(), "listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "OAUTHBEARER",
		handler: signed, "sasl.oauthbearer.jwks.endpoint.url": "file://" + filepath.Join(t.TempDir(), "none.json"), "admin.listener": ""}
	cfg, err := loadConfig(nil, over, logger)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := startNode(cfg, logger); err == nil {
		stopBroker(t, b)
		t.Fatal("started without its key set")
	}
}

// authenticateOAuth runs an OAUTHBEARER handshake and authenticate with
// token on c.
func (c *saslConn) authenticateOAuth(token string) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	return c.authenticateMech("OAUTHBEARER", []byte("n,,\x01auth=Bearer "+token+"\x01\x01"))
}
