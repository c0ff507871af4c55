package quota

import "kzero/coord/metadata"

// Client is who a request comes from: the user name of its principal
// (Kafka's sanitized principal name; ANONYMOUS when unauthenticated) and
// its client id.
type Client struct {
	User, ClientID string
}

// Limits are one quota type's values by entity, as the metadata image
// holds them (metadata.ClientQuota records of one key).
type Limits map[metadata.QuotaEntity]float64

// precedence lists the entities that may apply to a client, most specific
// first, and the sensor each shares: which of user and client id the
// sensor keeps (ClientQuotaManager's DefaultQuotaCallback).
var precedence = [...]struct {
	user, client             metadata.QuotaNameKind // what the entity part must be
	sensorUser, sensorClient bool
}{
	{metadata.QuotaNamed, metadata.QuotaNamed, true, true},
	{metadata.QuotaNamed, metadata.QuotaDefault, true, true},
	{metadata.QuotaNamed, metadata.QuotaAbsent, true, false},
	{metadata.QuotaDefault, metadata.QuotaNamed, true, true},
	{metadata.QuotaDefault, metadata.QuotaDefault, true, true},
	{metadata.QuotaDefault, metadata.QuotaAbsent, true, false},
	{metadata.QuotaAbsent, metadata.QuotaNamed, false, true},
	{metadata.QuotaAbsent, metadata.QuotaDefault, false, true},
}

func part(kind metadata.QuotaNameKind, name string) metadata.QuotaName {
	if kind == metadata.QuotaNamed {
		return metadata.Named(name)
	}
	return metadata.QuotaName{Kind: kind}
}

// Resolve returns the quota that applies to c, the sensor it is counted
// in, and whether any applies.
func (l Limits) Resolve(c Client) (bound float64, sensor Client, ok bool) {
	for _, p := range precedence {
		e := metadata.QuotaEntity{User: part(p.user, c.User), ClientID: part(p.client, c.ClientID)}
		if v, found := l[e]; found {
			if p.sensorUser {
				sensor.User = c.User
			}
			if p.sensorClient {
				sensor.ClientID = c.ClientID
			}
			return v, sensor, true
		}
	}
	return 0, Client{}, false
}
