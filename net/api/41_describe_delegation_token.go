package api

// DescribeDelegationToken: v1-v3 (v0 removed in Kafka 4; v3 adds the
// token requester). Owners filters by owner (null: every token, empty:
// none). A token is listed to its owner, its requester and its renewers,
// and to principals with DESCRIBE on the token or DESCRIBE_TOKENS on its
// owner (KIP-373); errors as CreateDelegationToken's refusals.

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/net/server"
)

func init() {
	register(kmsg.DescribeDelegationToken.Int16(), 0, 3, (*Handler).describeDelegationToken).since4(1)
}

func (h *Handler) describeDelegationToken(req *server.Request) error {
	r := kmsg.NewPtrDescribeDelegationTokenRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDescribeDelegationTokenResponse()
	if resp.ErrorCode = h.tokenRefusal(req); resp.ErrorCode != 0 || r.Owners != nil && len(r.Owners) == 0 {
		respond(req, resp)
		return nil
	}
	principal := h.session(req.Conn()).principal
	var tokens []metadata.DelegationToken
	for _, t := range h.cluster.Image().DelegationTokens() {
		if r.Owners != nil && !slices.ContainsFunc(r.Owners, func(o kmsg.DescribeDelegationTokenRequestOwner) bool {
			return o.PrincipalType+":"+o.PrincipalName == t.Owner
		}) {
			continue
		}
		if t.Owner != principal && t.Requester != principal && !slices.Contains(t.Renewers, principal) &&
			!h.authorized(req, opDescribe, resDelegation, t.TokenID) && !h.authorized(req, opDescribeTokens, resUser, t.Owner) {
			continue
		}
		tokens = append(tokens, t)
	}
	slices.SortFunc(tokens, func(a, b metadata.DelegationToken) int {
		return cmp.Or(cmp.Compare(a.Issued, b.Issued), cmp.Compare(a.TokenID, b.TokenID))
	})
	for _, t := range tokens {
		d := kmsg.NewDescribeDelegationTokenResponseTokenDetail()
		d.PrincipalType, d.PrincipalName = splitPrincipal(t.Owner)
		d.TokenRequesterPrincipalType, d.TokenRequesterPrincipalName = splitPrincipal(t.Requester)
		d.IssueTimestamp, d.ExpiryTimestamp, d.MaxTimestamp = t.Issued, t.Expiry, t.MaxExpiry
		d.TokenID, d.HMAC = t.TokenID, h.tokenHMAC(t.TokenID)
		for _, rn := range t.Renewers {
			o := kmsg.NewDescribeDelegationTokenResponseTokenDetailRenewer()
			o.PrincipalType, o.PrincipalName = splitPrincipal(rn)
			d.Renewers = append(d.Renewers, o)
		}
		resp.TokenDetails = append(resp.TokenDetails, d)
	}
	respond(req, resp)
	return nil
}
