package api

// Delegation tokens (KIP-48): a client authenticated with SASL (or a TLS
// certificate) creates a token for itself (or, v3, for another principal
// it holds CREATE_TOKENS on); the token's HMAC, keyed by
// delegation.token.secret.key, is the password a client then logs in with
// over SCRAM (the tokenauth=true extension), as the token's owner.
// Tokens are metadata records (coord/metadata/token.go), so every broker
// knows every token and derives its HMAC; the active controller removes
// the expired ones. A connection authenticated with a token, and one that
// is not authenticated at all (PLAINTEXT, or SSL without a client
// certificate), may not create, renew, expire or describe tokens
// (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED); without a secret every token
// request is DELEGATION_TOKEN_AUTH_DISABLED.

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
	"kzero/net/sasl"
	"kzero/net/server"
)

// Kafka's defaults.
const (
	defaultTokenMaxLifetime = 7 * 24 * time.Hour // delegation.token.max.lifetime.ms
	defaultTokenExpiry      = 24 * time.Hour     // delegation.token.expiry.time.ms
)

// tokenCredentials caches the SCRAM credential derived from each token's
// HMAC (a PBKDF2 of 4096 rounds per mechanism: too slow to redo per
// login).
type tokenCredentials struct {
	mu    sync.Mutex
	creds map[tokenCredKey]sasl.Credential
}

type tokenCredKey struct {
	id        string
	mechanism int8
}

// tokenRefusal is the error a token request gets before anything else is
// looked at: 0 when it may go on.
func (h *Handler) tokenRefusal(req *server.Request) int16 {
	s := h.session(req.Conn())
	switch {
	case s.tokenAuth || s.listener.SecurityProtocol == ProtocolPlaintext ||
		s.listener.SecurityProtocol == ProtocolSSL && s.principal == anonymous:
		return kerr.DelegationTokenRequestNotAllowed.Code
	case h.cfg.DelegationTokenSecret == "":
		return kerr.DelegationTokenAuthDisabled.Code
	}
	return 0
}

// tokenHMAC is a token's HMAC: HMAC-SHA512 of its id keyed by the secret.
func (h *Handler) tokenHMAC(id string) []byte {
	mac := hmac.New(sha512.New, []byte(h.cfg.DelegationTokenSecret))
	mac.Write([]byte(id))
	return mac.Sum(nil)
}

// tokenByHMAC finds the token whose HMAC is mac.
func (h *Handler) tokenByHMAC(mac []byte) (metadata.DelegationToken, bool) {
	for _, t := range h.cluster.Image().DelegationTokens() {
		if hmac.Equal(h.tokenHMAC(t.TokenID), mac) {
			return t, true
		}
	}
	return metadata.DelegationToken{}, false
}

// tokenCredential is the SCRAM credential of an unexpired token, and its
// owner (sasl.TokenCredentials).
func (h *Handler) tokenCredential(id string, m *sasl.ScramMechanism) (sasl.Credential, string, bool) {
	if h.cfg.DelegationTokenSecret == "" {
		return sasl.Credential{}, "", false
	}
	t, ok := h.cluster.Image().DelegationToken(id)
	if !ok || t.Expiry < time.Now().UnixMilli() {
		return sasl.Credential{}, "", false
	}
	c := &h.tokens
	c.mu.Lock()
	defer c.mu.Unlock()
	key := tokenCredKey{id, m.Type}
	if cred, ok := c.creds[key]; ok {
		return cred, t.Owner, true
	}
	cred, err := m.NewCredential(base64.StdEncoding.EncodeToString(h.tokenHMAC(id)), sasl.MinIterations)
	if err != nil {
		return sasl.Credential{}, "", false
	}
	if c.creds == nil {
		c.creds = map[tokenCredKey]sasl.Credential{}
	}
	for k := range c.creds { // forget removed tokens
		if _, live := h.cluster.Image().DelegationToken(k.id); !live {
			delete(c.creds, k)
		}
	}
	c.creds[key] = cred
	return cred, t.Owner, true
}

// splitPrincipal splits Kafka's "Type:name".
func splitPrincipal(p string) (typ, name string) {
	typ, name, _ = strings.Cut(p, ":")
	return typ, name
}

// mayRenew reports whether principal may renew or expire t: its owner or
// one of its renewers, as Kafka's token manager decides.
func mayRenew(t metadata.DelegationToken, principal string) bool {
	return t.Owner == principal || slices.Contains(t.Renewers, principal)
}

// tokenLifetimes are the max lifetime and the renewal period in force.
func (h *Handler) tokenLifetimes() (maxLifetime, expiry time.Duration) {
	maxLifetime, expiry = h.cfg.DelegationTokenMaxLifetime, h.cfg.DelegationTokenExpiry
	if maxLifetime <= 0 {
		maxLifetime = defaultTokenMaxLifetime
	}
	if expiry <= 0 {
		expiry = defaultTokenExpiry
	}
	return maxLifetime, expiry
}

// alterToken proposes one token change and returns its error code.
func (h *Handler) alterToken(rec metadata.Record) int16 {
	ctx, cancel := context.WithTimeout(context.Background(), alterTimeout)
	defer cancel()
	res := h.cluster.AlterDelegationTokens(ctx, [][]metadata.Record{{rec}})
	if res[0].Err != nil {
		return errCode(res[0].Err)
	}
	return 0
}

// changeExpiry renews (period >= 0) or expires (period < 0, expire only)
// the token whose HMAC is mac, for RenewDelegationToken and
// ExpireDelegationToken, and returns the new expiry.
func (h *Handler) changeExpiry(req *server.Request, mac []byte, period int64, expire bool) (int64, int16) {
	if code := h.tokenRefusal(req); code != 0 {
		return 0, code
	}
	t, ok := h.tokenByHMAC(mac)
	if !ok {
		return 0, kerr.DelegationTokenNotFound.Code
	}
	if !mayRenew(t, h.session(req.Conn()).principal) {
		return 0, kerr.DelegationTokenOwnerMismatch.Code
	}
	now := time.Now().UnixMilli()
	if t.Expiry < now {
		return 0, kerr.DelegationTokenExpired.Code
	}
	if expire && period < 0 {
		return now, h.alterToken(&metadata.RemoveDelegationToken{TokenID: t.TokenID})
	}
	if period < 0 { // a renewal by the default period
		_, expiry := h.tokenLifetimes()
		period = expiry.Milliseconds()
	}
	t.Expiry = min(now+period, t.MaxExpiry)
	return t.Expiry, h.alterToken(&t)
}
