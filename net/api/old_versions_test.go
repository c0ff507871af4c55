package api_test

import (
	"context"
	"crypto/rand"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node"
	"kzero/node/nodetest"
)

// Versions Kafka 4.0 removed (KIP-896) that kzero serves as Kafka 3.9 did,
// with raw requests: ListOffsets v0, OffsetCommit v0-v1, OffsetFetch v0.

func listOffsetsV0(t *testing.T, conn *kzerotest.Conn, topic string, replicaID int32, timestamp int64, maxNum int32) kmsg.ListOffsetsResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = replicaID
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.MaxNumOffsets = timestamp, maxNum
	rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{rp}
	req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
	return kzerotest.Do[*kmsg.ListOffsetsResponse](t, conn, 0, req).Topics[0].Partitions[0]
}

// ListOffsets v0 lists segment base offsets and the log end offset, newest
// first, as Kafka 3.9's legacyFetchOffsetsBefore did.
func TestListOffsetsV0(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b, kgo.ProducerLinger(0))
	// 30 records of 100 KiB fill several segments of 1 MiB (the smallest).
	kzerotest.CreateTopic(t, ctx, cl, "v0", 1, map[string]*string{"segment.bytes": kmsg.StringPtr("1048576")})
	conn := kzerotest.Dial(t, b.Addr().String())

	if p := listOffsetsV0(t, conn, "v0", -1, -1, 10); p.ErrorCode != 0 || !slices.Equal(p.OldStyleOffsets, []int64{0}) {
		t.Fatalf("empty log, latest: %v %v", kerr.ErrorForCode(p.ErrorCode), p.OldStyleOffsets)
	}
	for i := range 30 {
		value := make([]byte, 100<<10)
		rand.Read(value) // incompressible: kgo compresses by default
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "v0", Value: value, Key: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Every candidate: the log end, then segment bases down to 0.
	all := listOffsetsV0(t, conn, "v0", -1, -1, 1000)
	if all.ErrorCode != 0 || len(all.OldStyleOffsets) < 3 || all.OldStyleOffsets[0] != 30 || all.OldStyleOffsets[len(all.OldStyleOffsets)-1] != 0 {
		t.Fatalf("latest, all: %v %v", kerr.ErrorForCode(all.ErrorCode), all.OldStyleOffsets)
	}
	if !slices.IsSortedFunc(all.OldStyleOffsets, func(a, b int64) int { return int(b - a) }) {
		t.Fatalf("offsets not descending: %v", all.OldStyleOffsets)
	}
	for _, tc := range []struct {
		timestamp int64
		maxNum    int32
		want      []int64
	}{
		{-1, 1, []int64{30}},
		{-1, 2, all.OldStyleOffsets[:2]},
		{-2, 1, []int64{0}},
		{-2, 5, []int64{0}}, // from the first candidate back: only it
		{time.Now().Add(time.Hour).UnixMilli(), 1, []int64{30}},
		{1, 10, []int64{}}, // nothing modified before 1970
	} {
		p := listOffsetsV0(t, conn, "v0", -1, tc.timestamp, tc.maxNum)
		if p.ErrorCode != 0 || !slices.Equal(p.OldStyleOffsets, tc.want) {
			t.Errorf("timestamp %d max %d: %v %v, want %v", tc.timestamp, tc.maxNum, kerr.ErrorForCode(p.ErrorCode), p.OldStyleOffsets, tc.want)
		}
	}
	if p := listOffsetsV0(t, conn, "v0", -1, -3, 1); p.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("timestamp -3: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	if p := listOffsetsV0(t, conn, "missing", -1, -1, 1); p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("missing topic: %v", kerr.ErrorForCode(p.ErrorCode))
	}
}

