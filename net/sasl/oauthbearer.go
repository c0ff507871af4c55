package sasl

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// OAuthBearer is the OAUTHBEARER mechanism name (RFC 7628, KIP-255).
const OAuthBearer = "OAUTHBEARER"

// OAuthConfig configures OAUTHBEARER's token validation. Without Keys it
// is Kafka's unsecured validator
// (OAuthBearerUnsecuredValidatorCallbackHandler): tokens are unsigned JWS
// (alg "none"), for tests and development, checked for expiry, issue time
// and scope, never for a signature; the fields follow its JAAS options
// (unsecuredValidatorPrincipalClaimName, ...). With Keys it is Kafka's
// broker validator (OAuthBearerValidatorCallbackHandler, KIP-768): signed
// JWTs verified with the key set, and the sasl.oauthbearer.* keys.
type OAuthConfig struct {
	PrincipalClaim string        // default "sub" (sasl.oauthbearer.sub.claim.name)
	ScopeClaim     string        // default "scope" (sasl.oauthbearer.scope.claim.name)
	RequiredScope  []string      // unsecured only: scopes the token must carry
	ClockSkew      time.Duration // allowed clock skew (sasl.oauthbearer.clock.skew.seconds)
	Now            func() time.Time

	// Keys verify signed tokens (sasl.oauthbearer.jwks.endpoint.url); nil:
	// the unsecured validator.
	Keys *JWKS
	// Audience is sasl.oauthbearer.expected.audience, Issuer
	// sasl.oauthbearer.expected.issuer; empty: not checked (but see
	// checkAudience).
	Audience []string
	Issuer   string
}

// OAuthClientFirst is a client's OAUTHBEARER initial response:
//
//	n,[a=authzid],^Aauth=Bearer <token>^A[key=value^A]...^A
type OAuthClientFirst struct {
	AuthzID    string
	Token      string
	Extensions map[string]string
}

var errOAuthFirst = errors.New("Invalid OAUTHBEARER client first message")

// ParseOAuthClientFirst parses the initial response as Kafka's
// OAuthBearerClientInitialResponse does.
func ParseOAuthClientFirst(b []byte) (OAuthClientFirst, error) {
	var m OAuthClientFirst
	rest, ok := bytes.CutPrefix(b, []byte("n,"))
	if !ok {
		return m, errOAuthFirst
	}
	gs2, kvs, ok := bytes.Cut(rest, []byte(",\x01"))
	if !ok {
		return m, errOAuthFirst
	}
	if len(gs2) > 0 {
		a, ok := strings.CutPrefix(string(gs2), "a=")
		if !ok || !validSaslName(a) {
			return m, errOAuthFirst
		}
		m.AuthzID = unescapeSaslName(a)
	}
	// kvpairs (key=value^A)* then a final ^A.
	body, ok := bytes.CutSuffix(kvs, []byte{1})
	if !ok {
		return m, errOAuthFirst
	}
	props := map[string]string{}
	for len(body) > 0 {
		kv, after, ok := bytes.Cut(body, []byte{1})
		if !ok {
			return m, errOAuthFirst
		}
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok || k == "" || v == "" || strings.IndexFunc(k, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }) >= 0 ||
			strings.IndexFunc(v, func(r rune) bool { return r > 0x7E || r < 0x21 && r != ' ' && r != '\t' && r != '\r' && r != '\n' }) >= 0 {
			return m, errOAuthFirst
		}
		props[k] = v
		body = after
	}
	auth, ok := props["auth"]
	if !ok {
		return m, fmt.Errorf("%w: 'auth' not specified", errOAuthFirst)
	}
	delete(props, "auth")
	scheme, token, ok := strings.Cut(auth, " ")
	token = strings.TrimLeft(token, " ")
	if !ok || token == "" || strings.IndexFunc(token, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-_~+/.=", r))
	}) >= 0 {
		return m, fmt.Errorf("%w: invalid 'auth' format", errOAuthFirst)
	}
	if !strings.EqualFold(scheme, "bearer") {
		return m, fmt.Errorf("Invalid scheme in OAUTHBEARER client first message: %s", scheme)
	}
	m.Token, m.Extensions = token, props
	return m, nil
}

// UnsecuredToken is the part of an unsecured JWS kzero reads.
type UnsecuredToken struct {
	Principal string
	Expires   time.Time
	IssuedAt  time.Time // zero when the token has no iat
	Scope     []string
}

