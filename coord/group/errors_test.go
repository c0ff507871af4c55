package group

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestCodeErr: code 0 is an untyped nil error (a typed nil *kerr.Error
// would make err != nil true for a success), and any other code its kerr
// sentinel.
func TestCodeErr(t *testing.T) {
	if err := codeErr(0); err != nil {
		t.Fatalf("codeErr(0) = %#v, want untyped nil", err)
	}
	if err := codeErr(kerr.UnknownMemberID.Code); err != kerr.UnknownMemberID {
		t.Fatalf("codeErr(UNKNOWN_MEMBER_ID) = %v", err)
	}
}
