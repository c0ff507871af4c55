package metadata

import (
	"math"
	"testing"
)

// TestClientQuotas: quota values set, change and go, an entity with none
// left disappears, the older image is untouched, and a snapshot keeps
// them all (defaults included).
func TestClientQuotas(t *testing.T) {
	alice := QuotaEntity{User: Named("alice")}
	dflt := QuotaEntity{User: DefaultName(), ClientID: DefaultName()}
	b := NewBuilder(EmptyImage())
	rej := b.ApplyProposal(&Proposal{Groups: [][]Record{
		{&ClientQuota{Entity: alice, Key: "producer_byte_rate", Value: 1000}, &ClientQuota{Entity: alice, Key: "consumer_byte_rate", Value: 2000}},
		{&ClientQuota{Entity: dflt, Key: "request_percentage", Value: 12.5}},
		{&ClientQuota{Key: "producer_byte_rate", Value: 1}},
	}}, 1)
	if rej[0] != nil || rej[1] != nil || rej[2] == nil {
		t.Fatalf("rejections %+v", rej)
	}
	img := b.Finish(1)
	again, err := DecodeImage(EncodeImage(img), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range []*Image{img, again} {
		if v, _ := im.ClientQuota(alice, "consumer_byte_rate"); v != 2000 {
			t.Fatalf("consumer_byte_rate %v", v)
		}
		if v, _ := im.ClientQuota(dflt, "request_percentage"); v != 12.5 {
			t.Fatalf("request_percentage %v", v)
		}
	}
	b = NewBuilder(again)
	rej = b.ApplyProposal(&Proposal{Groups: [][]Record{{
		&ClientQuota{Entity: alice, Key: "producer_byte_rate", Remove: true},
		&ClientQuota{Entity: alice, Key: "consumer_byte_rate", Remove: true},
		&ClientQuota{Entity: dflt, Key: "request_percentage", Value: 50},
	}}}, 2)
	if rej[0] != nil {
		t.Fatal(rej[0])
	}
	next := b.Finish(2)
	if _, ok := next.ClientQuotas()[alice]; ok {
		t.Fatal("alice's entity outlived its last value")
	}
	if v, _ := next.ClientQuota(dflt, "request_percentage"); v != 50 {
		t.Fatalf("request_percentage %v", v)
	}
	if v, _ := again.ClientQuota(dflt, "request_percentage"); v != 12.5 {
		t.Fatal("the older image changed")
	}
}

// TestClientQuotaDecodeRefuses: a value that is not finite, or a name on
// a default part, does not decode.
func TestClientQuotaDecodeRefuses(t *testing.T) {
	for _, r := range []*ClientQuota{
		{Entity: QuotaEntity{User: Named("a")}, Key: "k", Value: math.NaN()},
		{Entity: QuotaEntity{User: Named("a")}, Key: "k", Value: math.Inf(1)},
		{Entity: QuotaEntity{User: QuotaName{Kind: QuotaDefault, Name: "x"}}, Key: "k", Value: 1},
		{Entity: QuotaEntity{User: QuotaName{Kind: 3}}, Key: "k", Value: 1},
	} {
		if _, err := DecodeRecord(AppendRecord(nil, r)); err == nil {
			t.Fatalf("%+v decoded", r)
		}
	}
}
