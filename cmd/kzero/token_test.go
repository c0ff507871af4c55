package main

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestDelegationTokens (KIP-48): alice, logged in with PLAIN, creates a
// token naming bob a renewer; a client logs in over SCRAM with the token
// (tokenauth) and acts as alice (her ACL lets it write), but may not
// create tokens; carol may neither renew nor see it; bob renews it; alice
// expires it, and the token no longer logs in. Token requests over
// PLAINTEXT are not allowed; the tokens survive a restart.
func TestDelegationTokens(t *testing.T) {
	dir := t.TempDir()
	props := append(saslProps(),
		"listener.name.sasl_plaintext.plain.sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required
			user_admin="admin-pw" user_alice="alice-pw" user_bob="bob-pw" user_carol="carol-pw";`,
		"authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users", "User:admin",
		"delegation.token.secret.key", "s3cret",
	)
	b := startTestBroker(t, dir, props...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	user := func(name string) *kadm.Client {
		return kadm.NewClient(newSASLClient(t, b, plain.Auth{User: name, Pass: name + "-pw"}.AsMechanism(), kgo.RequestRetries(1)))
	}
	admin := user("admin")
	if _, err := admin.CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	if res, err := admin.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpWrite)); err != nil || res[0].Err != nil {
		t.Fatalf("acl: %v %+v", err, res)
	}

	if _, err := kadm.NewClient(newClient(t, b)).CreateDelegationToken(ctx, kadm.CreateDelegationToken{}); !errors.Is(err, kerr.DelegationTokenRequestNotAllowed) {
		t.Fatalf("token over PLAINTEXT: %v, want DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", err)
	}
	alice := user("alice")
	tok, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Renewers: []kadm.Principal{{Name: "bob"}}})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Owner.Name != "alice" || len(tok.HMAC) != 64 || !tok.ExpiryTimestamp.After(tok.IssueTimestamp) || tok.MaxTimestamp.Before(tok.ExpiryTimestamp) {
		t.Fatalf("token %+v", tok)
	}
	tokenClient := func() *kgo.Client {
		mech := scram.Auth{User: tok.TokenID, Pass: base64HMAC(tok.HMAC), IsToken: true}.AsSha512Mechanism()
		return newSASLClient(t, b, mech, kgo.RequestRetries(1), kgo.DefaultProduceTopic("orders"))
	}
	tc := tokenClient()
	if err := tc.ProduceSync(ctx, &kgo.Record{Value: []byte("as alice")}).FirstErr(); err != nil {
		t.Fatalf("produce with alice's token: %v", err)
	}
	if _, err := kadm.NewClient(tc).CreateDelegationToken(ctx, kadm.CreateDelegationToken{}); !errors.Is(err, kerr.DelegationTokenRequestNotAllowed) {
		t.Fatalf("token from a token-authenticated connection: %v", err)
	}

	carol := user("carol")
	if _, err := carol.RenewDelegationToken(ctx, tok.HMAC, time.Hour); !errors.Is(err, kerr.DelegationTokenOwnerMismatch) {
		t.Fatalf("carol renews: %v, want DELEGATION_TOKEN_OWNER_MISMATCH", err)
	}
	if seen, err := carol.DescribeDelegationTokens(ctx); err != nil || len(seen) != 0 {
		t.Fatalf("carol sees %+v, %v", seen, err)
	}
	renewed, err := user("bob").RenewDelegationToken(ctx, tok.HMAC, 2*time.Hour)
	if want := tok.IssueTimestamp.Add(2 * time.Hour); err != nil || renewed.Before(want) || renewed.After(want.Add(time.Minute)) {
		t.Fatalf("bob renews: %v, %v", renewed, err)
	}

	stopBroker(t, b)
	b = startTestBroker(t, dir, props...)
	defer stopBroker(t, b)
	alice = user("alice")
	seen, err := alice.DescribeDelegationTokens(ctx)
	if err != nil || len(seen) != 1 || seen[0].TokenID != tok.TokenID || string(seen[0].HMAC) != string(tok.HMAC) ||
		!seen[0].ExpiryTimestamp.Equal(renewed) || len(seen[0].Renewers) != 1 {
		t.Fatalf("alice describes after a restart: %+v, %v", seen, err)
	}
	if _, err := alice.ExpireDelegationToken(ctx, tok.HMAC, -1); err != nil {
		t.Fatal(err)
	}
	if err := tokenClient().Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("an expired token logs in: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

func base64HMAC(mac []byte) string { return base64.StdEncoding.EncodeToString(mac) }
