package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
)

// logDirReplica is one line of `cluster log-dirs -o json`.
type logDirReplica struct {
	Broker    int32  `json:"broker"`
	Dir       string `json:"dir"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Size      int64  `json:"size"`
	OffsetLag int64  `json:"offset_lag"`
	IsFuture  bool   `json:"is_future"`
}

// ClusterLogDirs prints every broker's log dirs with the replicas in them
// (kafka-log-dirs.sh --describe): size, and for a replica moving to
// another dir (cluster move-replica-dir) its future copy there, with how
// many offsets it is behind. topics ("T" or "T:0,1,...") narrow the
// listing; none lists every replica.
func ClusterLogDirs(ctx context.Context, env *Env, topics []string) error {
	specs, err := parseTopicSpecs(topics)
	if err != nil {
		return err
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	var set kadm.TopicsSet // nil: every partition
	if len(specs) > 0 {
		set = kadm.TopicsSet{}
		for name, ps := range specs {
			if ps == nil {
				md, err := adm.Metadata(ctx, name)
				if err != nil {
					return deadline(ctx, "describe log dirs", err)
				}
				for _, p := range md.Topics[name].Partitions {
					ps = append(ps, p.Partition)
				}
			}
			set.Add(name, ps...)
		}
	}
	all, err := adm.DescribeAllLogDirs(ctx, set)
	if err != nil {
		return deadline(ctx, "describe log dirs", err)
	}
	out := []logDirReplica{}
	var errs []error
	for _, d := range all.Sorted() {
		if d.Err != nil {
			errs = append(errs, fmt.Errorf("broker %d log dir %s: %w", d.Broker, d.Dir, d.Err))
			continue
		}
		for _, p := range d.Topics.Sorted() {
			out = append(out, logDirReplica{Broker: d.Broker, Dir: d.Dir, Topic: p.Topic, Partition: p.Partition,
				Size: p.Size, OffsetLag: p.OffsetLag, IsFuture: p.IsFuture})
		}
	}
	if env.Format == JSON {
		if err := writeJSON(env.Out, out); err != nil {
			return err
		}
		return errors.Join(errs...)
	}
	t := newTable(env.Out, "BROKER", "DIR", "TOPIC", "PARTITION", "SIZE", "OFFSET-LAG", "FUTURE")
	for _, r := range out {
		t.row(r.Broker, r.Dir, r.Topic, r.Partition, r.Size, r.OffsetLag, r.IsFuture)
	}
	if err := t.flush(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// ClusterMoveReplicaDir moves broker's replicas of the partitions named
// (each "TOPIC:PARTITION,...") to its log dir dir (AlterReplicaLogDirs,
// as kafka-reassign-partitions.sh does with "log_dirs"). The broker
// copies each replica in the background; cluster log-dirs shows the copy
// as FUTURE until it has been swapped in.
func ClusterMoveReplicaDir(ctx context.Context, env *Env, broker, dir string, partitions []string) error {
	id, err := strconv.ParseInt(broker, 10, 32)
	if err != nil || id < 0 {
		return usagef("cluster move-replica-dir: %q is not a broker id", broker)
	}
	if dir == "" || len(partitions) == 0 {
		return usagef("cluster move-replica-dir: want BROKER DIR TOPIC:PARTITION,...")
	}
	specs, err := parseTopicSpecs(partitions)
	if err != nil {
		return err
	}
	var req kadm.AlterReplicaLogDirsReq
	set := kadm.TopicsSet{}
	for _, name := range specs.names() {
		if specs[name] == nil {
			return usagef("cluster move-replica-dir: %q: name the partitions (TOPIC:PARTITION,...)", name)
		}
		set.Add(name, specs[name]...)
	}
	req.Add(dir, set)
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	resps, err := adm.AlterBrokerReplicaLogDirs(ctx, int32(id), req)
	if err != nil {
		return deadline(ctx, "move replicas", err)
	}
	var errs []error
	var results []partitionResult
	for _, name := range specs.names() {
		ps := slices.Clone(specs[name])
		slices.Sort(ps)
		for _, p := range slices.Compact(ps) {
			res := partitionResult{Topic: name, Partition: p}
			r, ok := resps[name][p]
			rerr := r.Err
			if !ok {
				rerr = errors.New("no answer from the broker")
			}
			if rerr != nil {
				errs = append(errs, fmt.Errorf("move %s partition %d to %s: %w", name, p, dir, rerr))
				res.Error = oneLine(rerr.Error())
			}
			results = append(results, res)
		}
	}
	return printPartitionResults(env, results, "Moving", errs)
}
