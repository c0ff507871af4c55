package coord

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
	"kzero/coord/wal"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func testConfig(dir string) Config {
	return Config{
		NodeID:    1,
		Dir:       dir,
		Listeners: []metadata.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}},
		Bootstrap: true,
		Logger:    quiet,
	}
}

func open(t *testing.T, cfg Config) *Controller {
	t.Helper()
	c, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func mustCreate(t *testing.T, c *Controller, specs ...TopicSpec) []TopicResult {
	t.Helper()
	res := c.CreateTopics(ctx(t), specs, false)
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("create %s: %v %s", r.Name, r.Err, r.Message)
		}
	}
	return res
}

func TestOpenRegistersBroker(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	img := c.Image()
	if img.ClusterID() == "" || len(img.ClusterID()) != 22 {
		t.Fatalf("cluster id %q", img.ClusterID())
	}
	if img.ControllerID() != 1 {
		t.Fatalf("controller %d", img.ControllerID())
	}
	b, ok := img.Broker(1)
	if !ok || b.Epoch <= 0 || len(b.Listeners) != 1 || b.Listeners[0].Port != 9092 {
		t.Fatalf("broker %+v", b)
	}
	if l, ok := img.Feature("metadata.version"); !ok || l != metadata.MetadataVersion {
		t.Fatalf("metadata.version %d %v", l, ok)
	}
}

