package main

// Admin APIs against an in-process broker, driven by franz-go's kadm and
// raw kmsg requests: CreatePartitions, DescribeConfigs, AlterConfigs,
// IncrementalAlterConfigs, DescribeCluster, DescribeTopicPartitions,
// OffsetForLeaderEpoch and DescribeProducers.

import (
	"context"
	"errors"
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

	"kzero/log"
	"kzero/node"
	"kzero/record"
)

func adminContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func adminCreate(t *testing.T, ctx context.Context, adm *kadm.Client, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	res, err := adm.CreateTopic(ctx, partitions, 1, configs, name)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// adminRequest sends a raw request to the broker node 1 through kgo, which
// must know it already (from an earlier metadata request), and returns
// its response. kgo picks the version: the highest both sides serve.
func adminRequest[R kmsg.Response](t *testing.T, ctx context.Context, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	resp, err := cl.Broker(1).Request(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp.(R)
}

func wantErr(t *testing.T, what string, got error, want *kerr.Error) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Fatalf("%s: %v", what, got)
		}
		return
	}
	if !errors.Is(got, want) {
		t.Fatalf("%s: error %v, want %s", what, got, want.Message)
	}
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	if got != want.Code {
		t.Fatalf("%s: error code %d (%v), want %s", what, got, kerr.ErrorForCode(got), want.Message)
	}
}

func TestAdminCreatePartitions(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx := adminContext(t)
	cl := newClient(t, b)
	adm := kadm.NewClient(cl)
	adminCreate(t, ctx, adm, "grow", 1, nil)
	adminCreate(t, ctx, adm, "other", 2, nil)

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
	wantErr(t, "validate only", res["grow"].Err, nil)
	if n := partitions("grow"); n != 1 {
		t.Fatalf("validate only created partitions: %d", n)
	}

	res, err = adm.CreatePartitions(ctx, 2, "grow", "missing")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "grow", res["grow"].Err, nil)
	wantErr(t, "missing topic", res["missing"].Err, kerr.UnknownTopicOrPartition)
	if n := partitions("grow"); n != 3 {
		t.Fatalf("after adding 2: %d partitions", n)
	}

	res, err = adm.UpdatePartitions(ctx, 2, "grow")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "shrink", res["grow"].Err, kerr.InvalidPartitions)
	res, err = adm.UpdatePartitions(ctx, 3, "grow")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "same count", res["grow"].Err, kerr.InvalidPartitions)

	// The new partition takes records.
	p := newClient(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
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
	resp := adminRequest[*kmsg.CreatePartitionsResponse](t, ctx, cl, req)
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
	resp = adminRequest[*kmsg.CreatePartitionsResponse](t, ctx, cl, req)
	wantCode(t, "too few assignments", resp.Topics[0].ErrorCode, kerr.InvalidReplicaAssignment)
	wantCode(t, "unknown broker", resp.Topics[1].ErrorCode, kerr.InvalidReplicaAssignment)
	if resp.Topics[0].ErrorMessage == nil {
		t.Fatal("no error message")
	}
}

// findConfig returns a described config by name.
func findConfig(t *testing.T, rc kadm.ResourceConfig, name string) kadm.Config {
	t.Helper()
	for _, c := range rc.Configs {
		if c.Key == name {
			return c
		}
	}
	t.Fatalf("%s: no config %s", rc.Name, name)
	return kadm.Config{}
}

func wantConfig(t *testing.T, c kadm.Config, value string, src kmsg.ConfigSource) {
	t.Helper()
	if c.Value == nil || *c.Value != value || c.Source != src {
		t.Fatalf("%s = %v (%v), want %s (%v)", c.Key, c.Value, c.Source, value, src)
	}
}

func describeTopic(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) kadm.ResourceConfig {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Err != nil {
		t.Fatalf("describe %s: %v", topic, rc.Err)
	}
	return rc
}

