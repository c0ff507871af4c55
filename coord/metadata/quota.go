package metadata

import (
	"cmp"
	"errors"
	"math"
	"strings"
)

// ClientQuota sets or removes one quota value of one client quota entity
// (Kafka's ClientQuotaRecord): Key is producer_byte_rate,
// consumer_byte_rate, request_percentage, controller_mutation_rate (user
// and client-id entities) or connection_creation_rate (ip entities); Value
// is ignored when Remove is set. The record carries no validation of its
// own beyond a finite value: net/api checks keys and values with Kafka's
// errors before proposing.
type ClientQuota struct {
	Entity QuotaEntity
	Key    string
	Value  float64
	Remove bool
}

// QuotaEntity is what a quota applies to: a user, a client id, both, or
// an ip; each part absent, named, or the default (Kafka's null name,
// written <default> by kafka-configs.sh). Comparable, so it keys maps.
type QuotaEntity struct {
	User, ClientID, IP QuotaName
}

// QuotaName is one part of a QuotaEntity.
type QuotaName struct {
	Kind QuotaNameKind
	Name string // Kind == QuotaNamed only
}

// QuotaNameKind says whether an entity part is there, and how.
type QuotaNameKind uint8

// Kinds of entity parts.
const (
	QuotaAbsent  QuotaNameKind = 0
	QuotaNamed   QuotaNameKind = 1
	QuotaDefault QuotaNameKind = 2
)

// Named is the entity part name.
func Named(name string) QuotaName { return QuotaName{Kind: QuotaNamed, Name: name} }

// DefaultName is the entity part that stands for every name without its
// own quota.
func DefaultName() QuotaName { return QuotaName{Kind: QuotaDefault} }

// Empty reports whether no part is set.
func (e QuotaEntity) Empty() bool {
	return e.User.Kind == QuotaAbsent && e.ClientID.Kind == QuotaAbsent && e.IP.Kind == QuotaAbsent
}

func (*ClientQuota) Type() RecordType { return TypeClientQuota }

func (r *ClientQuota) appendFields(b []byte) []byte {
	for _, n := range [...]QuotaName{r.Entity.User, r.Entity.ClientID, r.Entity.IP} {
		b = append(b, byte(n.Kind))
		b = appendString(b, n.Name)
	}
	b = appendString(b, r.Key)
	b = appendUint64(b, math.Float64bits(r.Value))
	return appendBool(b, r.Remove)
}

func (r *reader) quotaName() QuotaName {
	k := QuotaNameKind(r.byte())
	n := QuotaName{Kind: k, Name: r.string()}
	if k > QuotaDefault || (k != QuotaNamed && n.Name != "") {
		r.fail(errors.New("metadata: bad quota entity name"))
	}
	return n
}

func decodeClientQuota(r *reader) *ClientQuota {
	q := &ClientQuota{Entity: QuotaEntity{User: r.quotaName(), ClientID: r.quotaName(), IP: r.quotaName()}}
	q.Key = r.string()
	q.Value = math.Float64frombits(r.uint64())
	q.Remove = r.bool()
	if math.IsNaN(q.Value) || math.IsInf(q.Value, 0) {
		r.fail(errors.New("metadata: quota value not finite"))
	}
	return q
}

// ClientQuotas returns every entity's quota values. Read only.
func (img *Image) ClientQuotas() map[QuotaEntity]map[string]float64 { return img.quotas }

// ClientQuota returns one quota value of an entity.
func (img *Image) ClientQuota(e QuotaEntity, key string) (float64, bool) {
	v, ok := img.quotas[e][key]
	return v, ok
}

func compareQuotaNames(a, b QuotaName) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), strings.Compare(a.Name, b.Name))
}

// compareQuotaEntities orders entities for snapshots.
func compareQuotaEntities(a, b QuotaEntity) int {
	return cmp.Or(compareQuotaNames(a.User, b.User), compareQuotaNames(a.ClientID, b.ClientID), compareQuotaNames(a.IP, b.IP))
}
