package sasl

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
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kzero/kzerotest/await"
)

// testKey is a signing key of the test identity provider and its public
// JWK.
type testKey struct {
	kid  string
	alg  string
	priv crypto.Signer
}

var (
	rsaOnce sync.Once
	rsaPriv *rsa.PrivateKey
)

// newTestKey makes a key for alg (RS256, PS256 or ES256); the RSA key is
// made once per test binary (2048-bit generation is slow).
func newTestKey(t testing.TB, kid, alg string) testKey {
	t.Helper()
	if alg == "ES256" {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return testKey{kid: kid, alg: alg, priv: k}
	}
	rsaOnce.Do(func() {
		var err error
		if rsaPriv, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return testKey{kid: kid, alg: alg, priv: rsaPriv}
}

// jwk is the key's public half as a JWKS member.
func (k testKey) jwk() map[string]any {
	enc := base64.RawURLEncoding
	switch pub := k.priv.Public().(type) {
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "kid": k.kid, "use": "sig", "n": enc.EncodeToString(pub.N.Bytes()), "e": enc.EncodeToString(big.NewInt(int64(pub.E)).Bytes())}
	case *ecdsa.PublicKey:
		b, _ := pub.Bytes()
		return map[string]any{"kty": "EC", "kid": k.kid, "crv": "P-256", "x": enc.EncodeToString(b[1:33]), "y": enc.EncodeToString(b[33:])}
	}
	panic("key type")
}

func jwksOf(keys ...testKey) []byte {
	var set []map[string]any
	for _, k := range keys {
		set = append(set, k.jwk())
	}
	b, _ := json.Marshal(map[string]any{"keys": set})
	return b
}

// sign makes a JWT with these claims, signed by k.
func (k testKey) sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]any{"alg": k.alg, "kid": k.kid, "typ": "JWT"})
	c, _ := json.Marshal(claims)
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	d := sha256.Sum256([]byte(input))
	var sig []byte
	var err error
	switch k.alg {
	case "RS256":
		sig, err = rsa.SignPKCS1v15(rand.Reader, k.priv.(*rsa.PrivateKey), crypto.SHA256, d[:])
	case "PS256":
		sig, err = rsa.SignPSS(rand.Reader, k.priv.(*rsa.PrivateKey), crypto.SHA256, d[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	case "ES256":
		var r, s *big.Int
		r, s, err = ecdsa.Sign(rand.Reader, k.priv.(*ecdsa.PrivateKey), d[:])
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + enc.EncodeToString(sig)
}

// fileJWKS writes a key set to a file and opens it as file://.
func fileJWKS(t testing.TB, keys ...testKey) *JWKS {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwksOf(keys...), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := OpenJWKS(context.Background(), JWKSConfig{URL: "file://" + path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// TestSignedJWT checks Kafka's broker validator rules on tokens signed
// with RS256, PS256 and ES256 keys of a file key set.
func TestSignedJWT(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	rs, ps, es := newTestKey(t, "rs", "RS256"), newTestKey(t, "ps", "PS256"), newTestKey(t, "es", "ES256")
	other := newTestKey(t, "es", "ES256") // same kid, another key: a forged signature
	cfg := OAuthConfig{PrincipalClaim: "sub", ScopeClaim: "scope", ClockSkew: 30 * time.Second,
		Keys: fileJWKS(t, rs, ps, es), Audience: []string{"kafka", "other"}, Issuer: "https://idp"}
	claims := func(edit func(map[string]any)) map[string]any {
		c := map[string]any{"sub": "alice", "iss": "https://idp", "aud": []string{"kafka"}, "iat": now.Unix() - 10, "exp": now.Unix() + 3600, "scope": "a b"}
		if edit != nil {
			edit(c)
		}
		return c
	}
	for _, k := range []testKey{rs, ps, es} {
		tok, err := cfg.validateSigned(k.sign(t, claims(nil)), now)
		if err != nil || tok.Principal != "alice" || !tok.Expires.Equal(now.Add(time.Hour)) || strings.Join(tok.Scope, ",") != "a,b" {
			t.Errorf("%s: %+v, %v", k.alg, tok, err)
		}
	}
	ok := map[string]string{
		"aud as a string":         es.sign(t, claims(func(c map[string]any) { c["aud"] = "other" })),
		"expired within the skew": es.sign(t, claims(func(c map[string]any) { c["exp"] = now.Unix() - 20 })),
		"nbf within the skew":     es.sign(t, claims(func(c map[string]any) { c["nbf"] = now.Unix() + 20 })),
	}
	for name, tok := range ok {
		if _, err := cfg.validateSigned(tok, now); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	good := es.sign(t, claims(nil))
	parts := strings.Split(good, ".")
	unsigned := unsecuredJWS(`{"sub":"alice","exp":1800000000,"iat":1600000000}`)
	hs := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"es"}`)) + "." + parts[1] + "." + parts[2]
	rsWithEsKid := testKey{kid: "es", alg: "RS256", priv: rs.priv}.sign(t, claims(nil))
	bad := map[string]string{
		"wrong audience":                  es.sign(t, claims(func(c map[string]any) { c["aud"] = "else" })),
		"no audience":                     es.sign(t, claims(func(c map[string]any) { delete(c, "aud") })),
		"wrong issuer":                    es.sign(t, claims(func(c map[string]any) { c["iss"] = "https://evil" })),
		"no issuer":                       es.sign(t, claims(func(c map[string]any) { delete(c, "iss") })),
		"expired":                         es.sign(t, claims(func(c map[string]any) { c["exp"] = now.Unix() - 31 })),
		"not yet valid":                   es.sign(t, claims(func(c map[string]any) { c["nbf"] = now.Unix() + 31 })),
		"no exp":                          es.sign(t, claims(func(c map[string]any) { delete(c, "exp") })),
		"no iat":                          es.sign(t, claims(func(c map[string]any) { delete(c, "iat") })),
		"exp a string":                    es.sign(t, claims(func(c map[string]any) { c["exp"] = "soon" })),
		"no sub":                          es.sign(t, claims(func(c map[string]any) { delete(c, "sub") })),
		"blank sub":                       es.sign(t, claims(func(c map[string]any) { c["sub"] = " " })),
		"blank scope":                     es.sign(t, claims(func(c map[string]any) { c["scope"] = []string{"a", " "} })),
		"bad signature":                   other.sign(t, claims(nil)),
		"tampered claims":                 parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"root"}`)) + "." + parts[2],
		"unknown kid":                     testKey{kid: "nope", alg: "ES256", priv: es.priv}.sign(t, claims(nil)),
		"alg none":                        unsigned,
		"HS256":                           hs,
		"key of another type for the kid": rsWithEsKid,
		"two parts":                       parts[0] + "." + parts[1],
		"four parts":                      good + ".x",
	}
	for name, tok := range bad {
		if _, err := cfg.validateSigned(tok, now); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Without an expected audience, a token with an aud claim is refused
	// (jose4j's default) and one without is accepted.
	noAud := cfg
	noAud.Audience = nil
	if _, err := noAud.validateSigned(good, now); err == nil {
		t.Error("aud claim accepted with no expected audience")
	}
	if _, err := noAud.validateSigned(es.sign(t, claims(func(c map[string]any) { delete(c, "aud") })), now); err != nil {
		t.Errorf("no aud, none expected: %v", err)
	}
}

// TestSignedOAuthBearerExchange: the exchange answers a refused signed
// token with Kafka's JSON error and fails on the client's ack; an
// accepted one logs in as its sub and reports its expiry.
func TestSignedOAuthBearerExchange(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	k := newTestKey(t, "k1", "ES256")
	cfg := OAuthConfig{Keys: fileJWKS(t, k), Now: func() time.Time { return now }}
	first := func(tok string) []byte { return []byte("n,,\x01auth=Bearer " + tok + "\x01\x01") }

	x := NewOAuthBearer(cfg)
	resp, done, err := x.Step(first(k.sign(t, map[string]any{"sub": "bob", "iat": now.Unix(), "exp": now.Unix() + 60})))
	if err != nil || !done || len(resp) != 0 || x.User() != "bob" {
		t.Fatalf("valid: %q %v %v user %q", resp, done, err, x.User())
	}
	if e := x.(interface{ Expiry() time.Time }).Expiry(); !e.Equal(now.Add(time.Minute)) {
		t.Errorf("expiry %v", e)
	}
	x = NewOAuthBearer(cfg)
	resp, done, err = x.Step(first(k.sign(t, map[string]any{"sub": "bob", "iat": now.Unix(), "exp": now.Unix() - 60})))
	if err != nil || done || string(resp) != `{"status":"invalid_token"}` {
		t.Fatalf("expired: %q %v %v", resp, done, err)
	}
	var ae *AuthError
	if _, _, err := x.Step([]byte{1}); !errors.As(err, &ae) || ae.Msg != `{"status":"invalid_token"}` || ae.Err == nil || !strings.Contains(ae.Err.Error(), "expired") {
		t.Fatalf("after the ack: %v (the client sees Kafka's JSON, the log says why)", err)
	}
}

// jwksServer is an identity provider's JWKS endpoint whose key set the
// test swaps; it counts the fetches and can fail them.
type jwksServer struct {
	*httptest.Server
	mu   sync.Mutex
	set  []byte
	fail int // fail this many next fetches
	hits int
}

func newJWKSServer(t testing.TB, tls bool, keys ...testKey) *jwksServer {
	s := &jwksServer{set: jwksOf(keys...)}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.hits++
		if s.fail > 0 {
			s.fail--
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.set)
	})
	if tls {
		s.Server = httptest.NewTLSServer(h)
	} else {
		s.Server = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) serve(keys ...testKey) {
	s.mu.Lock()
	s.set = jwksOf(keys...)
	s.mu.Unlock()
}

// awaitFetches waits until the set has been read n times (a refresh
// installs the keys before counting).
func awaitFetches(t *testing.T, k *JWKS, n int64) {
	t.Helper()
	if !await.Poll(30*time.Second, func() bool { return k.Fetches() >= n }) {
		t.Fatalf("%d fetches, want %d", k.Fetches(), n)
	}
}

// TestJWKSRotation: keys come from an https endpoint; a token naming a
// new key id is refused but makes the set refresh at once, after which
// it is accepted; a second unknown id within the minute asks for no
// refresh; the periodic refresh drops a retired key.
func TestJWKSRotation(t *testing.T) {
	k1, k2, k3 := newTestKey(t, "k1", "ES256"), newTestKey(t, "k2", "ES256"), newTestKey(t, "k3", "RS256")
	srv := newJWKSServer(t, true, k1)
	srv.fail = 2 // the first fetch is retried
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	keys, err := OpenJWKS(context.Background(), JWKSConfig{URL: srv.URL + "/jwks", RootCAs: roots, RetryBackoff: time.Millisecond, RetryBackoffMax: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	now := time.Now()
	cfg := OAuthConfig{PrincipalClaim: "sub", ScopeClaim: "scope", Keys: keys}
	claims := map[string]any{"sub": "alice", "iat": now.Unix(), "exp": now.Unix() + 60}
	if _, err := cfg.validateSigned(k1.sign(t, claims), now); err != nil {
		t.Fatalf("k1: %v", err)
	}
	srv.serve(k1, k2)
	if _, err := cfg.validateSigned(k2.sign(t, claims), now); !errors.Is(err, errUnknownKey) {
		t.Fatalf("k2 before the refresh: %v", err)
	}
	awaitFetches(t, keys, 2)
	if _, err := cfg.validateSigned(k2.sign(t, claims), now); err != nil {
		t.Fatalf("k2 after the refresh: %v", err)
	}
	// An unknown kid asks for one refresh; asking again within the minute
	// asks for none (the request is sent synchronously: nothing pending).
	k9 := testKey{kid: "k9", alg: "ES256", priv: k1.priv}.sign(t, claims)
	if _, err := cfg.validateSigned(k9, now); !errors.Is(err, errUnknownKey) {
		t.Fatal(err)
	}
	awaitFetches(t, keys, 3)
	keys.mu.Lock()
	asked := keys.mu.missing["k9"]
	keys.mu.Unlock()
	if _, err := cfg.validateSigned(k9, now); !errors.Is(err, errUnknownKey) {
		t.Fatal(err)
	}
	keys.mu.Lock()
	if again := keys.mu.missing["k9"]; asked.IsZero() || !again.Equal(asked) {
		t.Errorf("k9 asked for a refresh at %v, then again (%v) within the minute", asked, again)
	}
	keys.mu.Unlock()

	// The periodic refresh picks up k3 and retires k1.
	per, err := OpenJWKS(context.Background(), JWKSConfig{URL: srv.URL, RootCAs: roots, Refresh: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer per.Close()
	srv.serve(k3)
	n := per.Fetches()
	awaitFetches(t, per, n+2)
	pcfg := OAuthConfig{PrincipalClaim: "sub", ScopeClaim: "scope", Keys: per}
	if _, err := pcfg.validateSigned(k3.sign(t, claims), now); err != nil {
		t.Errorf("k3 after the periodic refresh: %v", err)
	}
	if _, err := pcfg.validateSigned(k1.sign(t, claims), now); err == nil {
		t.Error("retired k1 accepted")
	}
}

// TestOpenJWKSRefused: what Kafka refuses at start is refused.
func TestOpenJWKSRefused(t *testing.T) {
	srv := newJWKSServer(t, false)
	srv.fail = 1 << 30
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}`), 0o600)
	for _, u := range []string{
		"ftp://idp/jwks",
		"file://" + filepath.Join(dir, "missing.json"),
		"file://" + dir,
		"file://" + bad,
		srv.URL, // always failing
	} {
		if _, err := OpenJWKS(context.Background(), JWKSConfig{URL: u, RetryBackoff: time.Millisecond, RetryBackoffMax: 20 * time.Millisecond}); err == nil {
			t.Errorf("%s: opened", u)
		}
	}
}

// TestParseJWKS: keys kzero cannot use and malformed ones are skipped
// (counted), as jose4j skips them; a document that is no key set is
// refused.
func TestParseJWKS(t *testing.T) {
	es := newTestKey(t, "es", "ES256").jwk()
	esJSON, _ := json.Marshal(es)
	keys, skipped, err := ParseJWKS(fmt.Appendf(nil, `{"keys":[{"kty":"oct","k":"c2VjcmV0"},{"kty":"OKP","crv":"Ed25519","x":"AA"},`+
		`{"kty":"RSA","n":"AQAB","e":"AQAB"},{"kty":"RSA","n":"!","e":"AQAB"},{"kty":"RSA","n":"AQAB","e":"AA"},`+
		`{"kty":"EC","crv":"P-256","x":"AQAB","y":"AQAB"},"junk",%s]}`, esJSON))
	if err != nil || len(keys) != 1 || keys[0].ID != "es" || skipped != 7 {
		t.Fatalf("%+v, %d skipped, %v", keys, skipped, err)
	}
	for _, b := range []string{`[]`, `{}`, `{"keys":{}}`, `nope`} {
		if _, _, err := ParseJWKS([]byte(b)); err == nil {
			t.Errorf("%s: parsed", b)
		}
	}
}
