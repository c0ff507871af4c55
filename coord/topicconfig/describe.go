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
	for _, layer := range []struct {
		m   map[string]string
		src kmsg.ConfigSource
	}{
		{broker.Dynamic, kmsg.ConfigSourceDynamicBrokerConfig},
		{broker.ClusterDefault, kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{broker.Static, kmsg.ConfigSourceStaticBrokerConfig},
	} {
		for _, s := range d.Synonyms {
			if v, ok := layer.m[s.Name]; ok {
				e.Synonyms = append(e.Synonyms, SynonymValue{s.Name, v, layer.src})
			}
		}
	}
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
			for _, s := range d.Synonyms {
				if s.Name == first.Name {
					if v, ok := convert(s, first.Value); ok {
						e.Value = v
					}
				}
			}
		}
	}
	return e
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
	for _, layer := range []map[string]string{broker.Dynamic, broker.ClusterDefault, broker.Static} {
		for _, s := range d.Synonyms {
			if v, ok := layer[s.Name]; ok {
				if c, ok := convert(s, v); ok {
					return c, true
				}
			}
		}
	}
	return d.Default, true
}