// ParseUnsecuredJWS decodes an unsecured JWS (header.payload. with an
// empty signature) and reads its principal, exp, iat and scope claims.
func ParseUnsecuredJWS(token string, principalClaim, scopeClaim string) (UnsecuredToken, error) {
	var t UnsecuredToken
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return t, fmt.Errorf("unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values")
	}
	if parts[2] != "" {
		return t, fmt.Errorf("unsecured JWS must not contain a digital signature")
	}
	var header, claims map[string]any
	for i, into := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[i], "="))
		if err != nil {
			return t, fmt.Errorf("invalid Base64URL encoding in unsecured JWS: %w", err)
		}
		if err := json.Unmarshal(raw, into); err != nil || *into == nil {
			return t, fmt.Errorf("unsecured JWS part %d is not a JSON object", i)
		}
	}
	p, ok := claims[principalClaim].(string)
	if !ok || strings.TrimSpace(p) == "" {
		return t, fmt.Errorf("no principal name in the %q claim", principalClaim)
	}
	t.Principal = p
	exp, ok := claims["exp"].(float64)
	if !ok {
		return t, fmt.Errorf("required claim missing or not a number: exp")
	}
	t.Expires = time.UnixMilli(int64(exp * 1000))
	if v, present := claims["iat"]; present {
		iat, ok := v.(float64)
		if !ok {
			return t, fmt.Errorf("claim is not a number: iat")
		}
		t.IssuedAt = time.UnixMilli(int64(iat * 1000))
	}
	switch s := claims[scopeClaim].(type) {
	case string:
		t.Scope = strings.Fields(s)
	case []any:
		for _, v := range s {
			str, ok := v.(string)
			if !ok {
				return t, fmt.Errorf("scope claim %q holds a non-string", scopeClaim)
			}
			t.Scope = append(t.Scope, str)
		}
	}
	return t, nil
}

// validate applies the unsecured validator's checks at now.
func (c *OAuthConfig) validate(t UnsecuredToken, now time.Time) (scope string, err error) {
	switch {
	case !t.IssuedAt.IsZero() && t.IssuedAt.After(now.Add(c.ClockSkew)):
		return "", fmt.Errorf("the token was issued in the future")
	case !t.Expires.After(now.Add(-c.ClockSkew)):
		return "", fmt.Errorf("the token expired")
	case !t.IssuedAt.IsZero() && !t.Expires.After(t.IssuedAt):
		return "", fmt.Errorf("the token expires before it was issued")
	}
	for _, s := range c.RequiredScope {
		if !slices.Contains(t.Scope, s) {
			return strings.Join(c.RequiredScope, " "), fmt.Errorf("the token lacks the required scope %q", s)
		}
	}
	return "", nil
}

// oauthExchange is the server side of OAUTHBEARER: one client message;
// a token that fails validation is answered with Kafka's JSON error, the
// client acknowledges with a single 0x01, and the exchange fails with that
// JSON as its message.
type oauthExchange struct {
	cfg      OAuthConfig
	state    int // 0 want initial response, 1 sent an error, 2 done, 3 failed
	errorMsg string
	cause    error // why the token was refused
	user     string
	expires  time.Time // the token's exp: the session's lifetime (KIP-368)
}

// NewOAuthBearer starts an OAUTHBEARER exchange with the unsecured
// validator.
func NewOAuthBearer(cfg OAuthConfig) Exchange {
	if cfg.PrincipalClaim == "" {
		cfg.PrincipalClaim = "sub"
	}
	if cfg.ScopeClaim == "" {
		cfg.ScopeClaim = "scope"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &oauthExchange{cfg: cfg}
}

func (x *oauthExchange) Step(token []byte) ([]byte, bool, error) {
	switch x.state {
	case 1:
		x.state = 3
		return nil, false, &AuthError{Msg: x.errorMsg, Err: x.cause}
	case 0:
	default:
		return nil, false, errState
	}
	m, err := ParseOAuthClientFirst(token)
	if err != nil {
		x.state = 3
		return nil, false, err
	}
	principal, expires, scope, err := x.validate(m.Token)
	if err != nil {
		// Kafka's jsonErrorResponse for the validator's invalid_token.
		x.errorMsg = `{"status":"invalid_token"`
		if scope != "" {
			x.errorMsg += `, "scope":"` + scope + `"`
		}
		x.errorMsg += "}"
		x.state, x.cause = 1, err
		return []byte(x.errorMsg), false, nil
	}
	if m.AuthzID != "" && m.AuthzID != principal {
		x.state = 3
		return nil, false, &AuthError{Msg: fmt.Sprintf("Authentication failed: Client requested an authorization id (%s) that is different from the token's principal name (%s)", m.AuthzID, principal)}
	}
	x.user, x.expires, x.state = principal, expires, 2
	return []byte{}, true, nil
}

// validate checks a token with the configured validator. scope is the
// scope to name in the error answer, if any.
func (x *oauthExchange) validate(token string) (principal string, expires time.Time, scope string, err error) {
	now := x.cfg.Now()
	if x.cfg.Keys != nil {
		t, err := x.cfg.validateSigned(token, now)
		return t.Principal, t.Expires, "", err
	}
	t, err := ParseUnsecuredJWS(token, x.cfg.PrincipalClaim, x.cfg.ScopeClaim)
	if err != nil {
		return "", time.Time{}, "", err
	}
	scope, err = x.cfg.validate(t, now)
	return t.Principal, t.Expires, scope, err
}

// Expiry is when the authenticated token expires: the session ends then
// (KIP-368), sooner if connections.max.reauth.ms says so.
func (x *oauthExchange) Expiry() time.Time {
	if x.state != 2 {
		return time.Time{}
	}
	return x.expires
}

func (x *oauthExchange) User() string {
	if x.state != 2 {
		return ""
	}
	return x.user
}
