package sasl

import (
	"strings"
	"testing"
	"time"
)

// FuzzParsePlain: any bytes are refused or split into three fields that
// rebuild the input.
func FuzzParsePlain(f *testing.F) {
	f.Add([]byte("\x00alice\x00pw"))
	f.Add([]byte("a\x00b\x00c\x00d"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParsePlain(b)
		if err != nil {
			return
		}
		if got := m.AuthzID + "\x00" + m.User + "\x00" + m.Password; got != string(b) {
			t.Fatalf("%q rebuilt as %q", b, got)
		}
	})
}

// FuzzParseClientFirst: refused, or a bare message that is a suffix of the
// input and starts with the user field.
func FuzzParseClientFirst(f *testing.F) {
	f.Add([]byte("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"))
	f.Add([]byte("n,a=x,m=y,n=u=2C,r=n,ext=v=w"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cf, err := ParseClientFirst(b)
		if err != nil {
			return
		}
		if len(cf.Bare) > len(b) || string(b[len(b)-len(cf.Bare):]) != cf.Bare || cf.Bare[:2] != "n=" || cf.Nonce == "" {
			t.Fatalf("%q: %+v", b, cf)
		}
	})
}

// FuzzParseClientFinal: refused, or the message without proof is a prefix
// of the input.
func FuzzParseClientFinal(f *testing.F) {
	f.Add([]byte("c=biws,r=abcdef,p=dHpbV3V6YW4="))
	f.Add([]byte("c=,r=a,x=y,p=AA=="))
	f.Fuzz(func(t *testing.T, b []byte) {
		cf, err := ParseClientFinal(b)
		if err != nil {
			return
		}
		if len(cf.WithoutProof) >= len(b) || string(b[:len(cf.WithoutProof)]) != cf.WithoutProof || len(cf.Proof) == 0 {
			t.Fatalf("%q: %+v", b, cf)
		}
	})
}

// FuzzScramExchange steps a server exchange with two arbitrary tokens: it
// never panics and never authenticates without the password.
func FuzzScramExchange(f *testing.F) {
	cred, _ := SHA256.NewCredential("pw", MinIterations)
	f.Add([]byte("n,,n=u,r=abc"), []byte("c=biws,r=abc,p=AAAA"))
	f.Fuzz(func(t *testing.T, first, final []byte) {
		x := NewScram(SHA256, func(string, *ScramMechanism) (Credential, bool) { return cred, true }, nil)
		if _, _, err := x.Step(first); err != nil {
			return
		}
		if _, done, _ := x.Step(final); done {
			t.Fatalf("authenticated with %q", final)
		}
	})
}

// FuzzParseJAAS: any text is refused or parsed into entries with a class
// and a known flag.
func FuzzParseJAAS(f *testing.F) {
	f.Add(`org.apache.kafka.common.security.plain.PlainLoginModule required user_a="b" /* c */ user_d='e\'f'; // x`)
	f.Add("a optional;b REQUIRED k=v;")
	f.Fuzz(func(t *testing.T, s string) {
		mods, err := ParseJAAS(s)
		if err != nil {
			return
		}
		for _, m := range mods {
			if m.Class == "" || m.Flag == "" {
				t.Fatalf("%q: %+v", s, m)
			}
		}
	})
}

// FuzzParseJWKS: any bytes are refused or give keys each of which has a
// public key that suits one of the algorithms kzero verifies.
func FuzzParseJWKS(f *testing.F) {
	f.Add(jwksOf(newTestKey(f, "rs", "RS256"), newTestKey(f, "es", "ES256")))
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-384","x":"AA","y":"AA"},{"kty":"oct","k":"AA"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, _, err := ParseJWKS(b)
		if err != nil {
			return
		}
		for _, k := range keys {
			fits := false
			for name, a := range algorithms {
				fits = fits || (&JWK{Public: k.Public}).fits(name, a)
			}
			if !fits {
				t.Fatalf("%q: key %+v suits no algorithm", b, k)
			}
		}
	})
}

// FuzzSignedJWT: any token is refused or accepted with a principal; one
// that is accepted verifies with a key of the set. The seeds are good
// tokens of each key type, so the fuzzer mutates real signatures.
func FuzzSignedJWT(f *testing.F) {
	now := time.Unix(1_700_000_000, 0)
	rs, es := newTestKey(f, "rs", "RS256"), newTestKey(f, "es", "ES256")
	cfg := OAuthConfig{PrincipalClaim: "sub", ScopeClaim: "scope", Keys: fileJWKS(f, rs, es), Audience: []string{"kafka"}}
	claims := map[string]any{"sub": "alice", "aud": "kafka", "iat": now.Unix(), "exp": now.Unix() + 60, "scope": []string{"x"}}
	f.Add(rs.sign(f, claims))
	f.Add(es.sign(f, claims))
	f.Add(unsecuredJWS(`{"sub":"a"}`))
	f.Fuzz(func(t *testing.T, token string) {
		tok, err := cfg.validateSigned(token, now)
		if err != nil {
			return
		}
		if strings.TrimSpace(tok.Principal) == "" {
			t.Fatalf("%q accepted without a principal", token)
		}
		j, err := parseJWS(token)
		if err != nil {
			t.Fatalf("%q accepted but does not parse: %v", token, err)
		}
		verified := false
		for _, k := range cfg.Keys.lookup(j.kid) {
			verified = verified || j.verify(&k) == nil
		}
		if !verified {
			t.Fatalf("%q accepted but verifies with no key", token)
		}
	})
}