// OffsetCommit v0 (no group management) and v1 (generation, member, and a
// commit timestamp), read back with OffsetFetch v0 and v1.
func TestOffsetCommitV0V1(t *testing.T) {
	b := startBroker(t, t.TempDir(), fastGroups)
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	kzerotest.CreateTopic(t, ctx, nodetest.Client(t, b), "old", 2, nil)
	conn := kzerotest.Dial(t, b.Addr().String())
	// FindCoordinator creates __consumer_offsets, as a client asks first.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "g0"
	kzerotest.WantCode(t, "find coordinator", kzerotest.FindCoordinator(t, conn, 0, fc).ErrorCode, nil)

	commit := func(v int16, group string, partition int32, offset int64, meta string) int16 {
		t.Helper()
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group = group
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "old"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.Metadata = partition, offset, kmsg.StringPtr(meta)
		if v == 1 {
			rp.Timestamp = time.Now().UnixMilli()
		}
		rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{rp}
		req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
		resp := kzerotest.Do[*kmsg.OffsetCommitResponse](t, conn, v, req)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	fetch := func(v int16, group string) []kmsg.OffsetFetchResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = group
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "old", []int32{0, 1}
		req.Topics = []kmsg.OffsetFetchRequestTopic{rt}
		return kzerotest.Do[*kmsg.OffsetFetchResponse](t, conn, v, req).Topics[0].Partitions
	}

	kzerotest.WantCode(t, "commit v0", commit(0, "g0", 0, 7, "v0 meta"), nil)
	kzerotest.WantCode(t, "commit v1", commit(1, "g0", 1, 9, "v1 meta"), nil)
	for _, v := range []int16{0, 1} {
		ps := fetch(v, "g0")
		if ps[0].Offset != 7 || *ps[0].Metadata != "v0 meta" || ps[1].Offset != 9 || *ps[1].Metadata != "v1 meta" || ps[0].ErrorCode != 0 {
			t.Fatalf("fetch v%d: %+v", v, ps)
		}
	}
	if code := commit(1, "g0", 5, 1, ""); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("commit v1 to a missing partition: %v", kerr.ErrorForCode(code))
	}
	if code := commit(0, "g0", 0, 1, string(make([]byte, 5000))); code != kerr.OffsetMetadataTooLarge.Code {
		t.Errorf("commit v0 with large metadata: %v", kerr.ErrorForCode(code))
	}

	// sarama pinned to Kafka 0.8.2 commits with v1 and fetches with v1.
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V0_8_2_0
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	client, err := sarama.NewClient([]string{b.Addr().String()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	om, err := sarama.NewOffsetManagerFromClient("sarama-old", client)
	if err != nil {
		t.Fatal(err)
	}
	pom, err := om.ManagePartition("old", 1)
	if err != nil {
		t.Fatal(err)
	}
	pom.MarkOffset(42, "sarama meta")
	// With auto-commit off, a commit flushes the offset and releases the
	// closed partition manager, which then closes its error channel.
	pom.AsyncClose()
	om.Commit()
	for err := range pom.Errors() {
		t.Fatalf("sarama commit: %v", err)
	}
	if err := om.Close(); err != nil {
		t.Fatal(err)
	}
	if ps := fetch(1, "sarama-old"); ps[1].Offset != 42 || *ps[1].Metadata != "sarama meta" {
		t.Fatalf("sarama's v1 commit read back as %+v", ps[1])
	}
}

// kafka4Minimums are Kafka 4's lowest versions of the keys whose older
// versions (KIP-896) kzero serves, except Produce and Fetch, whose
// versions below them need the old message formats: ListOffsets v0,
// OffsetCommit v0-1, OffsetFetch v0, CreateTopics v0-1, DeleteTopics v0,
// OffsetForLeaderEpoch v0-1, WriteTxnMarkers v0, DescribeConfigs v0,
// DescribeLogDirs v0, AlterReplicaLogDirs v0, and the ACL and delegation
// token APIs v0. Kafka 3.9 served all of them from v0.
var kafka4Minimums = map[int16]int16{
	kmsg.ListOffsets.Int16(): 1, kmsg.OffsetCommit.Int16(): 2, kmsg.OffsetFetch.Int16(): 1,
	kmsg.CreateTopics.Int16(): 2, kmsg.DeleteTopics.Int16(): 1, kmsg.OffsetForLeaderEpoch.Int16(): 2,
	kmsg.WriteTxnMarkers.Int16(): 1, kmsg.DescribeConfigs.Int16(): 1, kmsg.DescribeLogDirs.Int16(): 1,
	kmsg.DescribeACLs.Int16(): 1, kmsg.CreateACLs.Int16(): 1, kmsg.DeleteACLs.Int16(): 1,
	kmsg.CreateDelegationToken.Int16(): 1, kmsg.RenewDelegationToken.Int16(): 1,
	kmsg.ExpireDelegationToken.Int16(): 1, kmsg.DescribeDelegationToken.Int16(): 1,
	kmsg.AlterReplicaLogDirs.Int16(): 1,
}

// listedMinimums asks a broker for ApiVersions and returns each key's
// lowest listed version.
func listedMinimums(t *testing.T, addr string) map[int16]int16 {
	t.Helper()
	resp, err := kzerotest.Dial(t, addr).Request(kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	mins := map[int16]int16{}
	for _, k := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		mins[k.ApiKey] = k.MinVersion
	}
	return mins
}

// With legacy.protocol.versions.enable=false kzero is as strict as Kafka 4:
// ApiVersions lists Kafka 4's minimums and a removed version closes the
// connection. The keys whose listed minimum differs between the two
// settings are exactly those of kafka4Minimums (Produce and Fetch aside),
// and with legacy versions on each is listed from v0.
func TestLegacyVersionsOff(t *testing.T) {
	strict := startBroker(t, t.TempDir(), func(c *node.Config) {
		c.LegacyVersions, c.StaticConfigs["legacy.protocol.versions.enable"] = false, "false"
	})
	defer nodetest.Stop(t, strict)
	legacy := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, legacy)
	off, on := listedMinimums(t, strict.Addr().String()), listedMinimums(t, legacy.Addr().String())
	for key, min := range on {
		if _, ok := off[key]; !ok {
			t.Errorf("%s is listed only with legacy versions on", kmsg.NameForKey(key))
		}
		if _, want := kafka4Minimums[key]; !want && off[key] != min && key != kmsg.Produce.Int16() && key != kmsg.Fetch.Int16() {
			t.Errorf("%s: listed from v%d with legacy versions on, v%d off; add it to kafka4Minimums", kmsg.NameForKey(key), min, off[key])
		}
	}
	// Kafka 4 lists Produce from v0 though it serves v3 up (KAFKA-18659).
	if produce := kmsg.Produce.Int16(); off[produce] != 0 || on[produce] != 0 {
		t.Errorf("Produce: listed from v%d (legacy on), v%d (off); want v0 in both", on[produce], off[produce])
	}
	for key, want := range kafka4Minimums {
		if off[key] != want || on[key] != 0 {
			t.Errorf("%s: min version listed v%d (legacy on), v%d (off); want v0 and v%d", kmsg.NameForKey(key), on[key], off[key], want)
		}
		req := kmsg.RequestForKey(key)
		req.SetVersion(want - 1)
		if _, err := kzerotest.Dial(t, strict.Addr().String()).Request(req); err == nil {
			t.Errorf("%s v%d answered with legacy versions off; want the connection closed", kmsg.NameForKey(key), want-1)
		}
	}
}

