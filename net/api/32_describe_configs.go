package api

// DescribeConfigs: v0-v4 (v4 flexible). v0 (removed from Kafka 4.0 by
// KIP-896) answers as Kafka 3.9 did: no synonyms, and IsDefault (true
// when the value is Kafka's default) in place of the config source. Synonyms on request (v1+, KIP-226),
// documentation and config types (v3+, KIP-569); ConfigNames filters,
// unknown names are left out; sensitive values are null.
//
// TOPIC resources list every topic config with its value and source
// (topicconfig.Describe): the topic's own value (DYNAMIC_TOPIC_CONFIG),
// else a broker synonym's (dynamic per broker, dynamic cluster default,
// static), else Kafka's default. An invalid name is INVALID_TOPIC_EXCEPTION,
// a missing topic UNKNOWN_TOPIC_OR_PARTITION.
//
// BROKER resources: this broker's id lists every broker config: the keys
// of server.properties and --override (STATIC_BROKER_CONFIG), the dynamic
// broker configs, the broker configs standing in for topic configs and
// the broker configs kzero knows (topicconfig.BrokerConfigs.Keys), with
// their defaults when unset.
// The empty name lists the cluster-wide dynamic defaults only, as Kafka
// does. Another broker id is INVALID_REQUEST. Synonyms of topic configs
// and the broker configs kzero applies at runtime (BrokerKey.Dynamic) are
// not read-only.
// A GROUP resource lists the group configs (coord.GroupConfigs), set ones
// with source GROUP_CONFIG, the others at the value (and source) of the
// broker's group.* config they override, else at their defaults.
//
// A resource type Kafka does not know fails the whole request with
// INVALID_REQUEST (Kafka throws while authorizing); BROKER_LOGGER and
// CLIENT_METRICS, which kzero has no configs for, fail their resource
// alone.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/coord/metadata"
	"kzero/coord/topicconfig"
	"kzero/net/server"
)

func init() { register(kmsg.DescribeConfigs.Int16(), 0, 4, (*Handler).describeConfigs).since4(1) }

func (h *Handler) describeConfigs(req *server.Request) error {
	r := kmsg.NewPtrDescribeConfigsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDescribeConfigsResponse()
	for _, res := range r.Resources {
		if !knownResourceType(res.ResourceType) {
			for _, res := range r.Resources {
				rr := kmsg.NewDescribeConfigsResponseResource()
				rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
				rr.ErrorCode = kerr.InvalidRequest.Code
				msg := kerr.InvalidRequest.Description
				rr.ErrorMessage = &msg
				resp.Resources = append(resp.Resources, rr)
			}
			respond(req, resp)
			return nil
		}
	}
	img := h.cluster.Image()
	broker := h.cluster.BrokerConfigs()
	for _, res := range r.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		var configs []describedConfig
		var fail coord.Result
		if denied := h.configDenied(req, int8(res.ResourceType), res.ResourceName, opDescribeCfg); denied != nil {
			fail = coord.Result{Err: denied, Message: denied.Description}
		}
		switch {
		case fail.Err != nil:
		case res.ResourceType == kmsg.ConfigResourceTypeTopic:
			configs, fail = describeTopicConfigs(img, broker, res.ResourceName)
		case res.ResourceType == kmsg.ConfigResourceTypeBroker:
			configs, fail = h.describeBrokerConfigs(broker, res.ResourceName)
		case res.ResourceType == kmsg.ConfigResourceTypeGroupConfig:
			configs = describeGroupConfigs(img, broker, res.ResourceName)
		default:
			fail = coord.Result{Err: kerr.InvalidRequest, Message: fmt.Sprintf("Unsupported resource type: %d", res.ResourceType)}
		}
		if fail.Err != nil {
			rr.ErrorCode = errCode(fail.Err)
			if fail.Message != "" {
				msg := fail.Message
				rr.ErrorMessage = &msg
			}
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		for _, c := range configs {
			if len(res.ConfigNames) > 0 && !slices.Contains(res.ConfigNames, c.Name) {
				continue
			}
			rr.Configs = append(rr.Configs, c.encode(r.IncludeSynonyms, r.IncludeDocumentation))
		}
		resp.Resources = append(resp.Resources, rr)
	}
	respond(req, resp)
	return nil
}

