package coord

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/coord/topicconfig"
)

func TestAlterTopicConfigs(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	mustCreate(t, c, TopicSpec{Name: "t", NumPartitions: 1, ReplicationFactor: 1,
		Configs: map[string]string{"retention.ms": "1000", "segment.ms": "5000"}})

	alter := func(a ConfigAlter, validateOnly bool) Result {
		t.Helper()
		return c.AlterConfigs(ctx(t), []ConfigAlter{a}, validateOnly)[0]
	}
	topic := func() map[string]string { return c.Image().Topic("t").Configs }

	r := alter(ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "t", Changes: []ConfigChange{
		{Key: "retention.ms", Op: OpSet, Value: "2000"},
		{Key: "segment.ms", Op: OpDelete},
		{Key: "cleanup.policy", Op: OpAppend, Value: "compact"},
	}}, false)
	if r.Err != nil {
		t.Fatal(r.Message)
	}
	if got := topic(); got["retention.ms"] != "2000" || got["cleanup.policy"] != "delete,compact" || len(got) != 2 {
		t.Fatalf("configs %v", got)
	}
	if r := alter(ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "t", Changes: []ConfigChange{{Key: "cleanup.policy", Op: OpSubtract, Value: "delete"}}}, false); r.Err != nil {
		t.Fatal(r.Message)
	}
	if got := topic()["cleanup.policy"]; got != "compact" {
		t.Fatalf("after subtract: %q", got)
	}

	bad := []struct {
		a    ConfigAlter
		want *kerr.Error
	}{
		{ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "nope", Changes: []ConfigChange{{Key: "retention.ms", Value: "1"}}}, kerr.UnknownTopicOrPartition},
		{ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "t", Changes: []ConfigChange{{Key: "no.such.config", Value: "1"}}}, kerr.InvalidConfig},
		{ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "t", Changes: []ConfigChange{{Key: "retention.ms", Value: "soon"}}}, kerr.InvalidConfig},
		{ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "t", Changes: []ConfigChange{{Key: "segment.bytes", Value: "100"}}}, kerr.InvalidConfig},
		{ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "t", Changes: []ConfigChange{{Key: "retention.ms", Op: OpAppend, Value: "1"}}}, kerr.InvalidConfig},
		{ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "t", Changes: []ConfigChange{{Key: "retention.ms", Op: 9, Value: "1"}}}, kerr.InvalidRequest},
		{ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "t", Changes: []ConfigChange{{Key: "retention.ms", Value: "1"}, {Key: "retention.ms", Value: "2"}}}, kerr.InvalidRequest},
		{ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "t", Changes: []ConfigChange{{Key: "min.compaction.lag.ms", Value: "10"}, {Key: "max.compaction.lag.ms", Value: "5"}}}, kerr.InvalidConfig},
		{ConfigAlter{ResourceType: metadata.ResourceBroker, Name: "x", Changes: []ConfigChange{{Key: "log.retention.ms", Value: "1"}}}, kerr.InvalidRequest},
		{ConfigAlter{ResourceType: metadata.ResourceBroker, Name: "1", Changes: []ConfigChange{{Key: "num.io.threads", Value: "4"}}}, kerr.InvalidRequest},
		{ConfigAlter{ResourceType: metadata.ResourceBroker, Name: "", Changes: []ConfigChange{{Key: "log.retention.hours", Value: "x"}}}, kerr.InvalidConfig},
		{ConfigAlter{ResourceType: 8, Name: "root", Changes: nil}, kerr.InvalidRequest},
	}
	for i, tc := range bad {
		before := c.Image().Offset()
		for _, validateOnly := range []bool{true, false} {
			if r := alter(tc.a, validateOnly); r.Err != tc.want {
				t.Errorf("case %d validateOnly=%v: %v (%s), want %v", i, validateOnly, r.Err, r.Message, tc.want)
			}
		}
		if c.Image().Offset() != before {
			t.Errorf("case %d changed the log", i)
		}
	}
	// Both changes of a resource fail together.
	if got := topic()["retention.ms"]; got != "2000" {
		t.Fatalf("retention.ms = %q after failed alters", got)
	}

	// Legacy AlterConfigs replaces the whole set.
	if r := alter(ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "t", Replace: true, Changes: []ConfigChange{{Key: "max.message.bytes", Value: "2000000"}}}, false); r.Err != nil {
		t.Fatal(r.Message)
	}
	if got := topic(); len(got) != 1 || got["max.message.bytes"] != "2000000" {
		t.Fatalf("after replace: %v", got)
	}
	// Deleting a key that is not set is no error.
	if r := alter(ConfigAlter{ResourceType: metadata.ResourceTopic, Name: "t", Changes: []ConfigChange{{Key: "retention.bytes", Op: OpDelete}}}, false); r.Err != nil {
		t.Fatal(r.Message)
	}
}

