package sasl

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// A signed JWT in JWS compact serialization (RFC 7515, RFC 7519):
//
//	base64url(header) "." base64url(claims) "." base64url(signature)
//
// The signature covers the first two parts as sent. kzero verifies the
// algorithms Kafka's validator (jose4j) accepts for public keys: RS256,
// RS384, RS512, PS256, PS384, PS512, ES256, ES384 and ES512; never "none",
// and no HMAC (a JWKS publishes no shared secrets).

// jws is a parsed, not yet verified, signed JWT.
type jws struct {
	alg, kid     string
	signingInput string // header "." claims, as sent
	signature    []byte
	claims       map[string]any
}

var errJWSParts = errors.New("JWS compact serializations must have 3 dot-separated Base64URL-encoded values")

// parseJWS splits and decodes a signed JWT; it checks nothing but the
// form (the algorithm is checked against the key in verify).
func parseJWS(token string) (jws, error) {
	var j jws
	h, rest, ok1 := strings.Cut(token, ".")
	c, s, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(s, ".") {
		return j, errJWSParts
	}
	var header struct {
		Alg  string          `json:"alg"`
		Kid  string          `json:"kid"`
		Crit json.RawMessage `json:"crit"`
	}
	if err := decodePart(h, &header); err != nil {
		return j, fmt.Errorf("JWS header: %w", err)
	}
	if header.Alg == "" || strings.EqualFold(header.Alg, "none") {
		return j, fmt.Errorf("JWS algorithm %q is not allowed: the token must be signed", header.Alg)
	}
	if header.Crit != nil {
		// RFC 7515 4.1.11: a recipient must refuse critical extensions it
		// does not understand, and kzero understands none.
		return j, errors.New("JWS header names critical extensions (crit) kzero does not understand")
	}
	if err := decodePart(c, &j.claims); err != nil {
		return j, fmt.Errorf("JWT claims: %w", err)
	}
	if j.claims == nil {
		return j, errors.New("JWT claims are not a JSON object")
	}
	sig, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return j, fmt.Errorf("JWS signature: invalid Base64URL encoding: %w", err)
	}
	j.alg, j.kid, j.signingInput, j.signature = header.Alg, header.Kid, token[:len(h)+1+len(c)], sig
	return j, nil
}

