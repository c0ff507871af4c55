package metadata

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestScramCredentials: credentials apply, survive a snapshot, and are
// removed; removing one that does not exist is refused by Check.
func TestScramCredentials(t *testing.T) {
	cred := &ScramCredential{User: "alice", Mechanism: 1, Salt: []byte("s"), StoredKey: []byte("k1"), ServerKey: []byte("k2"), Iterations: 4096}
	b := NewBuilder(EmptyImage())
	rej := b.ApplyProposal(&Proposal{Groups: [][]Record{
		{cred},
		{&RemoveScramCredential{User: "bob", Mechanism: 1}},
		{&ScramCredential{User: "", Mechanism: 1}},
		{&ScramCredential{User: "x", Mechanism: 3}},
	}}, 1)
	if rej[0] != nil || rej[1] == nil || rej[1].Err != kerr.ResourceNotFound ||
		rej[2] == nil || rej[2].Err != kerr.UnacceptableCredential || rej[3] == nil || rej[3].Err != kerr.UnsupportedSaslMechanism {
		t.Fatalf("rejections %+v", rej)
	}
	img := b.Finish(1)
	got, ok := img.ScramCredential("alice", 1)
	if !ok || !reflect.DeepEqual(&got, cred) {
		t.Fatalf("credential %+v %v", got, ok)
	}
	again, err := DecodeImage(EncodeImage(img), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := again.ScramCredential("alice", 1); !ok || !reflect.DeepEqual(&got, cred) {
		t.Fatalf("after snapshot: %+v %v", got, ok)
	}
	b = NewBuilder(again)
	if rej := b.ApplyProposal(&Proposal{Groups: [][]Record{{&RemoveScramCredential{User: "alice", Mechanism: 1}}}}, 2); rej[0] != nil {
		t.Fatalf("remove: %+v", rej[0])
	}
	if _, ok := b.Finish(2).ScramCredential("alice", 1); ok {
		t.Fatal("credential still there")
	}
	if _, ok := again.ScramCredential("alice", 1); !ok {
		t.Fatal("the older image changed")
	}
}
