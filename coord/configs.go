package coord

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/control"
	"kzero/coord/metadata"
	"kzero/coord/topicconfig"
)

// ConfigOp is an IncrementalAlterConfigs operation; the values are Kafka's.
type ConfigOp int8

// Config operations.
const (
	OpSet      ConfigOp = 0 // set the value
	OpDelete   ConfigOp = 1 // remove the override
	OpAppend   ConfigOp = 2 // add to a LIST config's items
	OpSubtract ConfigOp = 3 // remove from a LIST config's items
)

// ConfigChange is one config change of a resource.
type ConfigChange struct {
	Key   string
	Op    ConfigOp
	Value string
}

// ConfigAlter changes one resource's configs: a topic
// (metadata.ResourceTopic, Name the topic) or a broker
// (metadata.ResourceBroker, Name a broker id or "" for the cluster-wide
// default). With Replace the changes are the resource's
// whole new config, as the legacy AlterConfigs API sends it: keys not set
// by a change are removed.
type ConfigAlter struct {
	ResourceType int8
	Name         string
	Changes      []ConfigChange
	Replace      bool
}

// AlterConfigs applies config changes, one Result per ConfigAlter. The
// changes of one resource apply all or none, as Kafka's do; resources
// succeed or fail alone. Errors: UNKNOWN_TOPIC_OR_PARTITION for a missing
// topic, INVALID_CONFIG for an unknown topic config or an invalid value,
// INVALID_REQUEST for a bad resource, a repeated resource or key, an unknown
// op, or a broker config that cannot change dynamically.
func (c *Controller) AlterConfigs(ctx context.Context, alters []ConfigAlter, validateOnly bool) []Result {
	img := c.Image()
	results := make([]Result, len(alters))
	type res struct {
		typ  int8
		name string
	}
	seen := map[res]int{}
	for _, a := range alters {
		seen[res{a.ResourceType, a.Name}]++
	}
	var groups [][]metadata.Record
	var owners []int
	for i, a := range alters {
		if seen[res{a.ResourceType, a.Name}] > 1 {
			results[i] = Result{kerr.InvalidRequest, "Duplicate resource in request."}
			continue
		}
		var recs []metadata.Record
		var rej error
		switch a.ResourceType {
		case metadata.ResourceTopic:
			recs, rej = planTopicConfigs(img, a)
		case metadata.ResourceBroker:
			recs, rej = c.planBrokerConfigs(img, a)
		case metadata.ResourceGroup:
			recs, rej = planGroupConfigs(img, a, c.cfg.ValidateGroupConfigs)
		default:
			rej = metadata.Reject(kerr.InvalidRequest, "Unsupported resource type %d.", a.ResourceType)
		}
		if rej != nil {
			results[i].set(rej)
			continue
		}
		recs = append(recs, clearELR(img, recs)...)
		if !validateOnly && len(recs) > 0 {
			groups = append(groups, recs)
			owners = append(owners, i)
		}
	}
	if len(groups) == 0 {
		return results
	}
	out, err := c.propose(ctx, groups)
	for gi, i := range owners {
		if err != nil {
			results[i] = Result{codeFor(err), err.Error()}
			continue
		}
		results[i].set(out[gi])
	}
	return results
}

// applyChanges computes a resource's new configs from its current ones.
// listDefault gives the value APPEND and SUBTRACT start from when the key
// is not set; isList says whether a key is a LIST config.
func applyChanges(cur map[string]string, a ConfigAlter, isList func(string) bool, listDefault func(string) string) (map[string]string, error) {
	next := maps.Clone(cur)
	if next == nil || a.Replace {
		next = map[string]string{}
	}
	keys := map[string]bool{}
	for _, ch := range a.Changes {
		if keys[ch.Key] {
			return nil, metadata.Reject(kerr.InvalidRequest, "Error due to duplicate config keys: %s", ch.Key)
		}
		keys[ch.Key] = true
		switch ch.Op {
		case OpSet:
			next[ch.Key] = ch.Value
		case OpDelete:
			delete(next, ch.Key)
		case OpAppend, OpSubtract:
			if !isList(ch.Key) {
				return nil, metadata.Reject(kerr.InvalidConfig, "Config value append is not allowed for config key %s because its type is not LIST.", ch.Key)
			}
			base, ok := next[ch.Key]
			if !ok {
				base = listDefault(ch.Key)
			}
			items := splitItems(base)
			for _, v := range splitItems(ch.Value) {
				has := slices.Contains(items, v)
				if ch.Op == OpAppend && !has {
					items = append(items, v)
				}
				if ch.Op == OpSubtract && has {
					items = slices.DeleteFunc(items, func(s string) bool { return s == v })
				}
			}
			next[ch.Key] = strings.Join(items, ",")
		default:
			return nil, metadata.Reject(kerr.InvalidRequest, "Unknown config operation %d.", ch.Op)
		}
	}
	return next, nil
}

