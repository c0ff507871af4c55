package tools

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TopicSpec is a topic to create. Partitions and ReplicationFactor -1 take
// the broker's defaults (num.partitions, default.replication.factor).
type TopicSpec struct {
	Names             []string
	Partitions        int32
	ReplicationFactor int16
	Configs           map[string]string
}

// topicResult is the JSON output of the commands that change topics.
type topicResult struct {
	Topic string `json:"topic"`
	ID    string `json:"topic_id,omitempty"`
	Error string `json:"error,omitempty"`
}

// TopicCreate creates the topics of spec.
func TopicCreate(ctx context.Context, env *Env, spec TopicSpec) error {
	if len(spec.Names) == 0 {
		return usagef("topic create: no topic name")
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	configs := make(map[string]*string, len(spec.Configs))
	for k, v := range spec.Configs {
		configs[k] = &v
	}
	resps, err := adm.CreateTopics(ctx, spec.Partitions, spec.ReplicationFactor, configs, spec.Names...)
	if err != nil {
		return deadline(ctx, "create topics", err)
	}
	return reportTopics(env, spec.Names, "Created", func(name string) (string, error) {
		r, ok := resps[name]
		if !ok {
			return "", fmt.Errorf("create topic %s: no answer from the broker", name)
		}
		if r.Err != nil {
			return "", fmt.Errorf("create topic %s: %w", name, kafkaErr(r.Err, r.ErrMessage))
		}
		return topicID(r.ID), nil
	})
}

// TopicDelete deletes the named topics.
func TopicDelete(ctx context.Context, env *Env, names []string) error {
	if len(names) == 0 {
		return usagef("topic delete: no topic name")
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	resps, err := adm.DeleteTopics(ctx, names...)
	if err != nil {
		return deadline(ctx, "delete topics", err)
	}
	return reportTopics(env, names, "Deleted", func(name string) (string, error) {
		r, ok := resps[name]
		if !ok {
			return "", fmt.Errorf("delete topic %s: no answer from the broker", name)
		}
		if r.Err != nil {
			return "", fmt.Errorf("delete topic %s: %w", name, kafkaErr(r.Err, r.ErrMessage))
		}
		return topicID(r.ID), nil
	})
}

// TopicAlterConfig sets and deletes (resets to the default) configs of the
// named topics with IncrementalAlterConfigs.
func TopicAlterConfig(ctx context.Context, env *Env, names []string, set map[string]string, del []string) error {
	if len(names) == 0 {
		return usagef("topic alter-config: no topic name")
	}
	if len(set) == 0 && len(del) == 0 {
		return usagef("topic alter-config: nothing to change (--set key=value, --delete key)")
	}
	var alters []kadm.AlterConfig
	for _, k := range sortedKeys(set) {
		v := set[k]
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v})
	}
	for _, k := range del {
		if _, ok := set[k]; ok {
			return usagef("topic alter-config: %s both set and deleted", k)
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	resps, err := adm.AlterTopicConfigs(ctx, alters, names...)
	if err != nil {
		return deadline(ctx, "alter topic configs", err)
	}
	return reportTopics(env, names, "Altered configs of", func(name string) (string, error) {
		r, err := resps.On(name, nil)
		if err != nil {
			return "", fmt.Errorf("alter configs of topic %s: no answer from the broker", name)
		}
		if r.Err != nil {
			return "", fmt.Errorf("alter configs of topic %s: %w", name, kafkaErr(r.Err, r.ErrMessage))
		}
		return "", nil
	})
}

// TopicAddPartitions grows the named topics: by add partitions, or to total
// partitions; exactly one of the two is above zero.
func TopicAddPartitions(ctx context.Context, env *Env, names []string, add, total int) error {
	if len(names) == 0 {
		return usagef("topic add-partitions: no topic name")
	}
	if (add > 0) == (total > 0) {
		return usagef("topic add-partitions: give one of --num (partitions to add) and --total (new partition count)")
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	var resps kadm.CreatePartitionsResponses
	if add > 0 {
		resps, err = adm.CreatePartitions(ctx, add, names...)
	} else {
		resps, err = adm.UpdatePartitions(ctx, total, names...)
	}
	if err != nil {
		return deadline(ctx, "create partitions", err)
	}
	return reportTopics(env, names, "Added partitions to", func(name string) (string, error) {
		r, ok := resps[name]
		if !ok {
			return "", fmt.Errorf("add partitions to topic %s: no answer from the broker", name)
		}
		if r.Err != nil {
			return "", fmt.Errorf("add partitions to topic %s: %w", name, kafkaErr(r.Err, r.ErrMessage))
		}
		return "", nil
	})
}

// reportTopics prints the outcome of a change to each topic, in the order
// given, and returns the failures joined.
func reportTopics(env *Env, names []string, verb string, outcome func(string) (id string, err error)) error {
	var errs []error
	var results []topicResult
	for _, name := range names {
		id, err := outcome(name)
		res := topicResult{Topic: name, ID: id}
		if err != nil {
			errs = append(errs, err)
			res.Error = oneLine(err.Error())
		} else if env.Format == Text {
			fmt.Fprintf(env.Out, "%s topic %s.\n", verb, name)
		}
		results = append(results, res)
	}
	if env.Format == JSON {
		if err := writeJSON(env.Out, results); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// topicListing is one topic in `topic list -o json`.
type topicListing struct {
	Name              string `json:"name"`
	ID                string `json:"topic_id"`
	Internal          bool   `json:"internal"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
}

// TopicList lists the cluster's topics, with the internal ones when
// internal is set.
func TopicList(ctx context.Context, env *Env, internal bool) error {
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	var details kadm.TopicDetails
	if internal {
		details, err = adm.ListTopicsWithInternal(ctx)
	} else {
		details, err = adm.ListTopics(ctx)
	}
	if err != nil {
		return deadline(ctx, "list topics", err)
	}
	var list []topicListing
	var errs []error
	for _, name := range details.Names() {
		d := details[name]
		if d.Err != nil {
			errs = append(errs, fmt.Errorf("topic %s: %w", name, d.Err))
			continue
		}
		list = append(list, topicListing{
			Name: name, ID: topicID(d.ID), Internal: d.IsInternal,
			Partitions: len(d.Partitions), ReplicationFactor: replicationFactor(d),
		})
	}
	if env.Format == JSON {
		if list == nil {
			list = []topicListing{}
		}
		if err := writeJSON(env.Out, list); err != nil {
			return err
		}
		return errors.Join(errs...)
	}
	t := newTable(env.Out, "NAME", "PARTITIONS", "REPLICAS")
	for _, l := range list {
		t.row(l.Name, l.Partitions, l.ReplicationFactor)
	}
	if err := t.flush(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// topicDescription is one topic in `topic describe -o json`.
type topicDescription struct {
	Name              string                 `json:"name"`
	ID                string                 `json:"topic_id"`
	Internal          bool                   `json:"internal"`
	ReplicationFactor int                    `json:"replication_factor"`
	Configs           map[string]*string     `json:"configs"`
	Partitions        []partitionDescription `json:"partitions"`
}

type partitionDescription struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offline_replicas"`
	Error           string  `json:"error,omitempty"`
}

// TopicDescribe prints each named topic (every topic when names is empty):
// its id, the configs set on the topic itself (as kafka-topics --describe
// shows them) and its partitions with leader, epoch, replicas and ISR.
func TopicDescribe(ctx context.Context, env *Env, names []string) error {
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	details, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return deadline(ctx, "describe topics", err)
	}
	if len(names) == 0 {
		names = details.Names()
	}
	var errs []error
	var found []string
	for _, name := range names {
		d, ok := details[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("describe topic %s: not in the metadata", name))
		case d.Err != nil:
			errs = append(errs, fmt.Errorf("describe topic %s: %w", name, d.Err))
		default:
			found = append(found, name)
		}
	}
	configs := map[string]map[string]*string{}
	if len(found) > 0 {
		rcs, err := adm.DescribeTopicConfigs(ctx, found...)
		if err != nil {
			return deadline(ctx, "describe topic configs", err)
		}
		for _, rc := range rcs {
			if rc.Err != nil {
				errs = append(errs, fmt.Errorf("describe configs of topic %s: %w", rc.Name, kafkaErr(rc.Err, rc.ErrMessage)))
				continue
			}
			m := map[string]*string{}
			for _, c := range rc.Configs {
				if c.Source == kmsg.ConfigSourceDynamicTopicConfig {
					m[c.Key] = c.Value
				}
			}
			configs[rc.Name] = m
		}
	}
	var out []topicDescription
	for _, name := range found {
		d := details[name]
		td := topicDescription{
			Name: name, ID: topicID(d.ID), Internal: d.IsInternal,
			ReplicationFactor: replicationFactor(d), Configs: configs[name],
		}
		if td.Configs == nil {
			td.Configs = map[string]*string{}
		}
		for _, p := range d.Partitions.Sorted() {
			pd := partitionDescription{
				Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
				Replicas: nonNil(p.Replicas), ISR: nonNil(p.ISR), OfflineReplicas: nonNil(p.OfflineReplicas),
			}
			if p.Err != nil {
				pd.Error = p.Err.Error()
			}
			td.Partitions = append(td.Partitions, pd)
		}
		out = append(out, td)
	}
	if env.Format == JSON {
		if out == nil {
			out = []topicDescription{}
		}
		if err := writeJSON(env.Out, out); err != nil {
			return err
		}
		return errors.Join(errs...)
	}
	for i, td := range out {
		if i > 0 {
			fmt.Fprintln(env.Out)
		}
		if err := printTopic(env, td); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

func printTopic(env *Env, td topicDescription) error {
	var cfg []string
	for _, k := range sortedKeys(td.Configs) {
		v := "(sensitive)"
		if p := td.Configs[k]; p != nil {
			v = *p
		}
		cfg = append(cfg, k+"="+v)
	}
	head := newTable(env.Out)
	head.row("NAME", td.Name)
	head.row("ID", td.ID)
	head.row("PARTITIONS", len(td.Partitions))
	head.row("REPLICAS", td.ReplicationFactor)
	if td.Internal {
		head.row("INTERNAL", "true")
	}
	head.row("CONFIGS", strings.Join(cfg, ","))
	if err := head.flush(); err != nil {
		return err
	}
	fmt.Fprintln(env.Out)
	t := newTable(env.Out, "PARTITION", "LEADER", "EPOCH", "REPLICAS", "ISR", "OFFLINE")
	for _, p := range td.Partitions {
		off := int32List(p.OfflineReplicas)
		if p.Error != "" {
			off += " " + p.Error
		}
		t.row(p.Partition, p.Leader, p.LeaderEpoch, int32List(p.Replicas), int32List(p.ISR), off)
	}
	return t.flush()
}

func replicationFactor(d kadm.TopicDetail) int {
	for _, p := range d.Partitions {
		return len(p.Replicas)
	}
	return 0
}

func topicID(id kadm.TopicID) string {
	if id == (kadm.TopicID{}) {
		return ""
	}
	// Kafka prints a Uuid as URL-safe base64 without padding.
	return base64.RawURLEncoding.EncodeToString(id[:])
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return slices.Clone(s)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
