package topicconfig

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
)

// Kafka 4.1's non-internal topic configs.
var kafkaTopicConfigs = []string{
	"cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
	"compression.zstd.level", "delete.retention.ms", "file.delete.delay.ms", "flush.messages", "flush.ms",
	"follower.replication.throttled.replicas", "index.interval.bytes", "leader.replication.throttled.replicas",
	"local.retention.bytes", "local.retention.ms", "max.compaction.lag.ms", "max.message.bytes",
	"message.timestamp.after.max.ms", "message.timestamp.before.max.ms", "message.timestamp.type",
	"min.cleanable.dirty.ratio", "min.compaction.lag.ms", "min.insync.replicas", "preallocate",
	"remote.log.copy.disable", "remote.log.delete.on.disable", "remote.storage.enable", "retention.bytes",
	"retention.ms", "segment.bytes", "segment.index.bytes", "segment.jitter.ms", "segment.ms",
	"unclean.leader.election.enable",
}

func TestRegistryComplete(t *testing.T) {
	var names []string
	for _, d := range Defs() {
		names = append(names, d.Name)
		if err := d.Validate(d.Default); err != nil {
			t.Errorf("%s: default %q invalid: %v", d.Name, d.Default, err)
		}
		for _, s := range d.Synonyms {
			if !s.HasDefault {
				continue
			}
			if _, err := ValidateBroker(s.Name, s.Default); err != nil {
				t.Errorf("%s: synonym %s default %q invalid: %v", d.Name, s.Name, s.Default, err)
			}
			if v, _ := convert(s, s.Default); v != d.Default {
				t.Errorf("%s: default %q, but broker synonym %s's default gives %q", d.Name, d.Default, s.Name, v)
			}
		}
	}
	if !slices.Equal(names, kafkaTopicConfigs) {
		t.Fatalf("registry has %v\nwant %v", names, kafkaTopicConfigs)
	}
}

func TestValidate(t *testing.T) {
	good := map[string][]string{
		"cleanup.policy":                          {"delete", "compact", "compact,delete", " delete , compact ", ""},
		"compression.type":                        {"zstd", "producer", "uncompressed"},
		"compression.gzip.level":                  {"-1", "1", "9"},
		"compression.zstd.level":                  {"-131072", "22"},
		"retention.ms":                            {"-1", "0", "9223372036854775807", " 100 "},
		"retention.bytes":                         {"-1", "-100", "5"},
		"segment.bytes":                           {"1048576", "2147483647"},
		"min.cleanable.dirty.ratio":               {"0", "0.5", "1"},
		"message.timestamp.type":                  {"CreateTime", "LogAppendTime"},
		"unclean.leader.election.enable":          {"true", "FALSE", " True "},
		"leader.replication.throttled.replicas":   {"", "*", "0:1,1:2", "0:1, 2:3"},
		"follower.replication.throttled.replicas": {"*"},
	}
	bad := map[string][]string{
		"cleanup.policy":                        {"none", "delete,forever"},
		"compression.type":                      {"brotli", "ZSTD"},
		"compression.gzip.level":                {"0", "10", "-2"},
		"compression.lz4.level":                 {"0", "18"},
		"retention.ms":                          {"-2", "1.5", "", "ten"},
		"segment.bytes":                         {"1048575", "2147483648"},
		"segment.ms":                            {"0"},
		"min.insync.replicas":                   {"0"},
		"min.cleanable.dirty.ratio":             {"1.1", "-0.1", "NaN"},
		"message.timestamp.type":                {"createtime"},
		"preallocate":                           {"yes", ""},
		"leader.replication.throttled.replicas": {"0-1", "a:1", "*,0:1"},
	}
	for name, vs := range good {
		for _, v := range vs {
			if err := Validate(name, v); err != nil {
				t.Errorf("%s=%q: %v", name, v, err)
			}
		}
	}
	for name, vs := range bad {
		for _, v := range vs {
			if err := Validate(name, v); err == nil {
				t.Errorf("%s=%q accepted", name, v)
			}
		}
	}
	if err := Validate("retention.minutes", "1"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("unknown name: %v", err)
	}
	if err := ValidateAll(map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "9"}); err == nil {
		t.Fatal("min > max compaction lag accepted")
	}
	if err := ValidateAll(map[string]string{"remote.storage.enable": "true"}); err == nil {
		t.Fatal("remote storage accepted")
	}
	if err := ValidateAll(map[string]string{"remote.storage.enable": "false", "retention.ms": "5"}); err != nil {
		t.Fatal(err)
	}
}