func splitItems(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func planTopicConfigs(img *metadata.Image, a ConfigAlter) ([]metadata.Record, error) {
	t := img.Topic(a.Name)
	if t == nil {
		return nil, metadata.Reject(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", a.Name)
	}
	for _, ch := range a.Changes {
		if _, ok := topicconfig.Lookup(ch.Key); !ok && ch.Op != OpDelete {
			return nil, metadata.Reject(kerr.InvalidConfig, "Unknown topic config name: %s", ch.Key)
		}
	}
	isList := func(k string) bool {
		d, ok := topicconfig.Lookup(k)
		return ok && d.Type == kmsg.ConfigTypeList
	}
	def := func(k string) string {
		d, _ := topicconfig.Lookup(k)
		return d.Default
	}
	next, rej := applyChanges(t.Configs, a, isList, def)
	if rej != nil {
		return nil, rej
	}
	if err := topicconfig.ValidateAll(next); err != nil {
		return nil, metadata.Reject(kerr.InvalidConfig, "%v", err)
	}
	return configDiff(metadata.ResourceTopic, a.Name, t.Configs, next), nil
}

func (c *Controller) planBrokerConfigs(img *metadata.Image, a ConfigAlter) ([]metadata.Record, error) {
	if !metadata.ValidBrokerResource(a.Name) {
		return nil, metadata.Reject(kerr.InvalidRequest, "Invalid broker resource name %q: a broker id or empty.", a.Name)
	}
	isList := func(k string) bool {
		_, s, ok := topicconfig.BrokerSynonym(k)
		return ok && s.Type == kmsg.ConfigTypeList
	}
	def := func(k string) string {
		_, s, _ := topicconfig.BrokerSynonym(k)
		return s.Default
	}
	cur := img.BrokerConfigs(a.Name)
	next, rej := applyChanges(cur, a, isList, def)
	if rej != nil {
		return nil, rej
	}
	var refused []string
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if old, ok := cur[k]; ok && old == next[k] {
			continue // unchanged: already accepted
		}
		known, err := topicconfig.ValidateBroker(k, next[k])
		if known && err != nil {
			return nil, metadata.Reject(kerr.InvalidConfig, "%v", err)
		}
		if !known {
			if c.cfg.ValidateBrokerConfig == nil {
				refused = append(refused, k)
				continue
			}
			if err := c.cfg.ValidateBrokerConfig(k, next[k]); err != nil {
				return nil, metadata.Reject(kerr.InvalidRequest, "%v", err)
			}
		}
	}
	if len(refused) > 0 {
		return nil, metadata.Reject(kerr.InvalidRequest, "Cannot update these configs dynamically: %s", fmt.Sprint(refused))
	}
	return configDiff(metadata.ResourceBroker, a.Name, cur, next), nil
}

// clearELR returns the changes that empty the eligible leader replicas
// (and last known leaders) of the partitions whose min.insync.replicas
// recs change, as Kafka's ClearElrRecord does: an ELR is only sound for
// the min.insync.replicas the HW moved under (a lower one lets the HW
// move without its members). A topic's own value changes its partitions;
// the cluster-wide default changes every topic's.
func clearELR(img *metadata.Image, recs []metadata.Record) []metadata.Record {
	var topics []*metadata.Topic
	for _, r := range recs {
		c, ok := r.(*metadata.ConfigRecord)
		if !ok || c.Key != control.MinInsyncConfig {
			continue
		}
		switch {
		case c.ResourceType == metadata.ResourceTopic:
			if t := img.Topic(c.Name); t != nil {
				topics = append(topics, t)
			}
		case c.ResourceType == metadata.ResourceBroker && c.Name == "":
			topics = img.Topics()
		}
	}
	var out []metadata.Record
	for _, t := range topics {
		for _, p := range t.Partitions {
			if len(p.ELR) == 0 && len(p.LastKnownELR) == 0 {
				continue
			}
			out = append(out, &metadata.PartitionChange{TopicID: t.ID, Partition: p.Partition, PartitionEpoch: p.PartitionEpoch + 1,
				Leader: metadata.NoLeaderChange, LeaderRecovery: metadata.RecoveryNoChange, SetELR: true, SetLastKnownELR: true})
		}
	}
	return out
}

// configDiff returns the records that turn configs cur into next.
func configDiff(typ int8, name string, cur, next map[string]string) []metadata.Record {
	var recs []metadata.Record
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if old, ok := cur[k]; !ok || old != next[k] {
			recs = append(recs, &metadata.ConfigRecord{ResourceType: typ, Name: name, Key: k, Value: next[k]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cur)) {
		if _, ok := next[k]; !ok {
			recs = append(recs, &metadata.ConfigRecord{ResourceType: typ, Name: name, Key: k, Delete: true})
		}
	}
	return recs
}
