package node

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/vfs/errorfs"
)

// breakWrites makes writes to the open segment files of the partition
// folder dir (under any log dir) fail with EBADF, an I/O error that is not
// a full disk: each file's descriptor is swapped for a read-only one of
// the same file, since the log appends with pwritev on the descriptor.
// Reads keep working.
func breakWrites(t *testing.T, fs *errorfs.FS, logDirs []string, dir string) {
	t.Helper()
	n := 0
	for _, d := range logDirs {
		for _, f := range fs.OpenedUnder(filepath.Join(d, dir)) {
			f.BreakWrites(t, "")
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no open segment file of %s", dir)
	}
}

// One partition's log fails a write: produce to it, fetches from it and
// its partition in Metadata are answered KAFKA_STORAGE_ERROR from then on
// (as Kafka answers for a replica on an offline log dir), while another
// partition on the same broker takes produce and fetch as before.
func TestPartitionStorageFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fs := &errorfs.FS{}
	cfg := nodeConfig(1, t.TempDir(), nil)
	cfg.Logs.Defaults.FS = fs
	n, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer scancel()
		n.Stop(sctx) // the failed log makes it report an unclean close
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()), kgo.DisableIdempotentWrite(),
		kgo.RecordRetries(1), kgo.MetadataMinAge(10*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "bad"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "good"); err != nil {
		t.Fatal(err)
	}
	produce := func(topic, v string) error {
		return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr()
	}
	for _, topic := range []string{"bad", "good"} {
		if err := produce(topic, "before"); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}

	breakWrites(t, fs, cfg.Logs.Dirs, "bad-0")
	if err := produce("bad", "during"); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("produce to the failed partition: %v, want KAFKA_STORAGE_ERROR", err)
	}
	if err := produce("bad", "after"); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("second produce to the failed partition: %v, want KAFKA_STORAGE_ERROR", err)
	}
	if err := produce("good", "after"); err != nil {
		t.Fatalf("produce to the other partition: %v", err)
	}
	if got := consumeAll(ctx, t, n, "good", 2); got != "before,after" {
		t.Fatalf("the other partition reads %q", got)
	}
	md, err := adm.Metadata(ctx, "bad")
	if err != nil {
		t.Fatal(err)
	}
	if p := md.Topics["bad"].Partitions[0]; !errors.Is(p.Err, kerr.KafkaStorageError) || len(p.OfflineReplicas) != 1 {
		t.Fatalf("metadata of the failed partition: leader %d, offline %v, %v; want KAFKA_STORAGE_ERROR", p.Leader, p.OfflineReplicas, p.Err)
	}
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "bad"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -2
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	// Straight to the broker: a client refuses to route to a partition
	// whose metadata is KAFKA_STORAGE_ERROR.
	raw, err := cl.Broker(1).Request(ctx, req)
	resp, _ := raw.(*kmsg.ListOffsetsResponse)
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("list offsets of the failed partition: %v %+v, want KAFKA_STORAGE_ERROR", err, resp)
	}
	fr := kmsg.NewPtrFetchRequest()
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "bad", md.Topics["bad"].ID // the client sends the newest version: by id
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fr.Topics, fr.MaxBytes = append(fr.Topics, ft), 1<<20
	raw, err = cl.Broker(1).Request(ctx, fr)
	fresp, _ := raw.(*kmsg.FetchResponse)
	if err != nil || len(fresp.Topics) != 1 || fresp.Topics[0].Partitions[0].ErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("fetch from the failed partition: %v %+v, want KAFKA_STORAGE_ERROR", err, fresp)
	}
}

// consumeAll reads want records of topic from the start, joined by commas.
func consumeAll(ctx context.Context, t *testing.T, n *Node, topic string, want int) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consume %s: got %q before the deadline", topic, got)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("consume %s: %v", topic, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return strings.Join(got, ",")
}

// The leader's log of a replicated partition fails a write: the broker
// tells the controller, which takes the replica out of the ISR and elects
// another leader; producers go on there with acks=all and every record
// acknowledged before and after is read back from the new leader.
func TestOfflineReplicaLosesLeadership(t *testing.T) {
	fs := &errorfs.FS{}
	c := startClusterWith(t, 3, func(cfg *Config) {
		if cfg.NodeID == 1 {
			cfg.Logs.Defaults.FS = fs
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, _ := c.client(1)
	createAssigned(ctx, t, cl, "bad", []int32{1, 2, 3}, 2)
	partition := func(img *metadata.Image) metadata.Partition { return img.Topic("bad").Partitions[0] }
	c.waitImage(ctx, 1, "node 1 leading bad-0 with a full ISR", func(img *metadata.Image) bool {
		return img.Topic("bad") != nil && partition(img).Leader == 1 && len(partition(img).ISR) == 3
	})
	pcl, _ := c.client(1, kgo.DefaultProduceTopic("bad"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(20),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err := pcl.ProduceSync(ctx, &kgo.Record{Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	breakWrites(t, fs, c.config(0).Logs.Dirs, "bad-0")
	// The first write after the break fails and takes the log offline;
	// the producer retries until the new leader takes it.
	if err := pcl.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce across the failure: %v", err)
	}
	img := c.waitImage(ctx, 1, "a new leader without node 1", func(img *metadata.Image) bool {
		p := partition(img)
		return p.Leader != 1 && p.Leader >= 0 && !slices.Contains(p.ISR, 1)
	})
	ccl, _ := c.client(1, kgo.ConsumeTopics("bad"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 2 {
		fs := ccl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %v from the new leader %d", got, partition(img).Leader)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if strings.Join(got, ",") != "before,after" {
		t.Fatalf("the new leader holds %v", got)
	}
	// Node 1's stop reports its offline log (the dir is not marked clean).
	if err := c.nodes[0].Stop(ctx); !errors.Is(err, kerr.KafkaStorageError) {
		t.Errorf("stop of the node with an offline log: %v", err)
	}
	c.nodes[0] = nil
}
