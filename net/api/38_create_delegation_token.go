package api

// CreateDelegationToken: v1-v3 (v0 removed in Kafka 4; v3 names the
// owner, KIP-373). Errors, Kafka's: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
// and DELEGATION_TOKEN_AUTH_DISABLED (tokens.go); a renewer or owner that
// is not a User, INVALID_PRINCIPAL_TYPE; a token for another owner
// without CREATE_TOKENS on that user, DELEGATION_TOKEN_AUTHORIZATION_FAILED.
// MaxLifetimeMillis <= 0 takes delegation.token.max.lifetime.ms, and no
// request gets more; the token first expires after
// delegation.token.expiry.time.ms (or at its max lifetime).

import (
	"encoding/base64"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/net/server"
)

func init() {
	register(kmsg.CreateDelegationToken.Int16(), 0, 3, (*Handler).createDelegationToken).since4(1)
}

func (h *Handler) createDelegationToken(req *server.Request) error {
	r := kmsg.NewPtrCreateDelegationTokenRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrCreateDelegationTokenResponse()
	requester := h.session(req.Conn()).principal
	owner := requester
	if r.Version >= 3 && r.OwnerPrincipalName != nil && *r.OwnerPrincipalName != "" {
		typ := "User"
		if r.OwnerPrincipalType != nil {
			typ = *r.OwnerPrincipalType
		}
		owner = typ + ":" + *r.OwnerPrincipalName
	}
	resp.PrincipalType, resp.PrincipalName = splitPrincipal(owner)
	resp.TokenRequesterPrincipalType, resp.TokenRequesterPrincipalName = splitPrincipal(requester)
	fail := func(code int16) error {
		resp.ErrorCode = code
		respond(req, resp)
		return nil
	}
	if code := h.tokenRefusal(req); code != 0 {
		return fail(code)
	}
	if typ, _ := splitPrincipal(owner); typ != "User" {
		return fail(kerr.InvalidPrincipalType.Code)
	}
	if owner != requester && !h.authorized(req, opCreateTokens, resUser, owner) {
		return fail(kerr.DelegationTokenAuthorizationFailed.Code)
	}
	var renewers []string
	for _, rn := range r.Renewers {
		if rn.PrincipalType != "User" {
			return fail(kerr.InvalidPrincipalType.Code)
		}
		renewers = append(renewers, rn.PrincipalType+":"+rn.PrincipalName)
	}
	maxLifetime, expiry := h.tokenLifetimes()
	if r.MaxLifetimeMillis > 0 {
		maxLifetime = min(maxLifetime, time.Duration(r.MaxLifetimeMillis)*time.Millisecond)
	}
	id := metadata.NewUUID()
	now := time.Now().UnixMilli()
	t := &metadata.DelegationToken{TokenID: base64.RawURLEncoding.EncodeToString(id[:]), Owner: owner, Requester: requester,
		Renewers: renewers, Issued: now, MaxExpiry: now + maxLifetime.Milliseconds()}
	t.Expiry = min(now+expiry.Milliseconds(), t.MaxExpiry)
	if code := h.alterToken(t); code != 0 {
		return fail(code)
	}
	resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = t.Issued, t.Expiry, t.MaxExpiry
	resp.TokenID, resp.HMAC = t.TokenID, h.tokenHMAC(t.TokenID)
	respond(req, resp)
	return nil
}
