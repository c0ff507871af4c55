package coord

import (
	"context"
	"maps"
	"slices"
	"time"

	"kzero/coord/metadata"
)

// AlterDelegationTokens applies delegation token changes
// (metadata.DelegationToken and metadata.RemoveDelegationToken records),
// each group whole or not at all; one Result per group. The caller
// (net/api) checks the request against the token it read from the image;
// the token's record names its expiry, so two concurrent renewals simply
// apply in turn.
func (c *Controller) AlterDelegationTokens(ctx context.Context, groups [][]metadata.Record) []Result {
	return c.proposeEach(ctx, groups)
}

// expiredTokens is the group that removes the delegation tokens whose
// expiry passed (Kafka's expiry check, every
// delegation.token.expiry.check.interval.ms there; here every tick of the
// active controller, which costs a scan of the tokens), none when no token
// expired.
func expiredTokens(img *metadata.Image, now time.Time) [][]metadata.Record {
	var group []metadata.Record
	ms := now.UnixMilli()
	for _, id := range slices.Sorted(maps.Keys(img.DelegationTokens())) {
		if t := img.DelegationTokens()[id]; t.Expiry < ms {
			group = append(group, &metadata.RemoveDelegationToken{TokenID: id})
		}
	}
	if group == nil {
		return nil
	}
	return [][]metadata.Record{group}
}
