package api

// ExpireDelegationToken: v1-v2 (v0 removed in Kafka 4). A negative
// ExpiryPeriodMillis removes the token now; otherwise it expires that long
// from now (never past its max lifetime). Errors as RenewDelegationToken.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() {
	register(kmsg.ExpireDelegationToken.Int16(), 0, 2, (*Handler).expireDelegationToken).since4(1)
}

func (h *Handler) expireDelegationToken(req *server.Request) error {
	r := kmsg.NewPtrExpireDelegationTokenRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrExpireDelegationTokenResponse()
	resp.ExpiryTimestamp, resp.ErrorCode = h.changeExpiry(req, r.HMAC, r.ExpiryPeriodMillis, true)
	respond(req, resp)
	return nil
}