func TestAdminDescribeConfigs(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), "log.segment.bytes", "2097152")
	defer stopBroker(t, b)
	ctx := adminContext(t)
	cl := newClient(t, b)
	adm := kadm.NewClient(cl)
	adminCreate(t, ctx, adm, "described", 1, map[string]*string{"segment.ms": kadm.StringPtr("60000")})

	rc := describeTopic(t, ctx, adm, "described")
	seg := findConfig(t, rc, "segment.ms")
	wantConfig(t, seg, "60000", kmsg.ConfigSourceDynamicTopicConfig)
	if len(seg.Synonyms) == 0 || seg.Synonyms[0].Key != "segment.ms" || seg.Synonyms[0].Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("segment.ms synonyms %+v", seg.Synonyms)
	}
	// log.segment.bytes from server.properties, then its default.
	bytes := findConfig(t, rc, "segment.bytes")
	wantConfig(t, bytes, "2097152", kmsg.ConfigSourceStaticBrokerConfig)
	if len(bytes.Synonyms) != 2 || bytes.Synonyms[0].Key != "log.segment.bytes" || bytes.Synonyms[1].Source != kmsg.ConfigSourceDefaultConfig ||
		bytes.Synonyms[1].Value == nil || *bytes.Synonyms[1].Value != "1073741824" {
		t.Fatalf("segment.bytes synonyms %+v", bytes.Synonyms)
	}
	wantConfig(t, findConfig(t, rc, "cleanup.policy"), "delete", kmsg.ConfigSourceDefaultConfig)
	wantConfig(t, findConfig(t, rc, "retention.ms"), "604800000", kmsg.ConfigSourceDefaultConfig)
	wantConfig(t, findConfig(t, rc, "max.message.bytes"), "1048588", kmsg.ConfigSourceDefaultConfig)

	rcs, err := adm.DescribeTopicConfigs(ctx, "missing")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "missing topic", rcs[0].Err, kerr.UnknownTopicOrPartition)

	// Broker configs: static keys, topic config synonyms with their
	// defaults, and null for one without a default.
	brcs, err := adm.DescribeBrokerConfigs(ctx, b.ID())
	if err != nil {
		t.Fatal(err)
	}
	brc := brcs[0]
	if brc.Err != nil {
		t.Fatal(brc.Err)
	}
	wantConfig(t, findConfig(t, brc, "log.segment.bytes"), "2097152", kmsg.ConfigSourceStaticBrokerConfig)
	wantConfig(t, findConfig(t, brc, "log.retention.hours"), "168", kmsg.ConfigSourceDefaultConfig)
	wantConfig(t, findConfig(t, brc, "node.id"), strconv.Itoa(int(b.ID())), kmsg.ConfigSourceStaticBrokerConfig)
	if c := findConfig(t, brc, "log.retention.ms"); c.Value != nil || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("log.retention.ms = %v (%v), want null default", c.Value, c.Source)
	}
	if c := findConfig(t, brc, "log.segment.bytes"); len(c.Synonyms) != 2 || c.Synonyms[1].Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("log.segment.bytes synonyms %+v", c.Synonyms)
	}

	// A cluster-wide dynamic default shows on "" and on the broker, and
	// reaches topics without their own value.
	ares, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: kadm.StringPtr("7200000")}})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "alter cluster default", ares[0].Err, nil)
	brcs, err = adm.DescribeBrokerConfigs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(brcs[0].Configs) != 1 {
		t.Fatalf("cluster defaults %+v", brcs[0].Configs)
	}
	wantConfig(t, brcs[0].Configs[0], "7200000", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	wantConfig(t, findConfig(t, describeTopic(t, ctx, adm, "described"), "retention.ms"), "7200000", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	if ms := partitionLog(t, b, "described", 0).Config().RetentionMs; ms != 7200000 {
		t.Fatalf("the log's retention after the cluster default changed: %d", ms)
	}

	// Raw: a ConfigNames filter, documentation and types, another broker
	// id, and sensitive-free values.
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeDocumentation = true
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "described"
	res.ConfigNames = []string{"segment.ms", "no.such.config", "max.message.bytes"}
	req.Resources = append(req.Resources, res)
	res.ResourceType, res.ResourceName, res.ConfigNames = kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(b.ID())+7), nil
	req.Resources = append(req.Resources, res)
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "bad/name"
	req.Resources = append(req.Resources, res)
	resp := adminRequest[*kmsg.DescribeConfigsResponse](t, ctx, cl, req)
	if len(resp.Resources) != 3 {
		t.Fatalf("%d resources", len(resp.Resources))
	}
	topic := resp.Resources[0]
	if topic.ErrorCode != 0 || len(topic.Configs) != 2 || topic.Configs[0].Name != "max.message.bytes" || topic.Configs[1].Name != "segment.ms" {
		t.Fatalf("filtered configs %+v", topic.Configs)
	}
	for _, c := range topic.Configs {
		if c.Documentation == nil || *c.Documentation == "" || c.ConfigSynonyms != nil {
			t.Fatalf("%s: documentation %v, synonyms %v", c.Name, c.Documentation, c.ConfigSynonyms)
		}
	}
	if topic.Configs[0].ConfigType != kmsg.ConfigTypeInt || topic.Configs[1].ConfigType != kmsg.ConfigTypeLong {
		t.Fatalf("types %v %v", topic.Configs[0].ConfigType, topic.Configs[1].ConfigType)
	}
	wantCode(t, "another broker", resp.Resources[1].ErrorCode, kerr.InvalidRequest)
	wantCode(t, "invalid topic name", resp.Resources[2].ErrorCode, kerr.InvalidTopicException)

	// An unknown resource type fails every resource.
	req.Resources[1].ResourceType = 99
	resp = adminRequest[*kmsg.DescribeConfigsResponse](t, ctx, cl, req)
	for _, r := range resp.Resources {
		wantCode(t, "unknown resource type", r.ErrorCode, kerr.InvalidRequest)
	}
}

