package api

// AlterClientQuotas: v0-v1 (KIP-546; v1 flexible). Needs ALTER_CONFIGS on
// the cluster, else every entry answers CLUSTER_AUTHORIZATION_FAILED (the
// controller's authorizeClusterOperation). Each entry sets or removes
// quota values of one entity, stored as ClientQuota metadata records; an
// unchanged value or the removal of one not set writes nothing. Errors,
// Kafka's (ClientQuotaControlManager), all INVALID_REQUEST: a key twice
// in an entry, an entity twice in the request, an empty entity, an
// unknown entity type, a part twice, an empty name, ip combined with user
// or client-id, a key the entity cannot carry, a value not above 0, a
// fraction for a byte rate. validate_only checks and writes nothing.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/net/server"
)

func init() {
	register(kmsg.AlterClientQuotas.Int16(), 0, 1, (*Handler).alterClientQuotas)
}

func (h *Handler) alterClientQuotas(req *server.Request) error {
	r := kmsg.NewPtrAlterClientQuotasRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrAlterClientQuotasResponse()
	resp.Entries = make([]kmsg.AlterClientQuotasResponseEntry, len(r.Entries))
	for i, in := range r.Entries {
		out := &resp.Entries[i]
		*out = kmsg.NewAlterClientQuotasResponseEntry()
		for _, p := range in.Entity {
			ent := kmsg.NewAlterClientQuotasResponseEntryEntity()
			ent.Type, ent.Name = p.Type, p.Name
			out.Entity = append(out.Entity, ent)
		}
	}
	setErr := func(i int, e error, msg string) {
		resp.Entries[i].ErrorCode, resp.Entries[i].ErrorMessage = errCode(e), strPtr(msg)
	}
	if !h.authorized(req, opAlterCfg, resCluster, clusterName) {
		for i := range resp.Entries {
			setErr(i, kerr.ClusterAuthorizationFailed, kerr.ClusterAuthorizationFailed.Description)
		}
		respond(req, resp)
		return nil
	}
	img := h.cluster.Image()
	var groups [][]metadata.Record
	var owners []int // entry index of each group
	seen := map[metadata.QuotaEntity]int{}
	for i, in := range r.Entries {
		types, names := make([]string, len(in.Entity)), make([]*string, len(in.Entity))
		for j, p := range in.Entity {
			types[j], names[j] = p.Type, p.Name
		}
		e, keys, err := quotaEntity(types, names)
		if err != nil {
			setErr(i, kerr.InvalidRequest, err.Error())
			continue
		}
		if first, dup := seen[e]; dup {
			msg := fmt.Sprintf("Ignoring duplicate entity %s", quotaEntityString(e))
			setErr(first, kerr.InvalidRequest, msg)
			setErr(i, kerr.InvalidRequest, msg)
			continue
		}
		seen[e] = i
		recs, err := quotaChanges(img, e, keys, in.Ops)
		if err != nil {
			setErr(i, kerr.InvalidRequest, err.Error())
			continue
		}
		if len(recs) > 0 {
			groups, owners = append(groups, recs), append(owners, i)
		}
	}
	// A duplicate entity fails its first entry too: drop that entry's group.
	var keep [][]metadata.Record
	var keepOwners []int
	for g, i := range owners {
		if resp.Entries[i].ErrorCode == 0 {
			keep, keepOwners = append(keep, groups[g]), append(keepOwners, i)
		}
	}
	if len(keep) > 0 && !r.ValidateOnly {
		ctx, cancel := context.WithTimeout(context.Background(), alterTimeout)
		results := h.cluster.AlterClientQuotas(ctx, keep)
		cancel()
		for g, i := range keepOwners {
			if results[g].Err != nil {
				setErr(i, results[g].Err, results[g].Message)
			}
		}
	}
	respond(req, resp)
	return nil
}

// quotaChanges turns one entry's ops into records: a key twice, an
// invalid key or value fails the entry.
func quotaChanges(img *metadata.Image, e metadata.QuotaEntity, keys map[string]quotaKind, ops []kmsg.AlterClientQuotasRequestEntryOp) ([]metadata.Record, error) {
	seen := map[string]bool{}
	var recs []metadata.Record
	for _, op := range ops {
		if seen[op.Key] {
			return nil, fmt.Errorf("Duplicate quota key %s not updating quota for this entity %s", op.Key, quotaEntityString(e))
		}
		seen[op.Key] = true
		cur, set := img.ClientQuota(e, op.Key)
		if op.Remove {
			if set {
				recs = append(recs, &metadata.ClientQuota{Entity: e, Key: op.Key, Remove: true})
			}
			continue
		}
		if err := checkQuotaValue(keys, op.Key, op.Value); err != nil {
			return nil, err
		}
		if !set || cur != op.Value {
			recs = append(recs, &metadata.ClientQuota{Entity: e, Key: op.Key, Value: op.Value})
		}
	}
	return recs, nil
}

// quotaEntityString names an entity in messages, as Kafka's
// ClientQuotaEntity prints it.
func quotaEntityString(e metadata.QuotaEntity) string {
	types, names := quotaEntityParts(e)
	s := "ClientQuotaEntity(entries={"
	for i := range types {
		if i > 0 {
			s += ", "
		}
		n := "null"
		if names[i] != nil {
			n = *names[i]
		}
		s += types[i] + "=" + n
	}
	return s + "})"
}
