package topicconfig

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BrokerConfigs are the broker-level places a topic config can take its
// value from when the topic does not set it, highest priority first.
type BrokerConfigs struct {
	// Dynamic is this broker's dynamic configs (DYNAMIC_BROKER_CONFIG): the
	// metadata image's configs for resource "<broker id>".
	Dynamic map[string]string
	// ClusterDefault is the cluster-wide dynamic broker configs
	// (DYNAMIC_DEFAULT_BROKER_CONFIG): the image's configs for resource "".
	ClusterDefault map[string]string
	// Static is what server.properties and --override set
	// (STATIC_BROKER_CONFIG): only keys set explicitly.
	Static map[string]string
	// Keys are the broker configs the broker knows besides the topic
	// config synonyms: DescribeConfigs lists each, at its default
	// (DEFAULT_CONFIG) when no layer sets it, as Kafka lists every config
	// of its KafkaConfig.
	Keys map[string]BrokerKey
}

// BrokerKey is a broker config's schema.
type BrokerKey struct {
	Default string
	Type    kmsg.ConfigType
	// Dynamic is whether AlterConfigs may set it at runtime (and the
	// broker applies it when it changes).
	Dynamic bool
}

// Synonyms returns the values names have in the broker's configs, highest
// priority first: this broker's dynamic configs, the cluster's dynamic
// defaults, the static ones; within a layer in the order of names.
func (b BrokerConfigs) Synonyms(names ...string) []SynonymValue {
	var out []SynonymValue
	for _, layer := range [...]struct {
		m   map[string]string
		src kmsg.ConfigSource
	}{
		{b.Dynamic, kmsg.ConfigSourceDynamicBrokerConfig},
		{b.ClusterDefault, kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{b.Static, kmsg.ConfigSourceStaticBrokerConfig},
	} {
		for _, n := range names {
			if v, ok := layer.m[n]; ok {
				out = append(out, SynonymValue{n, v, layer.src})
			}
		}
	}
	return out
}

// Entry is one config as DescribeConfigs reports it.
type Entry struct {
	Name      string
	Value     string
	Source    kmsg.ConfigSource
	Type      kmsg.ConfigType
	ReadOnly  bool
	Sensitive bool
	Doc       string
	// Synonyms lists every place the config has a value, highest priority
	// first; Value and Source come from the first. Kafka sends them when
	// the request asks for synonyms.
	Synonyms []SynonymValue
}

// IsDefault is the v0 DescribeConfigs flag: the value is the built-in one.
func (e *Entry) IsDefault() bool { return e.Source == kmsg.ConfigSourceDefaultConfig }

// SynonymValue is one place a config has a value.
type SynonymValue struct {
	Name   string
	Value  string
	Source kmsg.ConfigSource
}

// Describe returns every topic config of a topic whose dynamic configs are
// topic, sorted by name, with values and sources as Kafka resolves them:
// the topic's own value, else the first of its broker synonyms set in
// broker.Dynamic, broker.ClusterDefault, broker.Static (converted to the
// topic's unit: log.retention.hours=1 gives retention.ms=3600000), else the
// default.
func Describe(topic map[string]string, broker BrokerConfigs) []Entry {
	out := make([]Entry, 0, len(defs))
	for _, d := range defs {
		out = append(out, d.describe(topic, broker))
	}
	return out
}

// DescribeOne returns one topic config; ok is false for an unknown name.
func DescribeOne(name string, topic map[string]string, broker BrokerConfigs) (Entry, bool) {
	d, ok := byName[name]
	if !ok {
		return Entry{}, false
	}
	return d.describe(topic, broker), true
}

func (d *Def) describe(topic map[string]string, broker BrokerConfigs) Entry {
	e := Entry{Name: d.Name, Type: d.Type, Doc: d.Doc}
	if v, ok := topic[d.Name]; ok {
		e.Synonyms = append(e.Synonyms, SynonymValue{d.Name, v, kmsg.ConfigSourceDynamicTopicConfig})
	}
	e.Synonyms = append(e.Synonyms, broker.Synonyms(d.synonymNames()...)...)
	for _, s := range d.Synonyms {
		if s.HasDefault {
			e.Synonyms = append(e.Synonyms, SynonymValue{s.Name, s.Default, kmsg.ConfigSourceDefaultConfig})
		}
	}
	e.Value, e.Source = d.Default, kmsg.ConfigSourceDefaultConfig
	if len(e.Synonyms) > 0 {
		first := e.Synonyms[0]
		e.Source = first.Source
		e.Value = first.Value
		if first.Source != kmsg.ConfigSourceDynamicTopicConfig {
			if v, ok := convert(d.synonym(first.Name), first.Value); ok {
				e.Value = v
			}
		}
	}
	return e
}

// synonymNames lists the names of d's broker synonyms, in priority order.
func (d *Def) synonymNames() []string {
	names := make([]string, len(d.Synonyms))
	for i, s := range d.Synonyms {
		names[i] = s.Name
	}
	return names
}

// synonym returns d's broker synonym of that name.
func (d *Def) synonym(name string) Synonym {
	for _, s := range d.Synonyms {
		if s.Name == name {
			return s
		}
	}
	return Synonym{Name: name, Scale: 1}
}

// Value returns the effective value of one topic config, as Describe would
// report it.
func Value(name string, topic map[string]string, broker BrokerConfigs) (string, bool) {
	d, ok := byName[name]
	if !ok {
		return "", false
	}
	if v, ok := topic[name]; ok {
		return v, true
	}
	for _, s := range broker.Synonyms(d.synonymNames()...) {
		if c, ok := convert(d.synonym(s.Name), s.Value); ok {
			return c, true
		}
	}
	return d.Default, true
}