// partitionLog is the local log of a partition.
func partitionLog(t *testing.T, b *node.Node, topic string, partition int32) *log.Log {
	t.Helper()
	p, ok := b.Replicas().Partition(log.TopicPartition{Topic: topic, Partition: partition})
	if !ok {
		t.Fatalf("%s-%d is not local", topic, partition)
	}
	return p.Log()
}

func TestAdminAlterConfigsLive(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), "log.retention.check.interval.ms", "50", "log.segment.delete.delay.ms", "0")
	defer stopBroker(t, b)
	ctx := adminContext(t)
	cl := newClient(t, b)
	adm := kadm.NewClient(cl)
	adminCreate(t, ctx, adm, "live", 1, nil)
	l := partitionLog(t, b, "live", 0)
	if c := l.Config(); c.SegmentBytes != 1<<30 || c.RetentionMs != 604800000 {
		t.Fatalf("initial log config: segment %d, retention %d", c.SegmentBytes, c.RetentionMs)
	}

	alter := func(configs ...kadm.AlterConfig) error {
		t.Helper()
		res, err := adm.AlterTopicConfigs(ctx, configs, "live")
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Err
	}

	// Validate only changes nothing; bad values and names are refused.
	vres, err := adm.ValidateAlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "segment.bytes", Value: kadm.StringPtr("1048576")}}, "live")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "validate only", vres[0].Err, nil)
	if l.Config().SegmentBytes != 1<<30 {
		t.Fatal("validate only changed the log config")
	}
	wantErr(t, "segment.bytes too small", alter(kadm.AlterConfig{Name: "segment.bytes", Value: kadm.StringPtr("100")}), kerr.InvalidConfig)
	wantErr(t, "unknown config", alter(kadm.AlterConfig{Name: "no.such.config", Value: kadm.StringPtr("1")}), kerr.InvalidConfig)
	wantErr(t, "append to a long", alter(kadm.AlterConfig{Op: kadm.AppendConfig, Name: "retention.ms", Value: kadm.StringPtr("1")}), kerr.InvalidConfig)

	// SET reaches the live log.
	wantErr(t, "set", alter(
		kadm.AlterConfig{Name: "segment.bytes", Value: kadm.StringPtr("1048576")},
		kadm.AlterConfig{Name: "retention.ms", Value: kadm.StringPtr("86400000")},
	), nil)
	if c := l.Config(); c.SegmentBytes != 1048576 || c.RetentionMs != 86400000 {
		t.Fatalf("after alter: segment %d, retention %d", c.SegmentBytes, c.RetentionMs)
	}
	rc := describeTopic(t, ctx, adm, "live")
	wantConfig(t, findConfig(t, rc, "segment.bytes"), "1048576", kmsg.ConfigSourceDynamicTopicConfig)

	// Segments roll at the new size.
	p := newClient(t, b, kgo.DefaultProduceTopic("live"), kgo.ProducerBatchMaxBytes(256<<10),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	value := []byte(strings.Repeat("v", 100<<10))
	var rs []*kgo.Record
	for range 40 {
		rs = append(rs, &kgo.Record{Value: value})
	}
	if err := p.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if n := len(l.Segments()); n < 3 {
		t.Fatalf("4 MB in 1 MiB segments made %d segments", n)
	}

	// retention.bytes makes retention delete the old segments.
	wantErr(t, "retention.bytes", alter(kadm.AlterConfig{Name: "retention.bytes", Value: kadm.StringPtr("1048576")}), nil)
	for l.LogStartOffset() == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("retention.bytes never deleted a segment: %d segments", len(l.Segments()))
		case <-time.After(20 * time.Millisecond):
		}
	}
	starts, err := adm.ListStartOffsets(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := starts.Lookup("live", 0); o.Offset <= 0 {
		t.Fatalf("start offset %d after retention", o.Offset)
	}

	// APPEND and SUBTRACT on a list, DELETE back to the default.
	wantErr(t, "append", alter(kadm.AlterConfig{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: kadm.StringPtr("compact")}), nil)
	wantConfig(t, findConfig(t, describeTopic(t, ctx, adm, "live"), "cleanup.policy"), "delete,compact", kmsg.ConfigSourceDynamicTopicConfig)
	if c := l.Config(); !c.Compact || !c.Delete {
		t.Fatalf("cleanup.policy delete,compact: compact %v delete %v", c.Compact, c.Delete)
	}
	wantErr(t, "subtract", alter(kadm.AlterConfig{Op: kadm.SubtractConfig, Name: "cleanup.policy", Value: kadm.StringPtr("delete")}), nil)
	if c := l.Config(); !c.Compact || c.Delete {
		t.Fatalf("cleanup.policy compact: compact %v delete %v", c.Compact, c.Delete)
	}
	wantErr(t, "delete", alter(kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "retention.ms"}), nil)
	wantConfig(t, findConfig(t, describeTopic(t, ctx, adm, "live"), "retention.ms"), "604800000", kmsg.ConfigSourceDefaultConfig)
	if l.Config().RetentionMs != 604800000 {
		t.Fatalf("retention.ms after DELETE: %d", l.Config().RetentionMs)
	}

	// The legacy API replaces the whole set: segment.bytes and
	// cleanup.policy go back to their defaults.
	sres, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("1000000")}}, "live")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "legacy alter", sres[0].Err, nil)
	rc = describeTopic(t, ctx, adm, "live")
	wantConfig(t, findConfig(t, rc, "retention.ms"), "1000000", kmsg.ConfigSourceDynamicTopicConfig)
	wantConfig(t, findConfig(t, rc, "segment.bytes"), "1073741824", kmsg.ConfigSourceDefaultConfig)
	if c := l.Config(); c.SegmentBytes != 1<<30 || c.RetentionMs != 1000000 || c.Compact || !c.Delete {
		t.Fatalf("after legacy alter: %+v", c)
	}

	// Raw checks made before the controller: null values, repeated
	// resources, repeated keys.
	legacy := kmsg.NewPtrAlterConfigsRequest()
	lr := kmsg.NewAlterConfigsRequestResource()
	lr.ResourceType, lr.ResourceName = kmsg.ConfigResourceTypeTopic, "live"
	lc := kmsg.NewAlterConfigsRequestResourceConfig()
	lc.Name = "retention.ms"
	lr.Configs = append(lr.Configs, lc)
	legacy.Resources = append(legacy.Resources, lr)
	lresp := adminRequest[*kmsg.AlterConfigsResponse](t, ctx, cl, legacy)
	wantCode(t, "null value", lresp.Resources[0].ErrorCode, kerr.InvalidRequest)
	if m := lresp.Resources[0].ErrorMessage; m == nil || !strings.Contains(*m, "retention.ms") {
		t.Fatalf("null value message %v", m)
	}

	inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, name := range []string{"live", "live", "missing"} {
		ir := kmsg.NewIncrementalAlterConfigsRequestResource()
		ir.ResourceType, ir.ResourceName = kmsg.ConfigResourceTypeTopic, name
		ic := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		ic.Name, ic.Op, ic.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, kadm.StringPtr("5000")
		ir.Configs = append(ir.Configs, ic)
		inc.Resources = append(inc.Resources, ir)
	}
	iresp := adminRequest[*kmsg.IncrementalAlterConfigsResponse](t, ctx, cl, inc)
	wantCode(t, "repeated resource", iresp.Resources[0].ErrorCode, kerr.InvalidRequest)
	wantCode(t, "repeated resource", iresp.Resources[1].ErrorCode, kerr.InvalidRequest)
	wantCode(t, "missing topic", iresp.Resources[2].ErrorCode, kerr.UnknownTopicOrPartition)

	inc.Resources = inc.Resources[:1]
	inc.Resources[0].Configs = append(inc.Resources[0].Configs, inc.Resources[0].Configs[0])
	iresp = adminRequest[*kmsg.IncrementalAlterConfigsResponse](t, ctx, cl, inc)
	wantCode(t, "repeated key", iresp.Resources[0].ErrorCode, kerr.InvalidRequest)
	if l.Config().RetentionMs != 1000000 {
		t.Fatalf("a refused alter changed retention.ms: %d", l.Config().RetentionMs)
	}
}

