package quota

import (
	"testing"

	"kzero/coord/metadata"
)

// TestResolvePrecedence: with every level set, removing the most
// specific one at a time walks Kafka's order, and the sensor each level
// counts in keeps what Kafka's metric tags keep.
func TestResolvePrecedence(t *testing.T) {
	n, d, a := metadata.Named, metadata.DefaultName(), metadata.QuotaName{}
	levels := []struct {
		e      metadata.QuotaEntity
		sensor Client
	}{
		{metadata.QuotaEntity{User: n("u"), ClientID: n("c")}, Client{"u", "c"}},
		{metadata.QuotaEntity{User: n("u"), ClientID: d}, Client{"u", "c"}},
		{metadata.QuotaEntity{User: n("u"), ClientID: a}, Client{"u", ""}},
		{metadata.QuotaEntity{User: d, ClientID: n("c")}, Client{"u", "c"}},
		{metadata.QuotaEntity{User: d, ClientID: d}, Client{"u", "c"}},
		{metadata.QuotaEntity{User: d, ClientID: a}, Client{"u", ""}},
		{metadata.QuotaEntity{User: a, ClientID: n("c")}, Client{"", "c"}},
		{metadata.QuotaEntity{User: a, ClientID: d}, Client{"", "c"}},
	}
	l := Limits{}
	for i, lv := range levels {
		l[lv.e] = float64(i + 1)
	}
	// Quotas of other users and clients never apply.
	l[metadata.QuotaEntity{User: n("v")}] = 100
	l[metadata.QuotaEntity{ClientID: n("x")}] = 200
	for i, lv := range levels {
		bound, sensor, ok := l.Resolve(Client{"u", "c"})
		if !ok || bound != float64(i+1) || sensor != lv.sensor {
			t.Fatalf("level %d (%+v): got %v %+v %v", i, lv.e, bound, sensor, ok)
		}
		delete(l, lv.e)
	}
	if b, _, ok := l.Resolve(Client{"u", "c"}); ok {
		t.Fatalf("no level left, got %v", b)
	}
}
