package api_test

// Admin APIs driven by franz-go's kadm and raw kmsg requests:
// CreatePartitions, DescribeCluster, DescribeTopicPartitions,
// OffsetForLeaderEpoch and DescribeProducers. The config APIs' tests are
// in cmd/kzero, beside the key table their answers depend on.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node"
	"kzero/node/nodetest"
	"kzero/record"
)

func TestAdminCreatePartitions(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := nodetest.Client(t, b)
	adm := kadm.NewClient(cl)
	kzerotest.CreateTopic(t, ctx, cl, "grow", 1, nil)
	kzerotest.CreateTopic(t, ctx, cl, "other", 2, nil)

	partitions := func(topic string) int {
		t.Helper()
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		return len(md.Topics[topic].Partitions)
	}

	res, err := adm.ValidateCreatePartitions(ctx, 2, "grow")
	if err != nil {
		t.Fatal(err)
	}
	kzerotest.WantErr(t, "validate only", res["grow"].Err, nil)
	if n := partitions("grow"); n != 1 {
		t.Fatalf("validate only created partitions: %d", n)
	}

	res, err = adm.CreatePartitions(ctx, 2, "grow", "missing")
	if err != nil {
		t.Fatal(err)
	}
	kzerotest.WantErr(t, "grow", res["grow"].Err, nil)
	kzerotest.WantErr(t, "missing topic", res["missing"].Err, kerr.UnknownTopicOrPartition)
	if n := partitions("grow"); n != 3 {
		t.Fatalf("after adding 2: %d partitions", n)
	}

	res, err = adm.UpdatePartitions(ctx, 2, "grow")
	if err != nil {
		t.Fatal(err)
	}
	kzerotest.WantErr(t, "shrink", res["grow"].Err, kerr.InvalidPartitions)
	res, err = adm.UpdatePartitions(ctx, 3, "grow")
	if err != nil {
		t.Fatal(err)
	}
	kzerotest.WantErr(t, "same count", res["grow"].Err, kerr.InvalidPartitions)

	// The new partition takes records.
	p := nodetest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := p.ProduceSync(ctx, &kgo.Record{Topic: "grow", Partition: 2, Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("produce to a new partition: %v", err)
	}

	// Raw: a topic named twice is answered once with INVALID_REQUEST, the
	// others are echoed; explicit assignments are checked.
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = 15000
	add := func(topic string, count int32, assign ...[]int32) {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = topic, count
		for _, replicas := range assign {
			a := kmsg.NewCreatePartitionsRequestTopicAssignment()
			a.Replicas = replicas
			rt.Assignment = append(rt.Assignment, a)
		}
		req.Topics = append(req.Topics, rt)
	}
	add("dup", 4)
	add("grow", 4, []int32{b.ID()})
	add("dup", 5)
	resp := kzerotest.BrokerRequest[*kmsg.CreatePartitionsResponse](t, ctx, cl, req)
	var got []string
	for _, rt := range resp.Topics {
		got = append(got, fmt.Sprintf("%s=%d", rt.Topic, rt.ErrorCode))
	}
	want := []string{
		fmt.Sprintf("dup=%d", kerr.InvalidRequest.Code),
		"grow=0",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("responses %v, want %v", got, want)
	}
	if n := partitions("grow"); n != 4 {
		t.Fatalf("after the assigned partition: %d partitions", n)
	}

	req.Topics = nil
	add("other", 4, []int32{b.ID()}) // two new partitions, one assignment
	add("grow", 5, []int32{b.ID() + 100})
	resp = kzerotest.BrokerRequest[*kmsg.CreatePartitionsResponse](t, ctx, cl, req)
	kzerotest.WantCode(t, "too few assignments", resp.Topics[0].ErrorCode, kerr.InvalidReplicaAssignment)
	kzerotest.WantCode(t, "unknown broker", resp.Topics[1].ErrorCode, kerr.InvalidReplicaAssignment)
	if resp.Topics[0].ErrorMessage == nil {
		t.Fatal("no error message")
	}
}

func TestAdminDescribeCluster(t *testing.T) {
	b := startBroker(t, t.TempDir(), func(c *node.Config) {
		c.Rack, c.StaticConfigs["broker.rack"] = "r1", "r1"
	})
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := nodetest.Client(t, b)
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}

	req := kmsg.NewPtrDescribeClusterRequest()
	resp := kzerotest.BrokerRequest[*kmsg.DescribeClusterResponse](t, ctx, cl, req)
	if resp.ErrorCode != 0 || resp.ClusterID != md.Cluster || resp.ControllerID != md.Controller || resp.EndpointType != 1 {
		t.Fatalf("describe cluster %+v, metadata cluster %q controller %d", resp, md.Cluster, md.Controller)
	}
	if resp.ClusterAuthorizedOperations != math.MinInt32 {
		t.Fatalf("authorized operations %d when not asked", resp.ClusterAuthorizedOperations)
	}
	if len(resp.Brokers) != 1 {
		t.Fatalf("brokers %+v", resp.Brokers)
	}
	br := resp.Brokers[0]
	if br.NodeID != b.ID() || br.Port != md.Brokers[0].Port || br.Host != md.Brokers[0].Host || br.Rack == nil || *br.Rack != "r1" || br.IsFenced {
		t.Fatalf("broker %+v, metadata %+v", br, md.Brokers[0])
	}

	req.IncludeClusterAuthorizedOperations = true
	resp = kzerotest.BrokerRequest[*kmsg.DescribeClusterResponse](t, ctx, cl, req)
	if ops := resp.ClusterAuthorizedOperations; ops <= 0 || ops&(1<<8) == 0 {
		t.Fatalf("authorized operations %b lack DESCRIBE", ops)
	}

	req.EndpointType = 2
	resp = kzerotest.BrokerRequest[*kmsg.DescribeClusterResponse](t, ctx, cl, req)
	kzerotest.WantCode(t, "controllers endpoint", resp.ErrorCode, kerr.MismatchedEndpointType)
	req.EndpointType = 9
	resp = kzerotest.BrokerRequest[*kmsg.DescribeClusterResponse](t, ctx, cl, req)
	kzerotest.WantCode(t, "unknown endpoint type", resp.ErrorCode, kerr.UnsupportedEndpointType)
}

