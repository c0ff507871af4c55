package main

// A node's identity on disk (issue 19): every log dir holds meta.properties
// naming the cluster and the node; a node refuses, with one clear line, to
// start on dirs that disagree with each other, with its node.id or with its
// metadata log, and on data whose metadata log is gone. Partition folders
// the metadata does not name are set aside, never deleted.

import (
	"kzero/kzerotest"

	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest/await"
	"kzero/log"
)

// refuses runs kzero with args and wants a non-zero exit whose last
// stderr line holds every one of mention.
func refuses(t *testing.T, args []string, mention ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kzeroBinary(t), args...)
	var stderr kzerotest.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() <= 0 {
		t.Fatalf("kzero %v: %v, want a refusal; stdout %q\n%s", args, err, out, stderr.String())
	}
	if strings.Contains(string(out), "ready") {
		t.Fatalf("kzero printed %q before refusing", out)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	for _, m := range mention {
		if !strings.Contains(last, m) {
			t.Errorf("the refusal %q does not mention %q", last, m)
		}
	}
}

// formatted starts a node on dir, writes a record to topic kept, stops it,
// and returns its meta.properties.
func formatted(t *testing.T, dir string, more ...string) log.MetaProperties {
	t.Helper()
	p := startBinary(t, binaryArgs(dir, more...)...)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Addr), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "kept", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	p.Stop(t)
	mp, ok, err := log.ReadMetaProperties(dir)
	if err != nil || !ok {
		t.Fatalf("meta.properties after the first start: %v %v", ok, err)
	}
	return mp
}

func TestIdentityRefusals(t *testing.T) {
	dir := t.TempDir()
	mp := formatted(t, dir)
	if mp.NodeID != 1 || mp.ClusterID == "" || mp.DirectoryID == ([16]byte{}) {
		t.Fatalf("meta.properties %+v", mp)
	}

	t.Run("node id", func(t *testing.T) {
		refuses(t, binaryArgs(dir, "node.id=2"), dir, "node 1", "node.id=2")
	})
	t.Run("cluster id", func(t *testing.T) {
		other := mp
		other.ClusterID = "AAAAAAAAAAAAAAAAAAAAAA"
		writeMeta(t, dir, other)
		defer writeMeta(t, dir, mp)
		refuses(t, binaryArgs(dir), mp.ClusterID, other.ClusterID, "refusing")
	})
	t.Run("dir of another cluster", func(t *testing.T) {
		stranger := t.TempDir()
		formatted(t, stranger)
		refuses(t, binaryArgs(dir+","+stranger), dir, stranger, "refusing")
	})
	t.Run("metadata log missing", func(t *testing.T) {
		meta := filepath.Join(dir, "__cluster_metadata-0")
		if err := os.Rename(meta, meta+".away"); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(meta+".away", meta)
		refuses(t, binaryArgs(dir), "no metadata log", mp.ClusterID, "refusing")
	})
	// After every refusal the node still starts, as the same cluster, with
	// its data.
	p := startBinary(t, binaryArgs(dir)...)
	defer p.Stop(t)
	if got, _, _ := log.ReadMetaProperties(dir); got != mp {
		t.Fatalf("meta.properties changed: %+v, was %+v", got, mp)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Addr), kgo.ConsumeTopics("kept"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	kzerotest.ConsumeN(t, ctx, cl, 1)
}

func writeMeta(t *testing.T, dir string, mp log.MetaProperties) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, log.MetaPropertiesFile), mp.Encode(time.Now()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A dir from before meta.properties takes its metadata log's cluster id;
// a partition folder the metadata does not name is set aside, not deleted.
func TestIdentityAdoptedAndStraysSetAside(t *testing.T) {
	dir := t.TempDir()
	mp := formatted(t, dir)
	if err := os.Remove(filepath.Join(dir, log.MetaPropertiesFile)); err != nil {
		t.Fatal(err)
	}
	// A partition of a topic the metadata never heard of.
	if err := os.CopyFS(filepath.Join(dir, "ghost-0"), os.DirFS(filepath.Join(dir, "kept-0"))); err != nil {
		t.Fatal(err)
	}
	p := startBinary(t, binaryArgs(dir)...)
	got, ok, err := log.ReadMetaProperties(dir)
	if err != nil || !ok || got.ClusterID != mp.ClusterID || got.NodeID != mp.NodeID {
		t.Fatalf("meta.properties after adoption: %+v %v %v, want cluster %s", got, ok, err, mp.ClusterID)
	}
	if _, err := os.Stat(filepath.Join(dir, "ghost-0")); !os.IsNotExist(err) {
		t.Fatalf("ghost-0 is still in place: %v", err)
	}
	strays, _ := filepath.Glob(filepath.Join(dir, "ghost-0.*-stray"))
	if len(strays) != 1 {
		t.Fatalf("stray folders %v, want ghost-0 set aside once", strays)
	}
	if _, err := os.Stat(filepath.Join(strays[0], "00000000000000000000.log")); err != nil {
		t.Fatalf("the stray partition lost its segment: %v", err)
	}
	// stderr is copied by another goroutine than the ready line's.
	if !await.Poll(10*time.Second, func() bool {
		s := p.Stderr.String()
		return strings.Contains(s, "stray partition set aside") && strings.Contains(s, "ghost-0")
	}) {
		t.Fatalf("no warning about the stray partition:\n%s", p.Stderr)
	}
	p.Stop(t)
	// The stray stays where it is across restarts.
	p = startBinary(t, binaryArgs(dir)...)
	p.Stop(t)
	if again, _ := filepath.Glob(filepath.Join(dir, "ghost-0.*-stray")); len(again) != 1 || again[0] != strays[0] {
		t.Fatalf("stray folders after a restart: %v", again)
	}
}
