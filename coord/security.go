package coord

import (
	"context"

	"kzero/coord/metadata"
)

// AlterScramCredentials applies SCRAM credential changes
// (metadata.ScramCredential and metadata.RemoveScramCredential records),
// one group per user, each applied whole or not at all; one Result per
// group. The caller derives the credentials (net/api, from the salted
// passwords of AlterUserScramCredentials) and checks the request; the
// metadata log's check refuses the deletion of a credential that is gone.
func (c *Controller) AlterScramCredentials(ctx context.Context, groups [][]metadata.Record) []Result {
	return c.proposeEach(ctx, groups)
}

// AlterACLs applies ACL changes (metadata.ACL and metadata.RemoveACL
// records), each group whole or not at all; one Result per group. The
// caller (net/api) validates the ACLs and picks their ids.
func (c *Controller) AlterACLs(ctx context.Context, groups [][]metadata.Record) []Result {
	return c.proposeEach(ctx, groups)
}

// proposeEach proposes groups and returns one Result per group.
func (c *Controller) proposeEach(ctx context.Context, groups [][]metadata.Record) []Result {
	results := make([]Result, len(groups))
	if len(groups) == 0 {
		return results
	}
	out, err := c.propose(ctx, groups)
	for i := range groups {
		if err != nil {
			results[i] = Result{codeFor(err), err.Error()}
			continue
		}
		results[i].set(out[i])
	}
	return results
}

// AlterClientQuotas applies client quota changes (metadata.ClientQuota
// records), one group per entity, each whole or not at all; one Result
// per group. The caller (net/api) validates keys and values with Kafka's
// errors.
func (c *Controller) AlterClientQuotas(ctx context.Context, groups [][]metadata.Record) []Result {
	return c.proposeEach(ctx, groups)
}