func TestAdminDescribeTopicPartitions(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := nodetest.Client(t, b)
	kzerotest.CreateTopic(t, ctx, cl, "dtp-a", 5, nil)
	kzerotest.CreateTopic(t, ctx, cl, "dtp-b", 3, nil)
	kzerotest.CreateTopic(t, ctx, cl, "dtp-c", 1, nil)

	// Pages of 4 partitions over b, a (named out of order), a missing
	// topic and c: answered in name order.
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	for _, name := range []string{"dtp-b", "dtp-a", "dtp-missing", "dtp-c"} {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = name
		req.Topics = append(req.Topics, rt)
	}
	req.ResponsePartitionLimit = 4
	var pages []string
	for range 10 {
		resp := kzerotest.BrokerRequest[*kmsg.DescribeTopicPartitionsResponse](t, ctx, cl, req)
		var page []string
		for _, rt := range resp.Topics {
			if rt.ErrorCode != 0 {
				page = append(page, fmt.Sprintf("%s!%d", *rt.Topic, rt.ErrorCode))
				continue
			}
			if rt.TopicID == [16]byte{} || rt.AuthorizedOperations == math.MinInt32 {
				t.Fatalf("%s: id %x, operations %d", *rt.Topic, rt.TopicID, rt.AuthorizedOperations)
			}
			for _, p := range rt.Partitions {
				if p.LeaderID != b.ID() || len(p.Replicas) != 1 || len(p.ISR) != 1 || p.EligibleLeaderReplicas == nil || len(p.EligibleLeaderReplicas) != 0 {
					t.Fatalf("%s-%d: %+v", *rt.Topic, p.Partition, p)
				}
				page = append(page, fmt.Sprintf("%s:%d", *rt.Topic, p.Partition))
			}
		}
		pages = append(pages, strings.Join(page, " "))
		if resp.NextCursor == nil {
			break
		}
		req.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	want := []string{
		"dtp-a:0 dtp-a:1 dtp-a:2 dtp-a:3",
		"dtp-a:4 dtp-b:0 dtp-b:1 dtp-b:2",
		fmt.Sprintf("dtp-c:0 dtp-missing!%d", kerr.UnknownTopicOrPartition.Code),
	}
	if !slices.Equal(pages, want) {
		t.Fatalf("pages\n%q\nwant\n%q", pages, want)
	}

	// A cursor outside the named topics is an invalid request.
	req.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "dtp-zzz"}
	resp := kzerotest.BrokerRequest[*kmsg.DescribeTopicPartitionsResponse](t, ctx, cl, req)
	for _, rt := range resp.Topics {
		kzerotest.WantCode(t, "cursor outside topics", rt.ErrorCode, kerr.InvalidRequest)
	}

	// No topics named: every topic, with no error for missing ones.
	req.Topics, req.Cursor, req.ResponsePartitionLimit = nil, nil, 2000
	resp = kzerotest.BrokerRequest[*kmsg.DescribeTopicPartitionsResponse](t, ctx, cl, req)
	n := 0
	for _, rt := range resp.Topics {
		if strings.HasPrefix(*rt.Topic, "dtp-") {
			n += len(rt.Partitions)
		}
	}
	if n != 9 || resp.NextCursor != nil {
		t.Fatalf("every topic: %d partitions, cursor %v", n, resp.NextCursor)
	}
}

