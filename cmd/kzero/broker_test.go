package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/node"
	"kzero/node/nodetest"
)

// testOverrides are the server.properties keys of a test broker: an
// ephemeral loopback port, its data in dir.
func testOverrides(dir string) map[string]string {
	return map[string]string{
		"listeners":      "PLAINTEXT://127.0.0.1:0",
		"log.dirs":       dir,
		"admin.listener": "127.0.0.1:0",
	}
}

// startTestBroker runs an in-process broker on an ephemeral loopback port
// with its data in dir, configured from server.properties keys as the
// binary is (extra: key, value, ...); it is stopped when the test ends
// (nodetest.Start).
func startTestBroker(t *testing.T, dir string, extra ...string) *node.Node {
	t.Helper()
	over := testOverrides(dir)
	for i := 0; i+1 < len(extra); i += 2 {
		over[extra[i]] = extra[i+1]
	}
	cfg, err := loadConfig(nil, over, nodetest.Logger)
	if err != nil {
		t.Fatal(err)
	}
	ncfg, err := cfg.nodeConfig(nodetest.Logger)
	if err != nil {
		t.Fatal(err)
	}
	return nodetest.Start(t, ncfg)
}

func stopBroker(t *testing.T, b *node.Node) { nodetest.Stop(t, b) }

func newClient(t *testing.T, b *node.Node, opts ...kgo.Opt) *kgo.Client {
	return nodetest.Client(t, b, opts...)
}

func TestProduceConsumeEveryCodecAndRestart(t *testing.T) {
	dir := t.TempDir()
	b := startTestBroker(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	adm := kadm.NewClient(newClient(t, b))
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	want := map[string]int{}
	for name, codec := range codecs {
		for _, acks := range []kgo.Acks{kgo.AllISRAcks(), kgo.LeaderAck()} {
			opts := []kgo.Opt{kgo.ProducerBatchCompression(codec), kgo.RequiredAcks(acks)}
			if acks != kgo.AllISRAcks() {
				opts = append(opts, kgo.DisableIdempotentWrite())
			}
			cl := newClient(t, b, opts...)
			for i := 0; i < 50; i++ {
				v := fmt.Sprintf("%s-%d-%s", name, i, bytes.Repeat([]byte("x"), i*10))
				r := &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprint(i)), Value: []byte(v),
					Headers: []kgo.RecordHeader{{Key: "codec", Value: []byte(name)}}}
				if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want[v]++
			}
		}
	}
	consume := func(b *node.Node) map[string]int {
		cl := newClient(t, b, kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		got := map[string]int{}
		n := 0
		for n < 500 {
			fs := cl.PollFetches(ctx)
			if err := fs.Err(); err != nil {
				t.Fatal(err)
			}
			fs.EachRecord(func(r *kgo.Record) {
				got[string(r.Value)]++
				n++
				if len(r.Headers) != 1 || r.Headers[0].Key != "codec" {
					t.Errorf("headers %v", r.Headers)
				}
			})
		}
		return got
	}
	check := func(got map[string]int) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("consumed %d distinct values, want %d", len(got), len(want))
		}
		for v, n := range want {
			if got[v] != n {
				t.Fatalf("value %q consumed %d times, want %d", v, got[v], n)
			}
		}
	}
	check(consume(b))

	stopBroker(t, b)
	b = startTestBroker(t, dir)
	defer stopBroker(t, b)
	check(consume(b))

	// Offsets survive too: the end offsets sum to what was produced.
	adm = kadm.NewClient(newClient(t, b))
	ends, err := adm.ListEndOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != 500 {
		t.Fatalf("end offsets sum to %d", total)
	}
}