// The admin and replication APIs at the versions Kafka 4.0 removed, as
// Kafka 3.9 answered them: CreateTopics v0 (no validate only) and v1,
// DeleteTopics v0, DescribeConfigs v0 (IsDefault, no synonyms),
// DescribeLogDirs v0, OffsetForLeaderEpoch v0 (end offset only) and v1
// (with its epoch), WriteTxnMarkers v0.
func TestOldAdminVersions(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn := kzerotest.Dial(t, b.Addr().String())
	cl := nodetest.Client(t, b, kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))

	create := func(v int16, name string, validateOnly bool) kmsg.CreateTopicsResponseTopic {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		req.ValidateOnly, req.TimeoutMillis = validateOnly, 10000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 2, 1
		rc := kmsg.NewCreateTopicsRequestTopicConfig()
		rc.Name, rc.Value = "retention.ms", kmsg.StringPtr("123456")
		rt.Configs = []kmsg.CreateTopicsRequestTopicConfig{rc}
		req.Topics = []kmsg.CreateTopicsRequestTopic{rt}
		return kzerotest.Do[*kmsg.CreateTopicsResponse](t, conn, v, req).Topics[0]
	}
	kzerotest.WantCode(t, "create v1 validate only", create(1, "old1", true).ErrorCode, nil)
	kzerotest.WantCode(t, "create v0", create(0, "old0", false).ErrorCode, nil)
	if code := create(0, "old0", false).ErrorCode; code != kerr.TopicAlreadyExists.Code {
		t.Errorf("create v0 again: %v", kerr.ErrorForCode(code))
	}
	if r := create(1, "old0", false); r.ErrorCode != kerr.TopicAlreadyExists.Code || r.ErrorMessage == nil {
		t.Errorf("create v1 again: %v, message %v", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
	}
	kzerotest.WantCode(t, "create v1", create(1, "old1", false).ErrorCode, nil)

	// DescribeConfigs v0: the topic's own value is not a default, Kafka's
	// defaults are.
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeTopic, "old0"
	dc.Resources = []kmsg.DescribeConfigsRequestResource{dr}
	res := kzerotest.Do[*kmsg.DescribeConfigsResponse](t, conn, 0, dc).Resources[0]
	kzerotest.WantCode(t, "describe configs v0", res.ErrorCode, nil)
	defaults := 0
	for _, c := range res.Configs {
		if c.Name == "retention.ms" && (c.IsDefault || c.Value == nil || *c.Value != "123456") {
			t.Errorf("retention.ms: %+v", c)
		}
		if c.IsDefault {
			defaults++
		}
		if len(c.ConfigSynonyms) > 0 {
			t.Errorf("%s: synonyms in v0", c.Name)
		}
	}
	if defaults == 0 || len(res.Configs) < 10 {
		t.Errorf("describe configs v0: %d configs, %d default", len(res.Configs), defaults)
	}

	for i := range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "old0", Partition: 0, Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// OffsetForLeaderEpoch v0 and v1: the current epoch ends at the log
	// end; a newer epoch has no end.
	epochEnd := func(v int16, topic string, epoch int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch = 0, epoch
		rt.Partitions = []kmsg.OffsetForLeaderEpochRequestTopicPartition{rp}
		req.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{rt}
		return kzerotest.Do[*kmsg.OffsetForLeaderEpochResponse](t, conn, v, req).Topics[0].Partitions[0]
	}
	if p := epochEnd(0, "old0", 0); p.ErrorCode != 0 || p.EndOffset != 5 || p.LeaderEpoch != -1 {
		t.Errorf("v0, epoch 0: %v end %d epoch %d (v0 has no epoch: -1 decoded)", kerr.ErrorForCode(p.ErrorCode), p.EndOffset, p.LeaderEpoch)
	}
	if p := epochEnd(1, "old0", 0); p.ErrorCode != 0 || p.EndOffset != 5 || p.LeaderEpoch != 0 {
		t.Errorf("v1, epoch 0: %v end %d epoch %d", kerr.ErrorForCode(p.ErrorCode), p.EndOffset, p.LeaderEpoch)
	}
	if p := epochEnd(1, "old0", 7); p.ErrorCode != 0 || p.EndOffset != -1 || p.LeaderEpoch != -1 {
		t.Errorf("v1, a newer epoch: %v end %d epoch %d", kerr.ErrorForCode(p.ErrorCode), p.EndOffset, p.LeaderEpoch)
	}
	if p := epochEnd(0, "missing", 0); p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("v0, missing topic: %v", kerr.ErrorForCode(p.ErrorCode))
	}

	// DescribeLogDirs v0: the one log dir, with both partitions of old0.
	dl := kzerotest.Do[*kmsg.DescribeLogDirsResponse](t, conn, 0, kmsg.NewPtrDescribeLogDirsRequest())
	if len(dl.Dirs) != 1 || dl.Dirs[0].ErrorCode != 0 {
		t.Fatalf("describe log dirs v0: %+v", dl.Dirs)
	}
	sizes := map[int32]int64{}
	for _, tp := range dl.Dirs[0].Topics {
		if tp.Topic == "old0" {
			for _, p := range tp.Partitions {
				sizes[p.Partition] = p.Size
			}
		}
	}
	if len(sizes) != 2 || sizes[0] == 0 || sizes[1] != 0 {
		t.Errorf("describe log dirs v0, old0 sizes: %v", sizes)
	}

	// WriteTxnMarkers v0: a partition of no topic.
	wm := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed = 1, 0, true
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = "missing", []int32{0}
	m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{mt}
	wm.Markers = []kmsg.WriteTxnMarkersRequestMarker{m}
	wr := kzerotest.Do[*kmsg.WriteTxnMarkersResponse](t, conn, 0, wm)
	if len(wr.Markers) != 1 || wr.Markers[0].ProducerID != 1 || wr.Markers[0].Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("write txn markers v0: %+v", wr.Markers)
	}

	// DeleteTopics v0, then the topic is gone.
	del := func(name string) int16 {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.TopicNames, req.TimeoutMillis = []string{name}, 10000
		return kzerotest.Do[*kmsg.DeleteTopicsResponse](t, conn, 0, req).Topics[0].ErrorCode
	}
	kzerotest.WantCode(t, "delete v0", del("old1"), nil)
	if code := del("old1"); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("delete v0 again: %v", kerr.ErrorForCode(code))
	}
}
