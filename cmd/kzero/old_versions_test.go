package main

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
)

// Versions Kafka 4.0 removed (KIP-896) that kzero serves as Kafka 3.9 did,
// with raw requests: ListOffsets v0, OffsetCommit v0-v1, OffsetFetch v0.

func listOffsetsV0(t *testing.T, conn *rawConn, topic string, replicaID int32, timestamp int64, maxNum int32) kmsg.ListOffsetsResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(0)
	req.ReplicaID = replicaID
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.MaxNumOffsets = timestamp, maxNum
	rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{rp}
	req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
	resp, err := conn.request(req)
	if err != nil {
		t.Fatalf("ListOffsets v0: %v", err)
	}
	return resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
}

// ListOffsets v0 lists segment base offsets and the log end offset, newest
// first, as Kafka 3.9's legacyFetchOffsetsBefore did.
func TestListOffsetsV0(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, b, kgo.ProducerLinger(0))
	// 30 records of 100 KiB fill several segments of 1 MiB (the smallest).
	createTopic(t, ctx, cl, "v0", 1, map[string]*string{"segment.bytes": kmsg.StringPtr("1048576")})
	conn := dialRaw(t, b.Addr().String())

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
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	createTopic(t, ctx, newClient(t, b), "old", 2, nil)
	conn := dialRaw(t, b.Addr().String())
	// FindCoordinator creates __consumer_offsets, as a client asks first.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "g0"
	wantNoErr(t, "find coordinator", findCoordinator(t, conn, 0, fc).ErrorCode)

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
		resp := rawGroupRequest[*kmsg.OffsetCommitResponse](t, conn, v, req)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	fetch := func(v int16, group string) []kmsg.OffsetFetchResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = group
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "old", []int32{0, 1}
		req.Topics = []kmsg.OffsetFetchRequestTopic{rt}
		return rawGroupRequest[*kmsg.OffsetFetchResponse](t, conn, v, req).Topics[0].Partitions
	}

	wantNoErr(t, "commit v0", commit(0, "g0", 0, 7, "v0 meta"))
	wantNoErr(t, "commit v1", commit(1, "g0", 1, 9, "v1 meta"))
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

// With legacy.protocol.versions.enable=false kzero is as strict as Kafka 4:
// ApiVersions lists Kafka 4's minimums and a removed version closes the
// connection.
func TestLegacyVersionsOff(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), "legacy.protocol.versions.enable", "false")
	defer stopBroker(t, b)
	conn := dialRaw(t, b.Addr().String())
	resp, err := conn.request(kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	mins := map[int16]int16{}
	for _, k := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		mins[k.ApiKey] = k.MinVersion
	}
	for key, want := range map[int16]int16{kmsg.ListOffsets.Int16(): 1, kmsg.OffsetCommit.Int16(): 2, kmsg.OffsetFetch.Int16(): 1} {
		if mins[key] != want {
			t.Errorf("%s: min version %d listed, want %d", kmsg.NameForKey(key), mins[key], want)
		}
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(0)
	if _, err := conn.request(req); err == nil {
		t.Fatal("ListOffsets v0 answered with legacy versions off; want the connection closed")
	}
}
