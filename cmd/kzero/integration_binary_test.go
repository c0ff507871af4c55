package main

// The binary's contract, tested on the built kzero: the ready line, config
// layering, refusing invalid values, warning about unknown keys, a clean
// exit on SIGTERM and a restart that reads everything back.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest"
)

// binDir holds the kzero binary, built once by the first test that needs it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kzero-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var build struct {
	once sync.Once
	path string
	err  error
}

// kzeroBinary builds ./cmd/kzero (this package) once.
func kzeroBinary(t *testing.T) string {
	t.Helper()
	build.once.Do(func() { build.path, build.err = kzerotest.Build(binDir) })
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// process is a running kzero binary (kzerotest, shared with the tests of
// kzctl and tools).
type process = kzerotest.Process

// startBinary runs kzero with args and waits for its ready line.
func startBinary(t *testing.T, args ...string) *process {
	t.Helper()
	return startCommand(t, exec.Command(kzeroBinary(t), args...))
}

// startCommand runs cmd, which execs kzero, and waits for its ready line.
func startCommand(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	return kzerotest.Start(t, cmd)
}

// launch runs kzero with args without waiting for it: First gets its
// first stdout line if it gets that far. The test kills it at the latest.
func launch(t *testing.T, args ...string) *process {
	t.Helper()
	return launchCommand(t, exec.Command(kzeroBinary(t), args...))
}

func launchCommand(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	return kzerotest.Launch(t, cmd)
}

func binaryArgs(dir string, more ...string) []string {
	args := []string{
		"--override", "listeners=PLAINTEXT://127.0.0.1:0",
		"--override", "log.dirs=" + dir,
		"--override", "admin.listener=127.0.0.1:0",
	}
	for _, kv := range more {
		args = append(args, "--override", kv)
	}
	return args
}

// The binary prints its ready line, warns about an unknown key and still
// serves, exits 0 on SIGTERM, and after a restart on the same data serves
// every record, topic and partition it had.
func TestBinaryReadySigtermRestart(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, binaryArgs(dir, "no.such.key=1")...)
	if s := p.Stderr.String(); !strings.Contains(s, "unknown config key") || !strings.Contains(s, "no.such.key") {
		t.Fatalf("no warning about the unknown key; stderr:\n%s", s)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := func(addr string, opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	cl := client(p.Addr)
	kzerotest.CreateTopic(t, ctx, cl, "kept", 3, nil)
	kzerotest.CreateTopic(t, ctx, cl, "also-kept", 1, nil)
	want := map[string]string{}
	var rs []*kgo.Record
	for i := 0; i < 300; i++ {
		topic := "kept"
		if i%3 == 0 {
			topic = "also-kept"
		}
		k, v := fmt.Sprintf("k%d", i), fmt.Sprintf("value %d", i)
		want[k] = v
		rs = append(rs, &kgo.Record{Topic: topic, Key: []byte(k), Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	p.Stop(t)

	p = startBinary(t, binaryArgs(dir)...)
	defer p.Stop(t)
	cl = client(p.Addr, kgo.ConsumeTopics("kept", "also-kept"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	details, err := kadm.NewClient(cl).ListTopics(ctx, "kept", "also-kept")
	if err != nil {
		t.Fatal(err)
	}
	if d := details["kept"]; d.Err != nil || len(d.Partitions) != 3 {
		t.Fatalf("after restart, topic kept: %d partitions, %v", len(d.Partitions), d.Err)
	}
	for _, r := range kzerotest.ConsumeN(t, ctx, cl, len(want)) {
		if want[string(r.Key)] != string(r.Value) {
			t.Fatalf("after restart, %s=%q, want %q", r.Key, r.Value, want[string(r.Key)])
		}
		delete(want, string(r.Key))
	}
}

// --override wins over --config, which wins over the embedded default: a
// topic auto-created takes num.partitions from the override.
func TestBinaryConfigLayers(t *testing.T) {
	dir := t.TempDir()
	props := filepath.Join(t.TempDir(), "server.properties")
	file := "# a server.properties\nnum.partitions=3\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs=" + dir + "\nadmin.listener : 127.0.0.1:0\n"
	if err := os.WriteFile(props, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, c := range []struct {
		args       []string
		partitions int
	}{
		{[]string{"--config", props}, 3},
		{[]string{"--config", props, "--override", "num.partitions=5"}, 5},
	} {
		p := startBinary(t, c.args...)
		cl, err := kgo.NewClient(kgo.SeedBrokers(p.Addr), kgo.AllowAutoTopicCreation())
		if err != nil {
			t.Fatal(err)
		}
		topic := fmt.Sprintf("auto-%d", c.partitions)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		details, err := kadm.NewClient(cl).ListTopics(ctx, topic)
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(details[topic].Partitions); n != c.partitions {
			t.Errorf("%v: auto-created topic has %d partitions, want %d", c.args, n, c.partitions)
		}
		p.Stop(t)
	}
}

// An invalid value refuses to start, exiting non-zero with a message that
// names the key and the value.
func TestBinaryRefusesInvalidValues(t *testing.T) {
	bin := kzeroBinary(t)
	dir := t.TempDir()
	for _, c := range []struct {
		override string
		mention  []string
	}{
		{"num.partitions=abc", []string{"num.partitions", "abc"}},
		{"num.partitions=0", []string{"num.partitions", "0"}},
		{"auto.create.topics.enable=maybe", []string{"auto.create.topics.enable", "maybe"}},
		{"log.retention.bytes=1.5", []string{"log.retention.bytes", "1.5"}},
		{"listeners=127.0.0.1:9092", []string{"listeners", "127.0.0.1:9092"}},
		{"log.cleanup.policy=shred", []string{"log.cleanup.policy", "shred"}},
		{"log.message.timestamp.type=WallClock", []string{"log.message.timestamp.type", "WallClock"}},
	} {
		t.Run(c.override, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, bin, binaryArgs(dir, c.override)...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() <= 0 {
				t.Fatalf("kzero with %s: %v, want a non-zero exit; stdout %q", c.override, err, stdout.String())
			}
			if strings.Contains(stdout.String(), "ready") {
				t.Fatalf("kzero printed %q before refusing", stdout.String())
			}
			for _, m := range c.mention {
				if !strings.Contains(stderr.String(), m) {
					t.Errorf("the message does not mention %q:\n%s", m, stderr.String())
				}
			}
		})
	}
	// A missing config file and stray arguments are refused too.
	for _, args := range [][]string{{"--config", filepath.Join(dir, "missing.properties")}, {"stray"}, {"--override", "novalue"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() <= 0 {
			t.Errorf("kzero %q: %v, want a non-zero exit\n%s", args, err, out)
		}
	}
}
