package metadata

import (
	"errors"
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
	if rej[0] != nil || rej[1] == nil || !errors.Is(rej[1], kerr.ResourceNotFound) ||
		rej[2] == nil || !errors.Is(rej[2], kerr.UnacceptableCredential) || rej[3] == nil || !errors.Is(rej[3], kerr.UnsupportedSaslMechanism) {
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

// TestACLs: ACLs apply, survive a snapshot and are removed; invalid ones,
// taken ids and removals of unknown ids are refused by Check.
func TestACLs(t *testing.T) {
	a := &ACL{ID: NewUUID(), ResourceType: 2, ResourceName: "t", PatternType: 3, Principal: "User:a", Host: "*", Operation: 3, Permission: 3}
	bad := *a
	bad.ID, bad.PatternType = NewUUID(), 1 // ANY is a filter, not a pattern
	b := NewBuilder(EmptyImage())
	rej := b.ApplyProposal(&Proposal{Groups: [][]Record{{a}, {a}, {&bad}, {&RemoveACL{ID: NewUUID()}}}}, 1)
	if rej[0] != nil || rej[1] == nil || rej[2] == nil || rej[3] == nil || !errors.Is(rej[3], kerr.ResourceNotFound) {
		t.Fatalf("rejections %+v", rej)
	}
	img, err := DecodeImage(EncodeImage(b.Finish(1)), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.ACLs()[a.ID]; got == nil || *got != *a {
		t.Fatalf("after snapshot: %+v", got)
	}
	b = NewBuilder(img)
	if rej := b.ApplyProposal(&Proposal{Groups: [][]Record{{&RemoveACL{ID: a.ID}}}}, 2); rej[0] != nil {
		t.Fatalf("remove: %+v", rej[0])
	}
	if len(b.Finish(2).ACLs()) != 0 || len(img.ACLs()) != 1 {
		t.Fatal("remove changed the wrong image")
	}
}
