package main

// kzctl's flag parsing and dispatch, end to end through run: exit codes,
// flags between arguments, the environment, and one pass of every broker
// command against a real kzero built from this module.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kzero/kzerotest"
	"kzero/log"
	"kzero/record"
)

// kzctl runs the CLI with args and stdin, returning the exit status and
// what it wrote.
func kzctl(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code = run(ctx, args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"topic"},
		{"topic", "rename", "x"},
		{"topic", "create", "x", "--partitions", "three"},
		{"topic", "list", "extra"},
		{"-o", "yaml", "topic", "list"},
		{"produce"},
		{"produce", "a", "b"},
		{"consume", "t", "--partition", "-1"},
		{"cluster"},
		{"cluster", "status"},
		{"dump-log"},
		{"--no-such-flag"},
		{"group"},
		{"group", "frob"},
		{"group", "list", "extra"},
		{"group", "list", "--state", "sleeping"},
		{"group", "describe", "g", "--members", "--state"},
		{"group", "delete"},
		{"group", "delete-offsets", "g"},
		{"group", "delete-offsets", "--topic", "t"},
		{"group", "reset-offsets", "--topic", "t", "--to-earliest"},
		{"group", "reset-offsets", "g", "h", "--topic", "t", "--to-earliest"},
		{"group", "reset-offsets", "g", "--topic", "t"},
		{"group", "reset-offsets", "g", "--topic", "t", "--to-earliest", "--to-latest"},
		{"group", "reset-offsets", "g", "--topic", "t", "--to-earliest", "--dry-run", "--execute"},
		{"group", "reset-offsets", "g", "--to-earliest"},
		{"group", "reset-offsets", "g", "--topic", "t", "--all-topics", "--to-earliest"},
		{"group", "reset-offsets", "g", "--topic", "t", "--to-datetime", "yesterday"},
		{"group", "reset-offsets", "g", "--topic", "t", "--by-duration", "-1h"},
		{"group", "reset-offsets", "g", "--topic", "t", "--to-offset", "-3"},
		{"group", "reset-offsets", "g", "--topic", "t:x", "--to-earliest"},
		{"cluster", "info", "--sasl-mechanism", "KERBEROS", "--sasl-user", "u"},
		{"cluster", "info", "--tls-key", "k.pem"},
		{"topic", "create", "x", "-partitions", "three"},
		{"topic", "create", "x", "--partitions", "3000000000"},
		{"produce", "t", "--header", "novalue"},
		{"completion"},
		{"completion", "tcsh"},
		{"version", "extra"},
		{"-v"},
	} {
		code, _, stderr := kzctl(t, "", args...)
		if code != 2 {
			t.Errorf("kzctl %q: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
		if !strings.Contains(stderr, "kzctl -h") && !strings.Contains(stderr, "Usage") {
			t.Errorf("kzctl %q: stderr %q points to no usage", args, stderr)
		}
	}
	for _, args := range [][]string{{"-h"}, {"help"}, {"topic", "create", "-h"}} {
		if code, stdout, stderr := kzctl(t, "", args...); code != 0 || !strings.Contains(stdout+stderr, "Usage") && !strings.Contains(stdout+stderr, "-partitions") {
			t.Errorf("kzctl %q: exit %d, output %q %q", args, code, stdout, stderr)
		}
	}
}

func TestDumpLogCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, log.FileName(0, log.LogSuffix))
	batch := record.AppendControlBatch(nil, 7, 1, 3, record.ControlCommit, 1700000000000)
	if err := os.WriteFile(good, batch, 0o644); err != nil {
		t.Fatal(err)
	}
	// Flags after the files, and --files as kafka-dump-log.sh takes them.
	for _, args := range [][]string{
		{"dump-log", good, "--print-data-log"},
		{"dump-log", "--print-data-log", "--files", good},
	} {
		code, stdout, stderr := kzctl(t, "", args...)
		if code != 0 || !strings.Contains(stdout, "| offset: 0 CreateTime: 1700000000000 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 3") {
			t.Fatalf("kzctl %q: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	code, stdout, _ := kzctl(t, "", "-o", "json", "dump-log", good)
	var line map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &line) != nil || line["type"] != "batch" || line["is_control"] != true {
		t.Fatalf("dump-log -o json: exit %d, %q", code, stdout)
	}

	bad := filepath.Join(dir, log.FileName(100, log.LogSuffix))
	if err := os.WriteFile(bad, batch[:40], 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := kzctl(t, "", "dump-log", bad)
	want := fmt.Sprintf("kzctl: %s: position 0: batch of %d bytes runs past the end of the file, 40 bytes left: truncated\n", bad, len(batch))
	if code != 1 || stderr != want {
		t.Fatalf("truncated file: exit %d, stderr %q, want %q", code, stderr, want)
	}
}

func TestCommandsAgainstBroker(t *testing.T) {
	addr := startKzero(t)
	t.Setenv("KZERO_BROKERS", addr)

	ok := func(stdin string, args ...string) string {
		t.Helper()
		code, stdout, stderr := kzctl(t, stdin, args...)
		if code != 0 {
			t.Fatalf("kzctl %q: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
	if out := ok("", "topic", "create", "cli", "--partitions", "2", "--config", "retention.ms=60000", "--replication-factor", "1"); out != "Created topic cli.\n" {
		t.Fatalf("create: %q", out)
	}
	code, _, stderr := kzctl(t, "", "topic", "create", "cli")
	if code != 1 || !strings.HasPrefix(stderr, "kzctl: create topic cli: TOPIC_ALREADY_EXISTS: ") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("create twice: exit %d, stderr %q", code, stderr)
	}
	if out := ok("", "topic", "describe", "cli"); !strings.Contains(out, "CONFIGS     retention.ms=60000\n") {
		t.Fatalf("describe:\n%s", out)
	}
	ok("", "topic", "alter-config", "cli", "--set", "retention.ms=120000", "--set", "cleanup.policy=delete")
	ok("", "topic", "add-partitions", "--num", "1", "cli")
	if out := ok("", "-o", "json", "topic", "list"); !strings.Contains(out, `"name": "cli"`) || !strings.Contains(out, `"partitions": 3`) {
		t.Fatalf("list:\n%s", out)
	}

	// '\t' as typed in a shell is a tab.
	ok("k1\tv1\nk2\tv2\n", "produce", "cli", "--partition", "1", `--key-separator`, `\t`, "--header", "h=1", "--compression", "lz4")
	out := ok("", "consume", "cli", "--from-beginning", "--to-end", "-o", "json")
	var keys []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r struct {
			Partition int32
			Key       string
			Value     string
			Headers   []struct{ Key, Value string }
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Partition != 1 || len(r.Headers) != 1 || r.Headers[0].Value != "1" || r.Value != "v"+r.Key[1:] {
			t.Fatalf("consumed %+v", r)
		}
		keys = append(keys, r.Key)
	}
	if strings.Join(keys, ",") != "k1,k2" {
		t.Fatalf("consumed keys %v", keys)
	}
	if out := ok("", "consume", "cli", "--offset", "1", "--partition", "1", "--count", "1", "--value-only"); out != "v2\n" {
		t.Fatalf("consume --offset 1: %q", out)
	}
	if out := ok("", "offsets", "cli"); !strings.Contains(out, "cli    1          0      2\n") {
		t.Fatalf("offsets:\n%s", out)
	}
	if out := ok("", "cluster", "info", "--brokers", addr); !strings.Contains(out, "CONTROLLER  1\n") {
		t.Fatalf("cluster info:\n%s", out)
	}

	// Groups: consuming as a group commits its offsets (2 records in
	// partition 1 of cli).
	ok("", "consume", "cli", "--from-beginning", "--to-end", "--group", "cg")
	if out := ok("", "group", "list"); !strings.Contains(out, "cg     classic  consumer       Empty\n") {
		t.Fatalf("group list:\n%s", out)
	}
	if out := ok("", "group", "list", "--state", "stable,PreparingRebalance"); strings.Contains(out, "cg ") {
		t.Fatalf("group list --state stable:\n%s", out)
	}
	if out := ok("", "group", "describe", "cg"); !strings.Contains(out, "has no active members") ||
		!strings.Contains(out, "cg     cli    1          2               2               0    -            -     -\n") {
		t.Fatalf("group describe:\n%s", out)
	}
	var desc []struct {
		Group, State string
		Offsets      []struct {
			Partition     int32
			CurrentOffset *int64 `json:"current_offset"`
		}
	}
	if err := json.Unmarshal([]byte(ok("", "group", "describe", "--group", "cg", "--state", "-o", "json")), &desc); err != nil ||
		len(desc) != 1 || desc[0].State != "Empty" || len(desc[0].Offsets) != 1 {
		t.Fatalf("group describe -o json: %v %+v", err, desc)
	}
	current := func() map[int32]int64 {
		t.Helper()
		var d []struct {
			Offsets []struct {
				Partition     int32
				CurrentOffset *int64 `json:"current_offset"`
			}
		}
		if err := json.Unmarshal([]byte(ok("", "-o", "json", "group", "describe", "cg")), &d); err != nil {
			t.Fatal(err)
		}
		got := map[int32]int64{}
		for _, o := range d[0].Offsets {
			if o.CurrentOffset != nil {
				got[o.Partition] = *o.CurrentOffset
			}
		}
		return got
	}
	if out := ok("", "group", "reset-offsets", "cg", "--topic", "cli:1", "--to-earliest"); !strings.Contains(out, "Dry run") || current()[1] != 2 {
		t.Fatalf("dry run:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want int64
	}{
		{[]string{"--topic", "cli:1", "--to-earliest"}, 0},
		{[]string{"--all-topics", "--shift-by", "1"}, 1},
		{[]string{"--topic", "cli", "--to-latest"}, 2},
		{[]string{"--topic", "cli", "--to-offset", "1"}, 1},
		{[]string{"--topic", "cli", "--to-datetime", "2001-01-01T00:00:00Z"}, 0},
		{[]string{"--topic", "cli", "--by-duration", "PT1H"}, 0},
	} {
		out := ok("", append([]string{"group", "reset-offsets", "--group", "cg", "--execute"}, c.args...)...)
		if strings.Contains(out, "Dry run") || current()[1] != c.want {
			t.Fatalf("reset-offsets %q: offsets %v, want %d in partition 1\n%s", c.args, current(), c.want, out)
		}
	}
	if out := ok("", "group", "delete-offsets", "cg", "--topic", "cli"); !strings.Contains(out, "cli    1          Successful\n") {
		t.Fatalf("delete-offsets:\n%s", out)
	}
	if out := ok("", "group", "delete", "cg"); out != "Deleted group cg.\n" {
		t.Fatalf("group delete: %q", out)
	}
	for _, args := range [][]string{{"group", "delete", "cg"}, {"group", "describe", "cg"}} {
		code, _, stderr := kzctl(t, "", args...)
		if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "GROUP_ID_NOT_FOUND") {
			t.Fatalf("kzctl %q: exit %d, stderr %q", args, code, stderr)
		}
	}

	// Every spelling of the common flags: --bootstrap-server as Kafka's
	// tools take it, one-dash long flags as the flag package took them,
	// --o as well as -o and --output.
	t.Setenv("KZERO_BROKERS", "127.0.0.1:1")
	for _, args := range [][]string{
		{"--brokers", addr, "cluster", "info"},
		{"-brokers", addr, "cluster", "info"},
		{"--bootstrap-server", addr, "cluster", "info"},
		{"-bootstrap-server=" + addr, "cluster", "info"},
		{"cluster", "info", "--brokers=" + addr},
	} {
		if out := ok("", args...); !strings.Contains(out, "CONTROLLER  1\n") {
			t.Fatalf("kzctl %q:\n%s", args, out)
		}
	}
	t.Setenv("KZERO_BROKERS", addr)
	for _, o := range [][]string{{"-o", "json"}, {"-ojson"}, {"-o=json"}, {"--o", "json"}, {"--output", "json"}, {"-output=json"}} {
		if out := ok("", append(o, "topic", "list")...); !strings.Contains(out, `"name": "cli"`) {
			t.Fatalf("kzctl %q topic list:\n%s", o, out)
		}
	}
	if out := ok("", "consume", "cli", "-offset", "0", "-partition=1", "--max-messages", "1", "-value-only"); out != "v1\n" {
		t.Fatalf("consume with one-dash flags and --max-messages: %q", out)
	}

	ok("", "topic", "delete", "cli")

	// Nobody listening: an error, not a hang.
	code, _, stderr = kzctl(t, "", "--brokers", "127.0.0.1:1", "--timeout", "1s", "topic", "list")
	if code != 1 || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("no broker: exit %d, stderr %q", code, stderr)
	}
}

// startKzero builds and runs the broker on a loopback port, stopped with
// SIGTERM when the test ends.
func startKzero(t *testing.T, overrides ...string) string {
	t.Helper()
	tmp := t.TempDir()
	bin, err := kzerotest.Build(tmp)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--override", "listeners=PLAINTEXT://127.0.0.1:0",
		"--override", "log.dirs=" + filepath.Join(tmp, "data"), "--override", "admin.listener=127.0.0.1:0"}, overrides...)...)
	kzerotest.DieWithParent(cmd)
	p := kzerotest.Start(t, cmd)
	t.Cleanup(func() {
		if err := p.Terminate(30 * time.Second); err != nil {
			t.Error(err)
		}
	})
	return p.Addr
}
