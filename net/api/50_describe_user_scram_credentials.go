package api

// DescribeUserScramCredentials: v0 (KIP-554). Lists each user's SCRAM
// mechanisms and iterations, never salts or keys. No users named: every
// user with a credential. A user named twice: DUPLICATE_RESOURCE; a user
// without credentials: RESOURCE_NOT_FOUND, with Kafka's messages.

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() {
	register(kmsg.DescribeUserSCRAMCredentials.Int16(), 0, 0, (*Handler).describeUserScramCredentials)
}

func (h *Handler) describeUserScramCredentials(req *server.Request) error {
	r := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	if !h.authorized(req, opDescribe, resCluster, clusterName) {
		resp := kmsg.NewPtrDescribeUserSCRAMCredentialsResponse()
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		resp.ErrorMessage = strPtr(kerr.ClusterAuthorizationFailed.Description)
		respond(req, resp)
		return nil
	}
	creds := h.cluster.Image().ScramCredentials()
	named := map[string]bool{} // user -> named twice
	if len(r.Users) == 0 {
		for k := range creds {
			named[k.User] = false
		}
	} else {
		for _, u := range r.Users {
			_, seen := named[u.Name]
			named[u.Name] = seen
		}
	}
	resp := kmsg.NewPtrDescribeUserSCRAMCredentialsResponse()
	for _, user := range slices.Sorted(maps.Keys(named)) {
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User = user
		if named[user] {
			res.ErrorCode = kerr.DuplicateResource.Code
			res.ErrorMessage = strPtr("Cannot describe SCRAM credentials for the same user twice in a single request: " + user)
			resp.Results = append(resp.Results, res)
			continue
		}
		for _, mech := range []int8{1, 2} {
			if c, ok := creds[scramKey(user, mech)]; ok {
				ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				ci.Mechanism, ci.Iterations = mech, c.Iterations
				res.CredentialInfos = append(res.CredentialInfos, ci)
			}
		}
		if len(res.CredentialInfos) == 0 {
			res.ErrorCode = kerr.ResourceNotFound.Code
			res.ErrorMessage = strPtr("Attempt to describe a user credential that does not exist: " + user)
		}
		resp.Results = append(resp.Results, res)
	}
	respond(req, resp)
	return nil
}

func strPtr(s string) *string { return &s }
