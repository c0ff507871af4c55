package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// kcat (librdkafka) produces and consumes through the broker, each codec.
func TestKcatProduceConsume(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed (.ci/run installs it)")
	}
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr := b.Addr().String()
	var want []string
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		var in bytes.Buffer
		for i := 0; i < 100; i++ {
			line := fmt.Sprintf("%s:value-%d", codec, i)
			in.WriteString(line + "\n")
			want = append(want, line)
		}
		cmd := exec.CommandContext(ctx, kcat, "-P", "-b", addr, "-t", "lines", "-K:", "-z", codec, "-X", "topic.request.required.acks=-1")
		cmd.Stdin = &in
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kcat -P %s: %v\n%s", codec, err, out)
		}
	}
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", "lines", "-e", "-f", "%k:%s\n").Output()
	if err != nil {
		t.Fatalf("kcat -C: %v", err)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("kcat consumed %d lines, want %d; first %q", len(got), len(want), got[:min(3, len(got))])
	}
}
