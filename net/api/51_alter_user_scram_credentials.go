package api

// AlterUserScramCredentials: v0 (KIP-554). Upserts carry a salted password
// (the client salts it); the broker stores the salt, the stored key and the
// server key derived from it (net/sasl), never the password, as metadata
// records. Each user's changes apply whole or not at all. Errors, Kafka's
// (ScramControlManager): a user altered twice, DUPLICATE_RESOURCE; an empty
// name or iterations outside 4096..16384, UNACCEPTABLE_CREDENTIAL; an
// unknown mechanism, UNSUPPORTED_SASL_MECHANISM; deleting a credential that
// does not exist, RESOURCE_NOT_FOUND.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/net/sasl"
	"kzero/net/server"
)

func init() {
	register(kmsg.AlterUserSCRAMCredentials.Int16(), 0, 0, (*Handler).alterUserScramCredentials)
}

// alterTimeout bounds how long an alter waits for the metadata log.
const alterTimeout = 30 * time.Second

func scramKey(user string, mech int8) metadata.ScramKey {
	return metadata.ScramKey{User: user, Mechanism: mech}
}

func (h *Handler) alterUserScramCredentials(req *server.Request) error {
	r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	type userErr struct {
		code int16
		msg  string
	}
	failed := map[string]userErr{}
	denied := !h.authorized(req, opAlter, resCluster, clusterName)
	changes := map[string][]metadata.Record{}
	var order []string
	add := func(user string, rec metadata.Record) {
		if _, ok := changes[user]; !ok {
			order = append(order, user)
		}
		changes[user] = append(changes[user], rec)
	}
	fail := func(user string, err *kerr.Error, msg string) {
		if _, ok := failed[user]; !ok {
			failed[user] = userErr{err.Code, msg}
		}
	}
	img := h.cluster.Image()
	seen := map[string]bool{}
	check := func(user string, mech int8) bool {
		if denied {
			fail(user, kerr.ClusterAuthorizationFailed, kerr.ClusterAuthorizationFailed.Description)
			return false
		}
		if seen[user] {
			fail(user, kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
			return false
		}
		seen[user] = true
		if user == "" {
			fail(user, kerr.UnacceptableCredential, "Username must not be empty")
			return false
		}
		if sasl.ScramByType(mech) == nil {
			fail(user, kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
			return false
		}
		return true
	}
	for _, d := range r.Deletions {
		if !check(d.Name, d.Mechanism) {
			continue
		}
		if _, ok := img.ScramCredential(d.Name, d.Mechanism); !ok {
			fail(d.Name, kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist")
			continue
		}
		add(d.Name, &metadata.RemoveScramCredential{User: d.Name, Mechanism: d.Mechanism})
	}
	for _, u := range r.Upsertions {
		if !check(u.Name, u.Mechanism) {
			continue
		}
		switch {
		case u.Iterations < sasl.MinIterations:
			fail(u.Name, kerr.UnacceptableCredential, "Too few iterations")
			continue
		case u.Iterations > sasl.MaxIterations:
			fail(u.Name, kerr.UnacceptableCredential, "Too many iterations")
			continue
		}
		m := sasl.ScramByType(u.Mechanism)
		c := m.CredentialFromSalted(u.SaltedPassword, append([]byte(nil), u.Salt...), u.Iterations)
		add(u.Name, &metadata.ScramCredential{User: u.Name, Mechanism: u.Mechanism, Salt: c.Salt,
			StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations})
	}
	resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
	result := func(user string, code int16, msg string) {
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User, res.ErrorCode = user, code
		if code != 0 {
			res.ErrorMessage = strPtr(msg)
		}
		resp.Results = append(resp.Results, res)
	}
	var groups [][]metadata.Record
	var owners []string
	for _, user := range order {
		if _, bad := failed[user]; !bad {
			groups = append(groups, changes[user])
			owners = append(owners, user)
		}
	}
	if len(groups) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), alterTimeout)
		results := h.cluster.AlterScramCredentials(ctx, groups)
		cancel()
		for i, user := range owners {
			code := int16(0)
			if results[i].Err != nil {
				code = errCode(results[i].Err)
			}
			result(user, code, results[i].Message)
		}
	}
	for user, e := range failed {
		result(user, e.code, e.msg)
	}
	respond(req, resp)
	return nil
}
