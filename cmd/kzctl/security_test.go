package main

import (
	"strings"
	"testing"
)

// TestSecurityCommands: acl create/list/delete, user scram set/list/delete
// and quota alter/describe round-trip against a broker with the
// StandardAuthorizer (everyone allowed where no ACL is found).
func TestSecurityCommands(t *testing.T) {
	addr := startKzero(t, "--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"--override", "allow.everyone.if.no.acl.found=true")
	t.Setenv("KZERO_BROKERS", addr)
	ok := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := kzctl(t, "", args...)
		if code != 0 {
			t.Fatalf("kzctl %q: exit %d: %s", args, code, stderr)
		}
		return squeeze(stdout)
	}

	ok("acl", "create", "--allow-principal", "User:alice", "--operation", "read,describe", "--topic", "orders", "--group", "billing")
	ok("acl", "create", "--deny-principal", "User:mallory", "--operation", "write", "--topic", "logs-", "--resource-pattern-type", "prefixed")
	out := ok("acl", "list")
	for _, want := range []string{
		"User:alice * TOPIC orders LITERAL READ ALLOW",
		"User:alice * GROUP billing LITERAL DESCRIBE ALLOW",
		"User:mallory * TOPIC logs- PREFIXED WRITE DENY",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("acl list lacks %q:\n%s", want, out)
		}
	}
	if out := ok("acl", "list", "--principal", "User:mallory"); strings.Contains(out, "alice") || !strings.Contains(out, "mallory") {
		t.Fatalf("acl list --principal:\n%s", out)
	}
	if out := ok("acl", "delete", "--topic", "orders", "--allow-principal", "User:alice"); strings.Count(out, "User:alice") != 2 {
		t.Fatalf("acl delete:\n%s", out)
	}
	if out := ok("acl", "list", "--topic", "orders"); strings.Contains(out, "alice") {
		t.Fatalf("deleted ACLs listed:\n%s", out)
	}
	if code, _, _ := kzctl(t, "", "acl", "create", "--allow-principal", "alice", "--operation", "read", "--topic", "x"); code != 2 {
		t.Fatalf("a principal without its type: exit %d", code)
	}

	ok("user", "scram", "set", "alice", "--mechanism", "SCRAM-SHA-512", "--password", "pw", "--iterations", "4096")
	if out := ok("user", "scram", "list"); !strings.Contains(out, "alice SCRAM-SHA-512 4096") {
		t.Fatalf("user scram list:\n%s", out)
	}
	ok("user", "scram", "delete", "alice", "--mechanism", "SCRAM-SHA-512")
	if out := ok("user", "scram", "list"); strings.Contains(out, "alice") {
		t.Fatalf("deleted credential listed:\n%s", out)
	}

	ok("quota", "alter", "--user", "alice", "--add-config", "producer_byte_rate=1048576,request_percentage=25")
	ok("quota", "alter", "--client-defaults", "--add-config", "consumer_byte_rate=2048")
	out = ok("quota", "describe")
	for _, want := range []string{"{user=alice} producer_byte_rate 1048576", "{user=alice} request_percentage 25", "{client-id=<default>} consumer_byte_rate 2048"} {
		if !strings.Contains(out, want) {
			t.Fatalf("quota describe lacks %q:\n%s", want, out)
		}
	}
	ok("quota", "alter", "--ip", "10.0.0.7", "--add-config", "connection_creation_rate=10")
	if out := ok("quota", "describe", "--ip", "10.0.0.7"); !strings.Contains(out, "{ip=10.0.0.7} connection_creation_rate 10") {
		t.Fatalf("ip quota:\n%s", out)
	}
	ok("quota", "alter", "--user", "alice", "--delete-config", "producer_byte_rate")
	if out := ok("quota", "describe", "--user", "alice", "--strict"); strings.Contains(out, "producer_byte_rate") || !strings.Contains(out, "request_percentage") {
		t.Fatalf("after delete-config:\n%s", out)
	}
	if code, _, stderr := kzctl(t, "", "quota", "alter", "--user", "bob", "--add-config", "no_such=1"); code != 1 || !strings.Contains(stderr, "INVALID_REQUEST") {
		t.Fatalf("unknown key: exit %d %q", code, stderr)
	}
}

// squeeze collapses the runs of spaces that align table columns.
func squeeze(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' }), " ")
}