func TestAdminOffsetForLeaderEpoch(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := nodetest.Client(t, b, kgo.DefaultProduceTopic("epochs"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	kzerotest.CreateTopic(t, ctx, cl, "epochs", 2, nil)
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	var req kadm.OffsetForLeaderEpochRequest
	req.Add("epochs", 0, 0)
	req.Add("epochs", 1, 3)
	res, err := adm.OffsetForLeaderEpoch(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r := res["epochs"][0]; r.Err != nil || r.LeaderEpoch != 0 || r.EndOffset != 10 {
		t.Fatalf("current epoch: %+v", r)
	}
	if r := res["epochs"][1]; r.Err != nil || r.LeaderEpoch != -1 || r.EndOffset != -1 {
		t.Fatalf("future epoch: %+v", r)
	}

	// CurrentLeaderEpoch fencing.
	raw := kmsg.NewPtrOffsetForLeaderEpochRequest()
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = "epochs"
	for _, current := range []int32{1, -1, 0} {
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = 0, current, 0
		rt.Partitions = append(rt.Partitions, rp)
	}
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch = 7, 0
	rt.Partitions = append(rt.Partitions, rp)
	raw.Topics = append(raw.Topics, rt)
	rt = kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = "missing"
	rt.Partitions = append(rt.Partitions, rp)
	raw.Topics = append(raw.Topics, rt)
	resp := kzerotest.BrokerRequest[*kmsg.OffsetForLeaderEpochResponse](t, ctx, cl, raw)
	kzerotest.WantCode(t, "missing topic", resp.Topics[1].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
	ps := resp.Topics[0].Partitions
	kzerotest.WantCode(t, "newer current epoch", ps[0].ErrorCode, kerr.UnknownLeaderEpoch)
	if ps[1].ErrorCode != 0 || ps[1].EndOffset != 10 || ps[2].ErrorCode != 0 || ps[2].EndOffset != 10 {
		t.Fatalf("unchecked and matching current epoch: %+v %+v", ps[1], ps[2])
	}
	kzerotest.WantCode(t, "missing partition", ps[3].ErrorCode, kerr.UnknownTopicOrPartition)
}

// produceIdempotent writes one batch of n records as an idempotent
// producer would: producer id, epoch and base sequence set.
func produceIdempotent(t *testing.T, ctx context.Context, b *node.Node, cl *kgo.Client, topic string, partition int32, pid int64, epoch int16, seq int32, n int) {
	t.Helper()
	var bld record.Builder
	bld.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli(), LastOffsetDelta: -1,
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq})
	for i := range n {
		bld.Add(&record.Record{OffsetDelta: int32(i), Value: []byte(strconv.Itoa(i))})
	}
	batch, err := bld.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, b.Controller().Image().Topic(topic).ID // by id from v13
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := kzerotest.BrokerRequest[*kmsg.ProduceResponse](t, ctx, cl, req)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("idempotent produce: %v", kerr.ErrorForCode(code))
	}
}

// DescribeProducers after idempotent produce requests. kzero has no
// InitProducerID yet, so the batches carry a producer id of the test's
// choosing, as a client would after InitProducerID.
func TestAdminDescribeProducers(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := nodetest.Client(t, b)
	adm := kadm.NewClient(cl)
	kzerotest.CreateTopic(t, ctx, cl, "producers", 2, nil)
	const pid, epoch = 4000, 3
	produceIdempotent(t, ctx, b, cl, "producers", 0, pid, epoch, 0, 3)
	produceIdempotent(t, ctx, b, cl, "producers", 0, pid, epoch, 3, 4)

	res, err := adm.DescribeProducers(ctx, kadm.TopicsSet{"producers": {0: {}, 1: {}}})
	if err != nil {
		t.Fatal(err)
	}
	p0 := res["producers"].Partitions[0]
	if p0.Err != nil || len(p0.ActiveProducers) != 1 {
		t.Fatalf("partition 0: %+v", p0)
	}
	ap := p0.ActiveProducers[pid]
	if ap.ProducerID != pid || ap.ProducerEpoch != epoch || ap.LastSequence != 6 || ap.LastTimestamp <= 0 ||
		ap.CoordinatorEpoch != -1 || ap.CurrentTxnStartOffset != -1 {
		t.Fatalf("producer %+v, want id %d epoch %d last sequence 6", ap, pid, epoch)
	}
	if p1 := res["producers"].Partitions[1]; p1.Err != nil || len(p1.ActiveProducers) != 0 {
		t.Fatalf("partition 1: %+v", p1)
	}

	raw := kmsg.NewPtrDescribeProducersRequest()
	for _, name := range []string{"producers", "missing"} {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = name, []int32{5}
		raw.Topics = append(raw.Topics, rt)
	}
	resp := kzerotest.BrokerRequest[*kmsg.DescribeProducersResponse](t, ctx, cl, raw)
	kzerotest.WantCode(t, "missing partition", resp.Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
	kzerotest.WantCode(t, "missing topic", resp.Topics[1].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
}
