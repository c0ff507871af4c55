package api

import (
	"fmt"
	"math"

	"kzero/coord/metadata"
)

// Client quota entities and keys as Kafka names them on the wire
// (ClientQuotaEntity, QuotaConfig), shared by DescribeClientQuotas and
// AlterClientQuotas.

// Quota entity types.
const (
	quotaUser     = "user"
	quotaClientID = "client-id"
	quotaIP       = "ip"
)

// quotaKind is how Kafka checks a quota key's value (its ConfigDef type).
type quotaKind int8

const (
	quotaLong quotaKind = iota
	quotaInt
	quotaDouble
)

// userClientQuotaKeys are the keys of user and client-id entities.
var userClientQuotaKeys = map[string]quotaKind{
	"producer_byte_rate":       quotaLong,
	"consumer_byte_rate":       quotaLong,
	"request_percentage":       quotaDouble,
	"controller_mutation_rate": quotaDouble,
}

// ipQuotaKeys are the keys of ip entities.
var ipQuotaKeys = map[string]quotaKind{"connection_creation_rate": quotaInt}

// quotaPart returns the entity part of a wire name: nil is the default.
func quotaPart(name *string) metadata.QuotaName {
	if name == nil {
		return metadata.DefaultName()
	}
	return metadata.Named(*name)
}

// wireName is a part's wire name: nil for the default.
func wireName(n metadata.QuotaName) *string {
	if n.Kind == metadata.QuotaDefault {
		return nil
	}
	s := n.Name
	return &s
}

// quotaEntityParts lists an entity's set parts as (type, wire name).
func quotaEntityParts(e metadata.QuotaEntity) (types []string, names []*string) {
	for _, p := range [...]struct {
		typ string
		n   metadata.QuotaName
	}{{quotaUser, e.User}, {quotaClientID, e.ClientID}, {quotaIP, e.IP}} {
		if p.n.Kind != metadata.QuotaAbsent {
			types, names = append(types, p.typ), append(names, wireName(p.n))
		}
	}
	return types, names
}

// quotaEntity builds an entity from its wire parts with Kafka's checks
// (ClientQuotaControlManager.validateEntity and configKeysForEntityType),
// and returns the keys it may carry. The error message is Kafka's, for
// INVALID_REQUEST.
func quotaEntity(types []string, names []*string) (metadata.QuotaEntity, map[string]quotaKind, error) {
	var e metadata.QuotaEntity
	if len(types) == 0 {
		return e, nil, fmt.Errorf("Invalid empty client quota entity")
	}
	for i, typ := range types {
		var part *metadata.QuotaName
		switch typ {
		case quotaUser:
			part = &e.User
		case quotaClientID:
			part = &e.ClientID
		case quotaIP:
			part = &e.IP
		default:
			return e, nil, fmt.Errorf("Unhandled client quota entity type: %s", typ)
		}
		if part.Kind != metadata.QuotaAbsent {
			return e, nil, fmt.Errorf("Invalid client quota entity, duplicate entity entry %s", typ)
		}
		if names[i] != nil && *names[i] == "" {
			return e, nil, fmt.Errorf("Empty %s not supported", typ)
		}
		*part = quotaPart(names[i])
	}
	if e.IP.Kind != metadata.QuotaAbsent {
		if e.User.Kind != metadata.QuotaAbsent || e.ClientID.Kind != metadata.QuotaAbsent {
			return e, nil, fmt.Errorf("Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId")
		}
		return e, ipQuotaKeys, nil
	}
	return e, userClientQuotaKeys, nil
}

// checkQuotaValue is Kafka's validateQuotaKeyValue.
func checkQuotaValue(keys map[string]quotaKind, key string, v float64) error {
	kind, ok := keys[key]
	if !ok {
		return fmt.Errorf("Invalid configuration key %s", key)
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("Quota %s must be greater than 0", key)
	}
	switch kind {
	case quotaInt:
		if v > math.MaxInt32 {
			return fmt.Errorf("Proposed value for %s is too large for an INT.", key)
		}
	case quotaLong:
		if v > math.MaxInt64 {
			return fmt.Errorf("Proposed value for %s is too large for a LONG.", key)
		}
	case quotaDouble:
		return nil
	}
	if math.Abs(math.Mod(v, 1)) > 1e-6 {
		return fmt.Errorf("%s cannot be a fractional value.", key)
	}
	return nil
}