func TestCreateDescribeDeleteTopics(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	res := mustCreate(t, c,
		TopicSpec{Name: "orders", NumPartitions: 3, ReplicationFactor: 1, Configs: map[string]string{"retention.ms": "1000"}},
		TopicSpec{Name: "defaults", NumPartitions: -1, ReplicationFactor: -1},
	)
	if res[0].ID == ([16]byte{}) || res[0].NumPartitions != 3 || res[1].NumPartitions != 1 || res[1].ReplicationFactor != 1 {
		t.Fatalf("results %+v", res)
	}
	img := c.Image()
	tp := img.Topic("orders")
	if tp == nil || tp.ID != res[0].ID || img.TopicByID(res[0].ID) != tp {
		t.Fatalf("topic %+v", tp)
	}
	if len(tp.Partitions) != 3 || tp.Configs["retention.ms"] != "1000" {
		t.Fatalf("topic %+v", tp)
	}
	for i, p := range tp.Partitions {
		if p.Partition != int32(i) || !slices.Equal(p.Replicas, []int32{1}) || !slices.Equal(p.ISR, []int32{1}) || p.Leader != 1 || p.LeaderEpoch != 0 {
			t.Fatalf("partition %+v", p)
		}
	}
	if names := topicNames(img); !slices.Equal(names, []string{"defaults", "orders"}) {
		t.Fatalf("topics %v", names)
	}

	again := c.CreateTopics(ctx(t), []TopicSpec{{Name: "orders", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if again[0].Err != kerr.TopicAlreadyExists {
		t.Fatalf("re-create: %v", again[0].Err)
	}

	del := c.DeleteTopics(ctx(t), []string{"orders", "missing"}, [][16]byte{res[1].ID, {1}})
	want := []error{nil, kerr.UnknownTopicOrPartition, nil, kerr.UnknownTopicID}
	for i, d := range del {
		if d.Err != want[i] {
			t.Fatalf("delete %d (%s): %v, want %v", i, d.Name, d.Err, want[i])
		}
	}
	if n := c.Image().TopicCount(); n != 0 {
		t.Fatalf("%d topics after delete", n)
	}
	// The name is free again; a new topic gets a new id.
	re := mustCreate(t, c, TopicSpec{Name: "orders", NumPartitions: 1, ReplicationFactor: 1})
	if re[0].ID == res[0].ID {
		t.Fatal("re-created topic reuses the old id")
	}
	if len(c.Image().Topic("orders").Configs) != 0 {
		t.Fatal("configs survived the delete")
	}
}

func topicNames(img *metadata.Image) []string {
	var names []string
	for _, t := range img.Topics() {
		names = append(names, t.Name)
	}
	return names
}

func TestCreateTopicErrors(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	mustCreate(t, c, TopicSpec{Name: "a.b", NumPartitions: 1, ReplicationFactor: 1})
	cases := []struct {
		spec TopicSpec
		want *kerr.Error
	}{
		{TopicSpec{Name: "", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException},
		{TopicSpec{Name: ".", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException},
		{TopicSpec{Name: "..", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException},
		{TopicSpec{Name: "bad/name", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException},
		{TopicSpec{Name: fmt.Sprintf("%0250d", 0), NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException},
		{TopicSpec{Name: "a_b", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException}, // collides with a.b
		{TopicSpec{Name: "a.b", NumPartitions: 1, ReplicationFactor: 1}, kerr.TopicAlreadyExists},
		{TopicSpec{Name: "p0", NumPartitions: 0, ReplicationFactor: 1}, kerr.InvalidPartitions},
		{TopicSpec{Name: "p-2", NumPartitions: -2, ReplicationFactor: 1}, kerr.InvalidPartitions},
		{TopicSpec{Name: "huge", NumPartitions: MaxPartitionsPerRequest + 1, ReplicationFactor: 1}, kerr.InvalidPartitions},
		{TopicSpec{Name: "rf0", NumPartitions: 1, ReplicationFactor: 0}, kerr.InvalidReplicationFactor},
		{TopicSpec{Name: "rf2", NumPartitions: 1, ReplicationFactor: 2}, kerr.InvalidReplicationFactor},
		{TopicSpec{Name: "cfg", NumPartitions: 1, ReplicationFactor: 1, Configs: map[string]string{"no.such": "1"}}, kerr.InvalidConfig},
		{TopicSpec{Name: "cfg2", NumPartitions: 1, ReplicationFactor: 1, Configs: map[string]string{"retention.ms": "-5"}}, kerr.InvalidConfig},
		{TopicSpec{Name: "asg", NumPartitions: 2, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {1}}}, kerr.InvalidRequest},
		{TopicSpec{Name: "asg2", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {1}, 2: {1}}}, kerr.InvalidReplicaAssignment},
		{TopicSpec{Name: "asg3", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {7}}}, kerr.InvalidReplicaAssignment},
		{TopicSpec{Name: "asg4", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {1, 1}}}, kerr.InvalidReplicaAssignment},
		{TopicSpec{Name: "asg5", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {}}}, kerr.InvalidReplicaAssignment},
	}
	for _, tc := range cases {
		for _, validateOnly := range []bool{true, false} {
			res := c.CreateTopics(ctx(t), []TopicSpec{tc.spec}, validateOnly)
			if res[0].Err != tc.want {
				t.Errorf("%q validateOnly=%v: %v (%s), want %v", tc.spec.Name, validateOnly, res[0].Err, res[0].Message, tc.want)
			}
			if res[0].Err != nil && res[0].Message == "" {
				t.Errorf("%q: no message", tc.spec.Name)
			}
		}
	}
	// Two names that collide in one request: the second fails.
	res := c.CreateTopics(ctx(t), []TopicSpec{{Name: "x.y", NumPartitions: 1, ReplicationFactor: 1}, {Name: "x_y", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if res[0].Err != nil || res[1].Err != kerr.InvalidTopicException {
		t.Fatalf("colliding pair: %v, %v", res[0].Err, res[1].Err)
	}
	// The same name twice in one request.
	res = c.CreateTopics(ctx(t), []TopicSpec{{Name: "dup", NumPartitions: 1, ReplicationFactor: 1}, {Name: "dup", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if res[0].Err != kerr.InvalidRequest || res[1].Err != kerr.InvalidRequest {
		t.Fatalf("duplicates: %v, %v", res[0].Err, res[1].Err)
	}
	// Manual assignment works.
	res = c.CreateTopics(ctx(t), []TopicSpec{{Name: "manual", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {1}, 1: {1}}}}, false)
	if res[0].Err != nil || res[0].NumPartitions != 2 {
		t.Fatalf("manual: %+v", res[0])
	}
}

func TestValidateOnlyCreatesNothing(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	before := c.Image().Offset()
	res := c.CreateTopics(ctx(t), []TopicSpec{{Name: "v", NumPartitions: 4, ReplicationFactor: -1}}, true)
	if res[0].Err != nil || res[0].NumPartitions != 4 || res[0].ReplicationFactor != 1 || res[0].ID != ([16]byte{}) {
		t.Fatalf("%+v", res[0])
	}
	if c.Image().Topic("v") != nil || c.Image().Offset() != before {
		t.Fatal("validate only created the topic")
	}
}

func TestCreatePartitions(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	mustCreate(t, c, TopicSpec{Name: "t", NumPartitions: 2, ReplicationFactor: 1})
	res := c.CreatePartitions(ctx(t), []PartitionSpec{
		{Topic: "t", Count: 5},
		{Topic: "missing", Count: 3},
	}, false)
	if res[0].Err != nil || res[1].Err != kerr.UnknownTopicOrPartition {
		t.Fatalf("%+v", res)
	}
	if n := len(c.Image().Topic("t").Partitions); n != 5 {
		t.Fatalf("%d partitions", n)
	}
	for _, count := range []int32{5, 4} {
		res = c.CreatePartitions(ctx(t), []PartitionSpec{{Topic: "t", Count: count}}, false)
		if res[0].Err != kerr.InvalidPartitions {
			t.Fatalf("count %d: %v", count, res[0].Err)
		}
	}
	res = c.CreatePartitions(ctx(t), []PartitionSpec{{Topic: "t", Count: 7, Assignments: [][]int32{{1}}}}, false)
	if res[0].Err != kerr.InvalidReplicaAssignment {
		t.Fatalf("short assignment: %v", res[0].Err)
	}
	res = c.CreatePartitions(ctx(t), []PartitionSpec{{Topic: "t", Count: 7, Assignments: [][]int32{{1}, {1}}}}, true)
	if res[0].Err != nil || len(c.Image().Topic("t").Partitions) != 5 {
		t.Fatalf("validate only: %v", res[0].Err)
	}
}

// TestConcurrentCreateTopics races many creators of overlapping names: each
// name is created exactly once, everyone else sees TOPIC_ALREADY_EXISTS.
func TestConcurrentCreateTopics(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	const workers, names = 8, 20
	var mu sync.Mutex
	created := map[string]int{}
	ids := map[string][16]byte{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range names {
				n := fmt.Sprintf("topic-%d", (i+w)%names)
				res := c.CreateTopics(context.Background(), []TopicSpec{{Name: n, NumPartitions: 2, ReplicationFactor: 1}}, false)
				mu.Lock()
				switch res[0].Err {
				case nil:
					created[n]++
					ids[n] = res[0].ID
				case kerr.TopicAlreadyExists:
				default:
					t.Errorf("%s: %v %s", n, res[0].Err, res[0].Message)
				}
				mu.Unlock()
				_ = c.Image().Topics() // readers run alongside
			}
		}()
	}
	wg.Wait()
	img := c.Image()
	if img.TopicCount() != names {
		t.Fatalf("%d topics", img.TopicCount())
	}
	for n, k := range created {
		if k != 1 {
			t.Fatalf("%s created %d times", n, k)
		}
		if img.Topic(n).ID != ids[n] {
			t.Fatalf("%s: id mismatch", n)
		}
	}
}

func TestRestartReplays(t *testing.T) {
	dir := t.TempDir()
	c := open(t, testConfig(dir))
	res := mustCreate(t, c,
		TopicSpec{Name: "a", NumPartitions: 3, ReplicationFactor: 1, Configs: map[string]string{"cleanup.policy": "compact"}},
		TopicSpec{Name: "b", NumPartitions: 1, ReplicationFactor: 1})
	c.DeleteTopics(ctx(t), []string{"b"}, nil)
	cluster := c.Image().ClusterID()
	epoch1 := mustBroker(t, c.Image()).Epoch
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	c = open(t, testConfig(dir))
	img := c.Image()
	if img.ClusterID() != cluster {
		t.Fatalf("cluster id %s, was %s", img.ClusterID(), cluster)
	}
	tp := img.Topic("a")
	if tp == nil || tp.ID != res[0].ID || len(tp.Partitions) != 3 || tp.Configs["cleanup.policy"] != "compact" {
		t.Fatalf("after restart: %+v", tp)
	}
	if img.Topic("b") != nil {
		t.Fatal("deleted topic is back")
	}
	if epoch2 := mustBroker(t, img).Epoch; epoch2 <= epoch1 {
		t.Fatalf("broker epoch %d after restart, %d before", epoch2, epoch1)
	}
}

func mustBroker(t *testing.T, img *metadata.Image) *metadata.Broker {
	t.Helper()
	b, ok := img.Broker(1)
	if !ok {
		t.Fatal("broker 1 not registered")
	}
	return b
}

func TestClusterIDMismatch(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.ClusterID = "q1Sh-9_ISia_zwGINzRvyQ"
	c := open(t, cfg)
	if c.Image().ClusterID() != cfg.ClusterID {
		t.Fatalf("cluster id %s", c.Image().ClusterID())
	}
	c.Close()
	cfg.ClusterID = "AAAAAAAAAAAAAAAAAAAAAA"
	if _, err := Open(cfg); err == nil {
		t.Fatal("opened another cluster's metadata")
	}
}

// A node whose data belongs to a cluster never bootstraps a new one over
// it: a missing metadata log is an error. A new cluster's id is in its
// bootstrap snapshot, durable before any entry.
func TestNoBootstrapOverData(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.ClusterID = "q1Sh-9_ISia_zwGINzRvyQ"
	cfg.Bootstrap = false
	if _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), "refusing to start a new cluster") {
		t.Fatalf("opened a new cluster over data: %v", err)
	}
	cfg.Bootstrap = true
	c := open(t, cfg)
	c.Close()
	st, err := wal.Open(dir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	snap, err := st.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	img, err := metadata.DecodeImage(snap.GetData(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if snap.GetMetadata().GetIndex() == 1 && img.ClusterID() != cfg.ClusterID {
		t.Fatalf("bootstrap snapshot names cluster %q, want %q", img.ClusterID(), cfg.ClusterID)
	}
	cfg.Bootstrap = false // an existing log needs no bootstrap
	c = open(t, cfg)
	c.Close()
}

func TestSnapshotCompactionAndRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.SnapshotEvery = 10
	c := open(t, cfg)
	var ids [][16]byte
	for i := range 25 {
		res := mustCreate(t, c, TopicSpec{Name: fmt.Sprintf("t%d", i), NumPartitions: 2, ReplicationFactor: 1,
			Configs: map[string]string{"segment.bytes": fmt.Sprint(1<<20 + i)}})
		ids = append(ids, res[0].ID)
	}
	alter := c.AlterConfigs(ctx(t), []ConfigAlter{{ResourceType: metadata.ResourceBroker, Name: "", Changes: []ConfigChange{{Key: "log.retention.hours", Value: "5"}}}}, false)
	if alter[0].Err != nil {
		t.Fatal(alter[0].Message)
	}
	first, _, err := c.AllocateProducerIDs(ctx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "snap-*.snap"))
	if len(snaps) != 1 || filepath.Base(snaps[0]) == "snap-00000000000000000001.snap" {
		t.Fatalf("snapshot files %v: want one, past the bootstrap one", snaps)
	}
	wal, err := os.Stat(filepath.Join(dir, "raft.wal"))
	if err != nil {
		t.Fatal(err)
	}
	want := c.Image()
	c.Close()
	// 28+ entries of ~100 bytes went in; a compacted WAL holds fewer than
	// SnapshotEvery.
	if wal.Size() > 1500 {
		t.Fatalf("WAL is %d bytes after compaction", wal.Size())
	}

	c = open(t, cfg)
	img := c.Image()
	for i, id := range ids {
		tp := img.Topic(fmt.Sprintf("t%d", i))
		if tp == nil || tp.ID != id || len(tp.Partitions) != 2 || tp.Configs["segment.bytes"] != fmt.Sprint(1<<20+i) {
			t.Fatalf("topic %d after restart: %+v", i, tp)
		}
	}
	if img.BrokerConfigs("")["log.retention.hours"] != "5" || img.ClusterID() != want.ClusterID() {
		t.Fatal("broker configs or cluster id lost")
	}
	next, _, err := c.AllocateProducerIDs(ctx(t), 1)
	if err != nil || next != first+ProducerIDBlockSize {
		t.Fatalf("producer ids after restart: %d (%v), first block %d", next, err, first)
	}
}

func TestProducerIDBlocksUnique(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.SnapshotEvery = 7
	seen := map[int64]bool{}
	for round := range 3 {
		c := open(t, cfg)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					first, size, err := c.AllocateProducerIDs(context.Background(), 1)
					if err != nil || size != ProducerIDBlockSize {
						t.Errorf("round %d: %d %d %v", round, first, size, err)
						return
					}
					mu.Lock()
					if seen[first] {
						t.Errorf("block %d handed out twice", first)
					}
					seen[first] = true
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		c.Close()
	}
	if len(seen) != 60 {
		t.Fatalf("%d blocks", len(seen))
	}
	for first := range seen {
		if first%ProducerIDBlockSize != 0 || first >= 60*ProducerIDBlockSize {
			t.Fatalf("block at %d: blocks are not contiguous", first)
		}
	}
}

// TestTornWALTail appends half a frame to the metadata WAL, as a crash mid
// write leaves it: the controller opens with everything before it.
func TestTornWALTail(t *testing.T) {
	dir := t.TempDir()
	c := open(t, testConfig(dir))
	res := mustCreate(t, c, TopicSpec{Name: "kept", NumPartitions: 1, ReplicationFactor: 1})
	c.Close()
	path := filepath.Join(dir, "raft.wal")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0, 0, 1, 0, 0xca, 0xfe, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c = open(t, testConfig(dir))
	if tp := c.Image().Topic("kept"); tp == nil || tp.ID != res[0].ID {
		t.Fatal("topic lost")
	}
	mustCreate(t, c, TopicSpec{Name: "after", NumPartitions: 1, ReplicationFactor: 1})
	c.Close()
	c = open(t, testConfig(dir))
	if c.Image().Topic("after") == nil {
		t.Fatal("topic created after recovery lost")
	}
}

// TestSubscribeOrder checks subscribers see every image once, in order,
// each prev the last next, and the first call carries the current state.
func TestSubscribeOrder(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	mustCreate(t, c, TopicSpec{Name: "before", NumPartitions: 1, ReplicationFactor: 1})
	var mu sync.Mutex
	var calls [][2]*metadata.Image
	c.Subscribe(func(prev, next *metadata.Image) {
		mu.Lock()
		calls = append(calls, [2]*metadata.Image{prev, next})
		mu.Unlock()
		if c.Image().Offset() < next.Offset() {
			t.Error("subscriber called before the image was published")
		}
	})
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("s%d", i)
			mustCreate(t, c, TopicSpec{Name: name, NumPartitions: 1, ReplicationFactor: 1})
			// CreateTopics returns after subscribers saw the topic.
			mu.Lock()
			defer mu.Unlock()
			if calls[len(calls)-1][1].Topic(name) == nil {
				t.Errorf("CreateTopics(%s) returned before subscribers saw it", name)
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if calls[0][0].TopicCount() != 0 || calls[0][1].Topic("before") == nil {
		t.Fatal("first call does not carry the current state")
	}
	for i := 1; i < len(calls); i++ {
		if calls[i][0] != calls[i-1][1] {
			t.Fatalf("call %d: prev is not the previous next", i)
		}
		if calls[i][1].Offset() < calls[i][0].Offset() {
			t.Fatalf("call %d goes back in offset", i)
		}
	}
	last := calls[len(calls)-1][1]
	for i := range 10 {
		if last.Topic(fmt.Sprintf("s%d", i)) == nil {
			t.Fatalf("subscriber never saw s%d", i)
		}
	}
}

func TestCloseFailsWaiters(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	c.Close()
	res := c.CreateTopics(context.Background(), []TopicSpec{{Name: "late", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if res[0].Err != kerr.NotController {
		t.Fatalf("after close: %v", res[0].Err)
	}
	if _, _, err := c.AllocateProducerIDs(context.Background(), 1); err == nil {
		t.Fatal("allocation after close")
	}
}