// decodePart decodes one base64url part holding a JSON object into v.
func decodePart(part string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return fmt.Errorf("invalid Base64URL encoding: %w", err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	return nil
}

// algorithm is a JWS signature algorithm kzero verifies.
type algorithm struct {
	kty   string      // the JWK key type it needs: "RSA" or "EC"
	hash  crypto.Hash // the digest it signs
	pss   bool        // RSASSA-PSS rather than PKCS #1 v1.5
	curve string      // for ECDSA: the curve the key must be on
}

var algorithms = map[string]algorithm{
	"RS256": {kty: "RSA", hash: crypto.SHA256},
	"RS384": {kty: "RSA", hash: crypto.SHA384},
	"RS512": {kty: "RSA", hash: crypto.SHA512},
	"PS256": {kty: "RSA", hash: crypto.SHA256, pss: true},
	"PS384": {kty: "RSA", hash: crypto.SHA384, pss: true},
	"PS512": {kty: "RSA", hash: crypto.SHA512, pss: true},
	"ES256": {kty: "EC", hash: crypto.SHA256, curve: "P-256"},
	"ES384": {kty: "EC", hash: crypto.SHA384, curve: "P-384"},
	"ES512": {kty: "EC", hash: crypto.SHA512, curve: "P-521"},
}

// minRSABits is the smallest RSA key jose4j (so Kafka) verifies with.
const minRSABits = 2048

func digest(h crypto.Hash, msg string) []byte {
	switch h {
	case crypto.SHA256:
		d := sha256.Sum256([]byte(msg))
		return d[:]
	case crypto.SHA384:
		d := sha512.Sum384([]byte(msg))
		return d[:]
	}
	d := sha512.Sum512([]byte(msg))
	return d[:]
}

// verify checks the token's signature with key, which must suit the
// token's algorithm.
func (j *jws) verify(key *JWK) error {
	a, ok := algorithms[j.alg]
	if !ok {
		return fmt.Errorf("JWS algorithm %q is not supported", j.alg)
	}
	if !key.fits(j.alg, a) {
		return fmt.Errorf("key %q does not suit algorithm %s", key.ID, j.alg)
	}
	d := digest(a.hash, j.signingInput)
	switch pub := key.Public.(type) {
	case *rsa.PublicKey:
		if a.pss {
			return rsa.VerifyPSS(pub, a.hash, d, j.signature, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		}
		return rsa.VerifyPKCS1v15(pub, a.hash, d, j.signature)
	case *ecdsa.PublicKey:
		// JWA (RFC 7518 3.4): R and S, each the curve's size, concatenated.
		size := (pub.Curve.Params().BitSize + 7) / 8
		if len(j.signature) != 2*size {
			return errors.New("ECDSA signature has the wrong length")
		}
		r, s := new(big.Int).SetBytes(j.signature[:size]), new(big.Int).SetBytes(j.signature[size:])
		if !ecdsa.Verify(pub, d, r, s) {
			return errors.New("ECDSA signature does not verify")
		}
		return nil
	}
	return fmt.Errorf("key %q has no usable public key", key.ID)
}

// SignedToken is what the validator reads from a verified JWT.
type SignedToken struct {
	Principal string
	Expires   time.Time
	IssuedAt  time.Time
	Scope     []string
}

// errUnknownKey is a token whose key id the key set does not hold.
var errUnknownKey = errors.New("no verification key for the token's key id")

// validateSigned checks a signed JWT as Kafka's broker validator
// (OAuthBearerValidatorCallbackHandler, over jose4j) does: a signature
// that verifies with a key of the set (the one its kid names, else any
// that suits the algorithm), exp and iat present, exp and nbf against
// the clock with ClockSkew, iss equal to Issuer when one is expected, aud
// holding one of Audience when one is expected, and, like jose4j's
// default, no aud claim at all when none is expected; then Kafka's claim
// checks: a non-blank subject, non-negative times, non-blank scopes.
func (c *OAuthConfig) validateSigned(token string, now time.Time) (SignedToken, error) {
	var t SignedToken
	j, err := parseJWS(token)
	if err != nil {
		return t, err
	}
	keys := c.Keys.lookup(j.kid)
	if len(keys) == 0 {
		return t, fmt.Errorf("%w %q", errUnknownKey, j.kid)
	}
	err = errors.New("no key of the set suits the token's algorithm")
	for i := range keys {
		if err = j.verify(&keys[i]); err == nil {
			break
		}
	}
	if err != nil {
		return t, fmt.Errorf("the JWS signature does not verify: %w", err)
	}
	cl := j.claims
	exp, err := numericDate(cl, "exp", true)
	if err != nil {
		return t, err
	}
	iat, err := numericDate(cl, "iat", true)
	if err != nil {
		return t, err
	}
	nbf, err := numericDate(cl, "nbf", false)
	if err != nil {
		return t, err
	}
	switch {
	case !now.Before(exp.Add(c.ClockSkew)):
		return t, fmt.Errorf("the JWT is no longer valid: it expired at %s", exp.UTC().Format(time.RFC3339))
	case !nbf.IsZero() && now.Add(c.ClockSkew).Before(nbf):
		return t, fmt.Errorf("the JWT is not yet valid (nbf %s)", nbf.UTC().Format(time.RFC3339))
	}
	if c.Issuer != "" {
		if iss, _ := cl["iss"].(string); iss != c.Issuer {
			return t, fmt.Errorf("issuer (iss) claim %q does not match the expected issuer %q", iss, c.Issuer)
		}
	}
	if err := c.checkAudience(cl); err != nil {
		return t, err
	}
	sub, ok := cl[c.PrincipalClaim].(string)
	if !ok || strings.TrimSpace(sub) == "" {
		return t, fmt.Errorf("the %q claim is missing, not a string or blank", c.PrincipalClaim)
	}
	scope, err := scopes(cl, c.ScopeClaim)
	if err != nil {
		return t, err
	}
	return SignedToken{Principal: strings.TrimSpace(sub), Expires: exp, IssuedAt: iat, Scope: scope}, nil
}

// checkAudience applies jose4j's audience rule: with expected audiences
// the aud claim (a string or an array of them) must hold one; without,
// the token must carry no aud claim.
func (c *OAuthConfig) checkAudience(cl map[string]any) error {
	raw, present := cl["aud"]
	if !present {
		if len(c.Audience) > 0 {
			return errors.New("no audience (aud) claim present, but one is expected")
		}
		return nil
	}
	var aud []string
	switch v := raw.(type) {
	case string:
		aud = []string{v}
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return errors.New("the audience (aud) claim holds a non-string")
			}
			aud = append(aud, s)
		}
	default:
		return errors.New("the audience (aud) claim is neither a string nor an array")
	}
	for _, a := range aud {
		if slices.Contains(c.Audience, a) {
			return nil
		}
	}
	return fmt.Errorf("audience (aud) claim %q does not contain an acceptable identifier (expected one of %q)", aud, c.Audience)
}

// numericDate reads a NumericDate claim (seconds since the epoch, maybe
// fractional); zero when absent and not required.
func numericDate(cl map[string]any, name string, required bool) (time.Time, error) {
	raw, present := cl[name]
	if !present {
		if required {
			return time.Time{}, fmt.Errorf("no %s claim present", name)
		}
		return time.Time{}, nil
	}
	f, ok := raw.(float64)
	if !ok || f < 0 || f > 1e15 {
		return time.Time{}, fmt.Errorf("the %s claim is not a non-negative NumericDate", name)
	}
	return time.UnixMilli(int64(f * 1000)), nil
}

// scopes reads the scope claim: a space-separated string (RFC 8693) or
// an array of strings; each scope must be non-blank (Kafka's
// ClaimValidationUtils.validateScopes).
func scopes(cl map[string]any, name string) ([]string, error) {
	var out []string
	switch v := cl[name].(type) {
	case nil:
	case string:
		out = strings.Fields(v)
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return nil, fmt.Errorf("the %q claim holds a blank or non-string scope", name)
			}
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out, nil
}