func TestValidateBroker(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		known, ok   bool
	}{
		{"log.retention.hours", "24", true, true},
		{"log.retention.hours", "99999999999", true, false}, // not an INT
		{"log.retention.ms", "-1", true, true},
		{"log.retention.ms", "-7", true, false},
		{"log.segment.bytes", "100", true, false},
		{"message.max.bytes", "1000", true, true},
		{"log.cleanup.policy", "compact,delete", true, true},
		{"num.io.threads", "8", false, true},
	} {
		known, err := ValidateBroker(tc.name, tc.value)
		if known != tc.known || (err == nil) != tc.ok {
			t.Errorf("%s=%s: known %v err %v", tc.name, tc.value, known, err)
		}
	}
}

func find(t *testing.T, es []Entry, name string) Entry {
	t.Helper()
	for _, e := range es {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("%s not described", name)
	return Entry{}
}

func TestDescribeSynonyms(t *testing.T) {
	es := Describe(nil, BrokerConfigs{})
	if len(es) != len(kafkaTopicConfigs) {
		t.Fatalf("%d entries", len(es))
	}
	for _, e := range es {
		if !e.IsDefault() || e.ReadOnly || e.Sensitive || e.Doc == "" {
			t.Errorf("%s: %+v", e.Name, e)
		}
	}
	r := find(t, es, "retention.ms")
	if r.Value != "604800000" || len(r.Synonyms) != 1 || r.Synonyms[0] != (SynonymValue{"log.retention.hours", "168", kmsg.ConfigSourceDefaultConfig}) {
		t.Fatalf("retention.ms default: %+v", r)
	}
	if r := find(t, es, "remote.storage.enable"); r.Value != "false" || len(r.Synonyms) != 0 {
		t.Fatalf("remote.storage.enable: %+v", r)
	}

	layers := BrokerConfigs{
		Dynamic:        map[string]string{"log.retention.minutes": "3"},
		ClusterDefault: map[string]string{"log.retention.hours": "2"},
		Static:         map[string]string{"log.retention.ms": "5000", "log.retention.hours": "1"},
	}
	r, _ = DescribeOne("retention.ms", map[string]string{"retention.ms": "77"}, layers)
	want := []SynonymValue{
		{"retention.ms", "77", kmsg.ConfigSourceDynamicTopicConfig},
		{"log.retention.minutes", "3", kmsg.ConfigSourceDynamicBrokerConfig},
		{"log.retention.hours", "2", kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{"log.retention.ms", "5000", kmsg.ConfigSourceStaticBrokerConfig},
		{"log.retention.hours", "1", kmsg.ConfigSourceStaticBrokerConfig},
		{"log.retention.hours", "168", kmsg.ConfigSourceDefaultConfig},
	}
	if r.Value != "77" || r.Source != kmsg.ConfigSourceDynamicTopicConfig || !slices.Equal(r.Synonyms, want) {
		t.Fatalf("retention.ms: %+v", r)
	}
	r, _ = DescribeOne("retention.ms", nil, layers)
	if r.Value != "180000" || r.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Fatalf("retention.ms from minutes: %+v", r)
	}
	layers.Dynamic = nil
	layers.ClusterDefault = nil
	r, _ = DescribeOne("retention.ms", nil, layers)
	if r.Value != "5000" || r.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("retention.ms from static ms: %+v", r)
	}
	if _, ok := DescribeOne("nope", nil, layers); ok {
		t.Fatal("described an unknown config")
	}
}

func TestLogConfig(t *testing.T) {
	got := LogConfig(nil, BrokerConfigs{})
	want := log.DefaultConfig()
	// Kafka 4.x accepts timestamps at most an hour ahead by default.
	want.TimestampAfterMaxMs = 3600000
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", got, want)
	}
	got = LogConfig(map[string]string{
		"cleanup.policy": "compact", "segment.bytes": "1048576", "message.timestamp.type": "LogAppendTime",
		"min.cleanable.dirty.ratio": "0.25", "max.message.bytes": "123",
	}, BrokerConfigs{Static: map[string]string{"log.retention.hours": "1", "log.flush.interval.messages": "10"}})
	if !got.Compact || got.Delete || got.SegmentBytes != 1<<20 || !got.LogAppendTime || got.MinCleanableDirtyRatio != 0.25 ||
		got.MaxMessageBytes != 123 || got.RetentionMs != 3600000 || got.FlushMessages != 10 || got.FlushMs != math.MaxInt64 {
		t.Fatalf("%+v", got)
	}
	if got := LogConfig(map[string]string{"cleanup.policy": ""}, BrokerConfigs{}); got.Compact || got.Delete {
		t.Fatalf("empty cleanup.policy: %+v", got)
	}
}
