package api

// RenewDelegationToken: v1-v2 (v0 removed in Kafka 4). The token named by
// its HMAC expires RenewTimeMillis from now (negative: after
// delegation.token.expiry.time.ms), never past its max lifetime. Only its
// owner or a renewer may (DELEGATION_TOKEN_OWNER_MISMATCH); an unknown
// token is DELEGATION_TOKEN_NOT_FOUND, an expired one
// DELEGATION_TOKEN_EXPIRED.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() {
	register(kmsg.RenewDelegationToken.Int16(), 0, 2, (*Handler).renewDelegationToken).since4(1)
}

func (h *Handler) renewDelegationToken(req *server.Request) error {
	r := kmsg.NewPtrRenewDelegationTokenRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrRenewDelegationTokenResponse()
	resp.ExpiryTimestamp, resp.ErrorCode = h.changeExpiry(req, r.HMAC, r.RenewTimeMillis, false)
	respond(req, resp)
	return nil
}