// knownResourceType reports whether Kafka 4.1 knows a config resource
// type (ConfigResource.Type): TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS,
// GROUP.
func knownResourceType(t kmsg.ConfigResourceType) bool {
	switch t {
	case kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger,
		kmsg.ConfigResourceTypeClientMetrics, kmsg.ConfigResourceTypeGroupConfig:
		return true
	}
	return false
}

// describedConfig is one config of a DescribeConfigs answer; null marks a
// config without any value (a broker config with no default, unset), which
// Kafka answers with a null value.
type describedConfig struct {
	topicconfig.Entry
	null bool
}

func (c *describedConfig) encode(synonyms, docs bool) kmsg.DescribeConfigsResponseResourceConfig {
	rc := kmsg.NewDescribeConfigsResponseResourceConfig()
	rc.Name, rc.ReadOnly, rc.IsDefault, rc.Source = c.Name, c.ReadOnly, c.IsDefault(), c.Source
	rc.IsSensitive, rc.ConfigType = c.Sensitive, c.Type
	if !c.Sensitive && !c.null {
		v := c.Value
		rc.Value = &v
	}
	if docs && c.Doc != "" {
		d := c.Doc
		rc.Documentation = &d
	}
	if synonyms {
		for _, s := range c.Synonyms {
			rs := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			rs.Name, rs.Source = s.Name, s.Source
			if !c.Sensitive {
				v := s.Value
				rs.Value = &v
			}
			rc.ConfigSynonyms = append(rc.ConfigSynonyms, rs)
		}
	}
	return rc
}

func describeTopicConfigs(img *metadata.Image, broker topicconfig.BrokerConfigs, name string) ([]describedConfig, coord.Result) {
	if err := metadata.ValidateTopicName(name); err != nil {
		return nil, coord.Result{Err: kerr.InvalidTopicException, Message: err.Error()}
	}
	t := img.Topic(name)
	if t == nil {
		return nil, coord.Result{Err: kerr.UnknownTopicOrPartition}
	}
	entries := topicconfig.Describe(t.Configs, broker)
	out := make([]describedConfig, len(entries))
	for i, e := range entries {
		out[i] = describedConfig{Entry: e}
	}
	return out, coord.Result{}
}

// describeBrokerConfigs answers a BROKER resource: "" for the cluster-wide
// dynamic defaults, else this broker's id.
func (h *Handler) describeBrokerConfigs(broker topicconfig.BrokerConfigs, name string) ([]describedConfig, coord.Result) {
	if name == "" {
		var out []describedConfig
		for _, k := range slices.Sorted(maps.Keys(broker.ClusterDefault)) {
			out = append(out, brokerConfig(k, broker, false))
		}
		return out, coord.Result{}
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return nil, coord.Result{Err: kerr.InvalidRequest, Message: "Broker id must be an integer, but it is: " + name}
	}
	if int32(id) != h.cfg.NodeID {
		return nil, coord.Result{Err: kerr.InvalidRequest, Message: fmt.Sprintf("Unexpected broker id, expected %d or empty string, but received %s", h.cfg.NodeID, name)}
	}
	names := map[string]bool{}
	for _, m := range []map[string]string{broker.Static, broker.ClusterDefault, broker.Dynamic} {
		for k := range m {
			names[k] = true
		}
	}
	for _, d := range topicconfig.Defs() {
		for _, s := range d.Synonyms {
			names[s.Name] = true
		}
	}
	for k := range broker.Keys {
		names[k] = true
	}
	out := make([]describedConfig, 0, len(names))
	for _, k := range slices.Sorted(maps.Keys(names)) {
		out = append(out, brokerConfig(k, broker, true))
	}
	return out, coord.Result{}
}

