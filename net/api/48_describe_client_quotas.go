package api

// DescribeClientQuotas: v0-v1 (KIP-546; v1 flexible). Needs
// DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
// Filter components match an entity type exactly (a name, or null for the
// default), its default, or any name; strict keeps only entities with no
// other parts. Errors, Kafka's (ClientQuotasImage.describe): an empty or
// repeated type, a match string where none belongs, an unknown match
// type, or ip combined with user or client-id, INVALID_REQUEST; an
// unknown entity type, UNSUPPORTED_VERSION.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/net/server"
)

func init() {
	register(kmsg.DescribeClientQuotas.Int16(), 0, 1, (*Handler).describeClientQuotas)
}

// quotaFilter is one entity type's filter: exact (a name or the default)
// or any name.
type quotaFilter struct {
	any   bool
	exact metadata.QuotaName
}

func (h *Handler) describeClientQuotas(req *server.Request) error {
	r := kmsg.NewPtrDescribeClientQuotasRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDescribeClientQuotasResponse()
	fail := func(e *kerr.Error, msg string) error {
		resp.ErrorCode, resp.ErrorMessage = e.Code, strPtr(msg)
		respond(req, resp)
		return nil
	}
	if !h.authorized(req, opDescribeCfg, resCluster, clusterName) {
		return fail(kerr.ClusterAuthorizationFailed, kerr.ClusterAuthorizationFailed.Description)
	}
	filters := map[string]quotaFilter{}
	for _, c := range r.Components {
		if c.EntityType == "" {
			return fail(kerr.InvalidRequest, "Invalid empty entity type.")
		}
		if _, dup := filters[c.EntityType]; dup {
			return fail(kerr.InvalidRequest, fmt.Sprintf("Entity type %s cannot appear more than once in the filter.", c.EntityType))
		}
		if c.EntityType != quotaUser && c.EntityType != quotaClientID && c.EntityType != quotaIP {
			return fail(kerr.UnsupportedVersion, "Unsupported entity type "+c.EntityType)
		}
		switch c.MatchType {
		case 0: // exact
			if c.Match == nil {
				return fail(kerr.InvalidRequest, "Request specified MATCH_TYPE_EXACT, but set match string to null.")
			}
			filters[c.EntityType] = quotaFilter{exact: metadata.Named(*c.Match)}
		case 1: // default
			if c.Match != nil {
				return fail(kerr.InvalidRequest, "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
			}
			filters[c.EntityType] = quotaFilter{exact: metadata.DefaultName()}
		case 2: // any
			if c.Match != nil {
				return fail(kerr.InvalidRequest, "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
			}
			filters[c.EntityType] = quotaFilter{any: true}
		default:
			return fail(kerr.InvalidRequest, fmt.Sprintf("Unknown match type %d", c.MatchType))
		}
	}
	_, ip := filters[quotaIP]
	_, user := filters[quotaUser]
	_, client := filters[quotaClientID]
	if ip && (user || client) {
		return fail(kerr.InvalidRequest, "Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.")
	}
	quotas := h.cluster.Image().ClientQuotas()
	for _, e := range slices.SortedFunc(maps.Keys(quotas), func(a, b metadata.QuotaEntity) int {
		return cmp.Or(cmp.Compare(a.User.Name, b.User.Name), cmp.Compare(a.ClientID.Name, b.ClientID.Name),
			cmp.Compare(a.IP.Name, b.IP.Name), cmp.Compare(a.User.Kind, b.User.Kind),
			cmp.Compare(a.ClientID.Kind, b.ClientID.Kind), cmp.Compare(a.IP.Kind, b.IP.Kind))
	}) {
		if !quotaMatches(e, filters, r.Strict) {
			continue
		}
		entry := kmsg.NewDescribeClientQuotasResponseEntry()
		types, names := quotaEntityParts(e)
		for i := range types {
			ent := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ent.Type, ent.Name = types[i], names[i]
			entry.Entity = append(entry.Entity, ent)
		}
		vals := quotas[e]
		for _, k := range slices.Sorted(maps.Keys(vals)) {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, vals[k]
			entry.Values = append(entry.Values, v)
		}
		resp.Entries = append(resp.Entries, entry)
	}
	respond(req, resp)
	return nil
}

// quotaMatches is Kafka's ClientQuotasImage.matches.
func quotaMatches(e metadata.QuotaEntity, filters map[string]quotaFilter, strict bool) bool {
	parts := map[string]metadata.QuotaName{quotaUser: e.User, quotaClientID: e.ClientID, quotaIP: e.IP}
	set := 0
	for _, p := range parts {
		if p.Kind != metadata.QuotaAbsent {
			set++
		}
	}
	if strict && set != len(filters) {
		return false
	}
	for typ, f := range filters {
		p := parts[typ]
		if p.Kind == metadata.QuotaAbsent || !f.any && p != f.exact {
			return false
		}
	}
	return true
}
