package tools

// The commands are tested against a real kzero: TestMain builds the broker
// binary from this module, starts it on a loopback port with its data in a
// temporary folder, and stops it with SIGTERM after the tests. Outputs are
// checked against golden files in testdata/golden (go test -update rewrites
// them), with the fields that change from run to run (ids, ports,
// timestamps, CRCs over timestamps, temporary paths) replaced first.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"kzero/kzerotest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// broker is the kzero the tests talk to.
var broker struct {
	addr string // host:port; empty when not started (fuzzing)
	data string // its log.dirs
}

func TestMain(m *testing.M) {
	flag.Parse()
	if fuzzing() {
		os.Exit(m.Run()) // fuzz targets need no broker
	}
	code, err := runWithBroker(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tools tests:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// fuzzing reports whether this process runs fuzz targets: the coordinator
// has -test.fuzz, its workers -test.fuzzworker.
func fuzzing() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return true
		}
	}
	return false
}

func runWithBroker(m *testing.M) (int, error) {
	tmp, err := os.MkdirTemp("", "kzctl-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	bin, err := kzerotest.Build(tmp)
	if err != nil {
		return 0, err
	}
	broker.data = filepath.Join(tmp, "data")
	cmd := exec.Command(bin,
		"--override", "listeners=PLAINTEXT://127.0.0.1:0",
		"--override", "log.dirs="+broker.data,
		"--override", "admin.listener=127.0.0.1:0",
		// Small segments and a dense index, so a few records give
		// dump-log rolled segments, snapshots and index entries.
		"--override", "log.segment.bytes=16384",
		"--override", "log.index.interval.bytes=1024",
	)
	kzerotest.DieWithParent(cmd)
	p, err := kzerotest.LaunchCommand(cmd)
	if err != nil {
		return 0, err
	}
	if err := p.WaitReady(60 * time.Second); err != nil {
		p.Kill()
		return 0, err
	}
	broker.addr = p.Addr
	code := m.Run()
	return code, p.Terminate(30 * time.Second)
}

// testEnv is an Env for the test broker that writes into the buffer.
func testEnv(t *testing.T, f Format) (*Env, *bytes.Buffer) {
	t.Helper()
	if broker.addr == "" {
		t.Fatal("no test broker")
	}
	out := &bytes.Buffer{}
	return &Env{Brokers: []string{broker.addr}, Out: out, Format: f, Timeout: 20 * time.Second}, out
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// normalizers replace what changes from run to run.
var normalizers = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`("topic_id": ")[A-Za-z0-9_-]{22}`), "${1}<id>"},
	{regexp.MustCompile(`(?m)^(ID +)[A-Za-z0-9_-]{22}$`), "${1}<id>"},
	{regexp.MustCompile(`("cluster_id": ")[^"]+`), "${1}<cluster>"},
	{regexp.MustCompile(`(?m)^(CLUSTER +)\S+$`), "${1}<cluster>"},
	{regexp.MustCompile(`("port": )\d+`), "${1}<port>"},
	{regexp.MustCompile(`(127\.0\.0\.1 +)\d+`), "${1}<port>"},
	{regexp.MustCompile(`((?:CreateTime|LogAppendTime)[:] ?)\d{13}`), "${1}<ts>"},
	{regexp.MustCompile(`("(?:timestamp|base_timestamp|max_timestamp)": ?)\d{13}`), "${1}<ts>"},
	{regexp.MustCompile(`(crc: )\d+`), "${1}<crc>"},
	{regexp.MustCompile(`("crc": ?)\d+`), "${1}<crc>"},
}

func normalize(s string) string {
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.repl)
	}
	return s
}

// golden compares got with testdata/golden/name, or writes it there with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