// brokerConfig describes one broker config as Kafka's ConfigHelper does:
// its synonyms are the values of it and of the configs it is an
// alternative to (log.retention.ms, .minutes, .hours), layer by layer
// (dynamic per broker, dynamic cluster default, static, default), from
// the first one of its own name on. Its value is its own, not a synonym's.
// For the cluster-default resource (perBroker false) only dynamic
// cluster-default synonyms count.
func brokerConfig(name string, broker topicconfig.BrokerConfigs, perBroker bool) describedConfig {
	def, syn, isSynonym := topicconfig.BrokerSynonym(name)
	key, isKey := broker.Keys[name]
	c := describedConfig{Entry: topicconfig.Entry{Name: name, Type: kmsg.ConfigTypeString, ReadOnly: !isSynonym && !key.Dynamic}}
	if isKey && !isSynonym {
		c.Type = key.Type
	}
	names := []string{name}
	if isSynonym {
		c.Type = syn.Type
		c.Doc = fmt.Sprintf("The broker-wide value of the topic config %s. %s", def.Name, def.Doc)
		// log.flush.scheduler.interval.ms is the default of
		// log.flush.interval.ms, not an alternative to it: Kafka lists it
		// alone.
		if name != "log.flush.scheduler.interval.ms" {
			names = names[:0]
			for _, s := range def.Synonyms {
				names = append(names, s.Name)
			}
		}
	}
	c.Sensitive = !isSynonym && sensitiveBrokerConfig(name)
	var all []topicconfig.SynonymValue
	for _, s := range broker.Synonyms(names...) {
		if perBroker || s.Source == kmsg.ConfigSourceDynamicDefaultBrokerConfig {
			all = append(all, s)
		}
	}
	if perBroker {
		for _, n := range names {
			if _, s, ok := topicconfig.BrokerSynonym(n); ok && s.HasDefault {
				all = append(all, topicconfig.SynonymValue{Name: n, Value: s.Default, Source: kmsg.ConfigSourceDefaultConfig})
			}
		}
		// An empty default is none (null), as Kafka's for advertised.listeners.
		if isKey && !isSynonym && key.Default != "" {
			all = append(all, topicconfig.SynonymValue{Name: name, Value: key.Default, Source: kmsg.ConfigSourceDefaultConfig})
		}
	}
	for len(all) > 0 && all[0].Name != name {
		all = all[1:]
	}
	c.Synonyms = all
	c.Source = kmsg.ConfigSourceDefaultConfig
	if len(all) == 0 {
		c.null = true
		return c
	}
	c.Value, c.Source = all[0].Value, all[0].Source
	return c
}

// sensitiveBrokerConfig guesses whether a broker config Kafka types as
// PASSWORD (whose values it never returns): kzero has no such config, but
// server.properties may still carry one, kept as given.
func sensitiveBrokerConfig(name string) bool {
	// Kafka's PASSWORD configs: passwords, secrets, JAAS configs, keys
	// (ssl.keystore.key, delegation.token.master.key).
	return strings.Contains(name, "password") || strings.Contains(name, "secret") || strings.HasSuffix(name, "jaas.config") ||
		strings.HasSuffix(name, ".key")
}

// describeGroupConfigs lists a group's configs as Kafka 4.3 describes a
// GROUP resource: a key's value is the group's own (source GROUP_CONFIG),
// else that of the broker config it overrides (coord.GroupConfig.
// BrokerKey: consumer.session.timeout.ms takes group.consumer.session.
// timeout.ms) from this broker's dynamic configs, the cluster's dynamic
// defaults or the static ones, with that source, else the default
// (DEFAULT_CONFIG). The synonyms list every place with a value, highest
// first: the group key, then the broker key at each level, ending with
// the default (under the group key when no broker config backs it).
func describeGroupConfigs(img *metadata.Image, broker topicconfig.BrokerConfigs, group string) []describedConfig {
	set := img.GroupConfigs(group)
	out := make([]describedConfig, 0, len(coord.GroupConfigs))
	for _, c := range coord.GroupConfigs {
		var syn []topicconfig.SynonymValue
		if v, ok := set[c.Key]; ok {
			syn = append(syn, topicconfig.SynonymValue{Name: c.Key, Value: v, Source: kmsg.ConfigSourceGroupConfig})
		}
		name := c.Key
		if bk := c.BrokerKey(); bk != "" {
			name = bk
			syn = append(syn, broker.Synonyms(bk)...)
		}
		syn = append(syn, topicconfig.SynonymValue{Name: name, Value: c.Default, Source: kmsg.ConfigSourceDefaultConfig})
		e := topicconfig.Entry{Name: c.Key, Value: syn[0].Value, Source: syn[0].Source, Type: c.Type, Synonyms: syn}
		out = append(out, describedConfig{Entry: e})
	}
	return out
}