func TestAdminDescribeCluster(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), "broker.rack", "r1")
	defer stopBroker(t, b)
	ctx := adminContext(t)
	cl := newClient(t, b)
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}

	req := kmsg.NewPtrDescribeClusterRequest()
	resp := adminRequest[*kmsg.DescribeClusterResponse](t, ctx, cl, req)
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
	resp = adminRequest[*kmsg.DescribeClusterResponse](t, ctx, cl, req)
	if ops := resp.ClusterAuthorizedOperations; ops <= 0 || ops&(1<<8) == 0 {
		t.Fatalf("authorized operations %b lack DESCRIBE", ops)
	}

	req.EndpointType = 2
	resp = adminRequest[*kmsg.DescribeClusterResponse](t, ctx, cl, req)
	wantCode(t, "controllers endpoint", resp.ErrorCode, kerr.MismatchedEndpointType)
	req.EndpointType = 9
	resp = adminRequest[*kmsg.DescribeClusterResponse](t, ctx, cl, req)
	wantCode(t, "unknown endpoint type", resp.ErrorCode, kerr.UnsupportedEndpointType)
}

func TestAdminDescribeTopicPartitions(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx := adminContext(t)
	cl := newClient(t, b)
	adm := kadm.NewClient(cl)
	adminCreate(t, ctx, adm, "dtp-a", 5, nil)
	adminCreate(t, ctx, adm, "dtp-b", 3, nil)
	adminCreate(t, ctx, adm, "dtp-c", 1, nil)

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
		resp := adminRequest[*kmsg.DescribeTopicPartitionsResponse](t, ctx, cl, req)
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
	resp := adminRequest[*kmsg.DescribeTopicPartitionsResponse](t, ctx, cl, req)
	for _, rt := range resp.Topics {
		wantCode(t, "cursor outside topics", rt.ErrorCode, kerr.InvalidRequest)
	}

	// No topics named: every topic, with no error for missing ones.
	req.Topics, req.Cursor, req.ResponsePartitionLimit = nil, nil, 2000
	resp = adminRequest[*kmsg.DescribeTopicPartitionsResponse](t, ctx, cl, req)
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
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx := adminContext(t)
	cl := newClient(t, b, kgo.DefaultProduceTopic("epochs"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	adminCreate(t, ctx, adm, "epochs", 2, nil)
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
	resp := adminRequest[*kmsg.OffsetForLeaderEpochResponse](t, ctx, cl, raw)
	wantCode(t, "missing topic", resp.Topics[1].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
	ps := resp.Topics[0].Partitions
	wantCode(t, "newer current epoch", ps[0].ErrorCode, kerr.UnknownLeaderEpoch)
	if ps[1].ErrorCode != 0 || ps[1].EndOffset != 10 || ps[2].ErrorCode != 0 || ps[2].EndOffset != 10 {
		t.Fatalf("unchecked and matching current epoch: %+v %+v", ps[1], ps[2])
	}
	wantCode(t, "missing partition", ps[3].ErrorCode, kerr.UnknownTopicOrPartition)
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
	resp := adminRequest[*kmsg.ProduceResponse](t, ctx, cl, req)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("idempotent produce: %v", kerr.ErrorForCode(code))
	}
}

// DescribeProducers after idempotent produce requests. kzero has no
// InitProducerID yet, so the batches carry a producer id of the test's
// choosing, as a client would after InitProducerID.
func TestAdminDescribeProducers(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx := adminContext(t)
	cl := newClient(t, b)
	adm := kadm.NewClient(cl)
	adminCreate(t, ctx, adm, "producers", 2, nil)
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
	resp := adminRequest[*kmsg.DescribeProducersResponse](t, ctx, cl, raw)
	wantCode(t, "missing partition", resp.Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
	wantCode(t, "missing topic", resp.Topics[1].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
}
