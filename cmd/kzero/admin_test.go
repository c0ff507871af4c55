package main

// The config admin APIs against an in-process broker configured from
// server.properties keys, driven by franz-go's kadm and raw kmsg requests:
// DescribeConfigs, AlterConfigs and IncrementalAlterConfigs, whose answers
// depend on this package's key table (static values, sources, dynamic
// broker validation). The other admin APIs' tests are in net/api.

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node/nodetest"
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
	kzerotest.WantErr(t, "missing topic", rcs[0].Err, kerr.UnknownTopicOrPartition)

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
	kzerotest.WantErr(t, "alter cluster default", ares[0].Err, nil)
	brcs, err = adm.DescribeBrokerConfigs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(brcs[0].Configs) != 1 {
		t.Fatalf("cluster defaults %+v", brcs[0].Configs)
	}
	wantConfig(t, brcs[0].Configs[0], "7200000", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	wantConfig(t, findConfig(t, describeTopic(t, ctx, adm, "described"), "retention.ms"), "7200000", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	if ms := nodetest.PartitionLog(t, b, "described", 0).Config().RetentionMs; ms != 7200000 {
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
	resp := kzerotest.BrokerRequest[*kmsg.DescribeConfigsResponse](t, ctx, cl, req)
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
	kzerotest.WantCode(t, "another broker", resp.Resources[1].ErrorCode, kerr.InvalidRequest)
	kzerotest.WantCode(t, "invalid topic name", resp.Resources[2].ErrorCode, kerr.InvalidTopicException)

	// An unknown resource type fails every resource.
	req.Resources[1].ResourceType = 99
	resp = kzerotest.BrokerRequest[*kmsg.DescribeConfigsResponse](t, ctx, cl, req)
	for _, r := range resp.Resources {
		kzerotest.WantCode(t, "unknown resource type", r.ErrorCode, kerr.InvalidRequest)
	}
}

func TestAdminAlterConfigsLive(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), "log.retention.check.interval.ms", "50", "log.segment.delete.delay.ms", "0")
	defer stopBroker(t, b)
	ctx := adminContext(t)
	cl := newClient(t, b)
	adm := kadm.NewClient(cl)
	adminCreate(t, ctx, adm, "live", 1, nil)
	l := nodetest.PartitionLog(t, b, "live", 0)
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
	kzerotest.WantErr(t, "validate only", vres[0].Err, nil)
	if l.Config().SegmentBytes != 1<<30 {
		t.Fatal("validate only changed the log config")
	}
	kzerotest.WantErr(t, "segment.bytes too small", alter(kadm.AlterConfig{Name: "segment.bytes", Value: kadm.StringPtr("100")}), kerr.InvalidConfig)
	kzerotest.WantErr(t, "unknown config", alter(kadm.AlterConfig{Name: "no.such.config", Value: kadm.StringPtr("1")}), kerr.InvalidConfig)
	kzerotest.WantErr(t, "append to a long", alter(kadm.AlterConfig{Op: kadm.AppendConfig, Name: "retention.ms", Value: kadm.StringPtr("1")}), kerr.InvalidConfig)

	// SET reaches the live log.
	kzerotest.WantErr(t, "set", alter(
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
	kzerotest.WantErr(t, "retention.bytes", alter(kadm.AlterConfig{Name: "retention.bytes", Value: kadm.StringPtr("1048576")}), nil)
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
	kzerotest.WantErr(t, "append", alter(kadm.AlterConfig{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: kadm.StringPtr("compact")}), nil)
	wantConfig(t, findConfig(t, describeTopic(t, ctx, adm, "live"), "cleanup.policy"), "delete,compact", kmsg.ConfigSourceDynamicTopicConfig)
	if c := l.Config(); !c.Compact || !c.Delete {
		t.Fatalf("cleanup.policy delete,compact: compact %v delete %v", c.Compact, c.Delete)
	}
	kzerotest.WantErr(t, "subtract", alter(kadm.AlterConfig{Op: kadm.SubtractConfig, Name: "cleanup.policy", Value: kadm.StringPtr("delete")}), nil)
	if c := l.Config(); !c.Compact || c.Delete {
		t.Fatalf("cleanup.policy compact: compact %v delete %v", c.Compact, c.Delete)
	}
	kzerotest.WantErr(t, "delete", alter(kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "retention.ms"}), nil)
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
	kzerotest.WantErr(t, "legacy alter", sres[0].Err, nil)
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
	lresp := kzerotest.BrokerRequest[*kmsg.AlterConfigsResponse](t, ctx, cl, legacy)
	kzerotest.WantCode(t, "null value", lresp.Resources[0].ErrorCode, kerr.InvalidRequest)
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
	iresp := kzerotest.BrokerRequest[*kmsg.IncrementalAlterConfigsResponse](t, ctx, cl, inc)
	kzerotest.WantCode(t, "repeated resource", iresp.Resources[0].ErrorCode, kerr.InvalidRequest)
	kzerotest.WantCode(t, "repeated resource", iresp.Resources[1].ErrorCode, kerr.InvalidRequest)
	kzerotest.WantCode(t, "missing topic", iresp.Resources[2].ErrorCode, kerr.UnknownTopicOrPartition)

	inc.Resources = inc.Resources[:1]
	inc.Resources[0].Configs = append(inc.Resources[0].Configs, inc.Resources[0].Configs[0])
	iresp = kzerotest.BrokerRequest[*kmsg.IncrementalAlterConfigsResponse](t, ctx, cl, inc)
	kzerotest.WantCode(t, "repeated key", iresp.Resources[0].ErrorCode, kerr.InvalidRequest)
	if l.Config().RetentionMs != 1000000 {
		t.Fatalf("a refused alter changed retention.ms: %d", l.Config().RetentionMs)
	}
}