// TestDescribeSources resolves a topic's configs through the image's
// broker layers and a static server.properties.
func TestDescribeSources(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	mustCreate(t, c, TopicSpec{Name: "t", NumPartitions: 1, ReplicationFactor: 1, Configs: map[string]string{"retention.ms": "1000"}})
	res := c.AlterConfigs(ctx(t), []ConfigAlter{
		{ResourceType: metadata.ResourceBroker, Name: "", Changes: []ConfigChange{{Key: "log.segment.bytes", Value: "2097152"}}},
		{ResourceType: metadata.ResourceBroker, Name: "1", Changes: []ConfigChange{{Key: "log.roll.hours", Value: "2"}}},
	}, false)
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Message)
		}
	}
	img := c.Image()
	layers := topicconfig.BrokerConfigs{
		Dynamic:        img.BrokerConfigs("1"),
		ClusterDefault: img.BrokerConfigs(""),
		Static:         map[string]string{"log.cleanup.policy": "compact", "log.segment.bytes": "3145728"},
	}
	entries := topicconfig.Describe(img.Topic("t").Configs, layers)
	want := map[string]struct {
		value string
		src   kmsg.ConfigSource
	}{
		"retention.ms":        {"1000", kmsg.ConfigSourceDynamicTopicConfig},
		"segment.ms":          {"7200000", kmsg.ConfigSourceDynamicBrokerConfig},
		"segment.bytes":       {"2097152", kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		"cleanup.policy":      {"compact", kmsg.ConfigSourceStaticBrokerConfig},
		"min.insync.replicas": {"1", kmsg.ConfigSourceDefaultConfig},
	}
	for _, e := range entries {
		w, ok := want[e.Name]
		if !ok {
			continue
		}
		if e.Value != w.value || e.Source != w.src {
			t.Errorf("%s = %q from %v, want %q from %v", e.Name, e.Value, e.Source, w.value, w.src)
		}
		delete(want, e.Name)
	}
	if len(want) != 0 {
		t.Fatalf("missing %v", want)
	}
	lc := topicconfig.LogConfig(img.Topic("t").Configs, layers)
	if lc.RetentionMs != 1000 || lc.SegmentMs != 7200000 || lc.SegmentBytes != 2097152 || !lc.Compact || lc.Delete {
		t.Fatalf("log config %+v", lc)
	}
}

// Changing min.insync.replicas clears the eligible leader replicas it
// made sound (Kafka's ClearElrRecord): the topic's own value its
// partitions, the cluster-wide default every topic's.
func TestMinInsyncChangeClearsELR(t *testing.T) {
	id, other := metadata.NewUUID(), metadata.NewUUID()
	b := metadata.NewBuilder(metadata.EmptyImage())
	for _, rec := range []metadata.Record{
		&metadata.TopicRecord{Name: "t", ID: id},
		&metadata.PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{1, 2, 3}, ISR: []int32{1}, Leader: 1, ELR: []int32{2}},
		&metadata.PartitionRecord{TopicID: id, Partition: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, Leader: 1},
		&metadata.TopicRecord{Name: "u", ID: other},
		&metadata.PartitionRecord{TopicID: other, Partition: 0, Replicas: []int32{1, 2}, Leader: -1, LastKnownELR: []int32{2}},
	} {
		if err := b.Apply(rec, 1); err != nil {
			t.Fatal(err)
		}
	}
	img := b.Finish(1)
	set := func(typ int8, name string) []metadata.Record {
		return clearELR(img, []metadata.Record{&metadata.ConfigRecord{ResourceType: typ, Name: name, Key: "min.insync.replicas", Value: "1"}})
	}
	if recs := set(metadata.ResourceTopic, "t"); len(recs) != 1 {
		t.Fatalf("topic t: %+v", recs)
	} else if c := recs[0].(*metadata.PartitionChange); c.TopicID != id || c.Partition != 0 || c.PartitionEpoch != 1 || !c.SetELR || !c.SetLastKnownELR || len(c.ELR) != 0 {
		t.Fatalf("topic t: %+v", c)
	}
	if recs := set(metadata.ResourceBroker, ""); len(recs) != 2 {
		t.Fatalf("cluster default: %d changes, want t-0 and u-0", len(recs))
	}
	if recs := set(metadata.ResourceBroker, "1"); len(recs) != 0 {
		t.Fatalf("one broker's value: %d changes", len(recs))
	}
	if recs := clearELR(img, []metadata.Record{&metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, Name: "t", Key: "retention.ms", Value: "1"}}); len(recs) != 0 {
		t.Fatalf("another config: %d changes", len(recs))
	}
}
