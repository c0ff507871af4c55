package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ClusterElectLeaders runs a leader election (kafka-leader-election.sh):
// preferred, moving each partition's leadership to its first replica, or
// unclean, electing a leader for a partition that has none, from outside
// the ISR if need be. topics are "T" (every partition of T) or
// "T:0,1,..."; none means every partition of every topic, and then only
// the partitions that needed an election are printed. A partition whose
// leader is already the one asked for is no failure
// (ELECTION_NOT_NEEDED).
func ClusterElectLeaders(ctx context.Context, env *Env, unclean bool, topics []string) error {
	specs, err := parseTopicSpecs(topics)
	if err != nil {
		return err
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	var set kadm.TopicsSet
	if len(specs) > 0 {
		ends, err := adm.ListEndOffsets(ctx, specs.names()...)
		if err != nil {
			return deadline(ctx, "list partitions", err)
		}
		if set, err = specs.resolve(ends, "elect leaders"); err != nil {
			return err
		}
	}
	how := kadm.ElectPreferredReplica
	if unclean {
		how = kadm.ElectLiveReplica
	}
	resps, err := adm.ElectLeaders(ctx, how, set)
	if err != nil {
		return deadline(ctx, "elect leaders", err)
	}
	var errs []error
	var results []partitionResult
	for _, name := range sortedKeys(resps) {
		for _, p := range sortedPartitions(resps[name]) {
			r := resps[name][p]
			res := partitionResult{Topic: name, Partition: p}
			if r.Err != nil {
				res.Error = oneLine(kafkaErr(r.Err, r.ErrMessage).Error())
				if !errors.Is(r.Err, kerr.ElectionNotNeeded) {
					errs = append(errs, fmt.Errorf("elect a leader for %s partition %d: %w", name, p, kafkaErr(r.Err, r.ErrMessage)))
				}
			}
			results = append(results, res)
		}
	}
	return printPartitionResults(env, results, "Elected", errs)
}

func sortedPartitions[V any](m map[int32]V) []int32 {
	ps := make([]int32, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// printPartitionResults prints one line per partition (ok, or the Kafka
// error's name) or the JSON list, and returns errs joined.
func printPartitionResults(env *Env, results []partitionResult, ok string, errs []error) error {
	if results == nil {
		results = []partitionResult{}
	}
	if env.Format == JSON {
		if err := writeJSON(env.Out, results); err != nil {
			return err
		}
		return errors.Join(errs...)
	}
	t := newTable(env.Out, "TOPIC", "PARTITION", "RESULT")
	for _, r := range results {
		status := ok
		if r.Error != "" {
			status, _, _ = strings.Cut(r.Error, ":")
		}
		t.row(r.Topic, r.Partition, status)
	}
	if err := t.flush(); err != nil {
		return err
	}
	return errors.Join(errs...)
}
