package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClusterReassign starts, replaces or cancels partition reassignments
// (kafka-reassign-partitions.sh --execute / --cancel): each spec is
// "TOPIC:PARTITION=1,2,3", the partition's target replicas in order, or
// "TOPIC:PARTITION=cancel". The new replicas copy the partition and join
// its ISR; the reassignment completes when all have (cluster
// list-reassignments shows it until then). keepRF refuses targets that
// change a partition's replication factor (Kafka 4.1+).
func ClusterReassign(ctx context.Context, env *Env, specs []string, keepRF bool) error {
	if len(specs) == 0 {
		return usagef("cluster reassign: no TOPIC:PARTITION=REPLICAS")
	}
	var req kadm.AlterPartitionAssignmentsReq
	type target struct {
		topic     string
		partition int32
	}
	var order []target
	for _, s := range specs {
		tp, list, ok := strings.Cut(s, "=")
		topic, ps, ok2 := strings.Cut(tp, ":")
		p, err := strconv.ParseInt(ps, 10, 32)
		if !ok || !ok2 || topic == "" || err != nil || p < 0 {
			return usagef("cluster reassign: %q: want TOPIC:PARTITION=BROKER,... or TOPIC:PARTITION=cancel", s)
		}
		var replicas []int32
		if list != "cancel" {
			replicas = []int32{}
			for _, f := range strings.Split(list, ",") {
				b, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
				if err != nil || b < 0 {
					return usagef("cluster reassign: %q: %q is not a broker id", s, f)
				}
				replicas = append(replicas, int32(b))
			}
		}
		req.Assign(topic, int32(p), replicas)
		order = append(order, target{topic, int32(p)})
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	if keepRF {
		ctx = kadm.ForbidAlterRf(ctx)
	}
	resps, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		return deadline(ctx, "reassign partitions", err)
	}
	var errs []error
	var results []partitionResult
	for _, t := range order {
		res := partitionResult{Topic: t.topic, Partition: t.partition}
		r, ok := resps[t.topic][t.partition]
		rerr := r.Err
		if !ok {
			rerr = errors.New("no answer from the controller")
		}
		if rerr != nil {
			rerr = kafkaErr(rerr, r.ErrMessage)
			errs = append(errs, fmt.Errorf("reassign %s partition %d: %w", t.topic, t.partition, rerr))
			res.Error = oneLine(rerr.Error())
		}
		results = append(results, res)
	}
	return printPartitionResults(env, results, "Accepted", errs)
}

// reassignmentInfo is one line of `cluster list-reassignments -o json`.
type reassignmentInfo struct {
	Topic    string  `json:"topic"`
	Part     int32   `json:"partition"`
	Replicas []int32 `json:"replicas"`
	Adding   []int32 `json:"adding_replicas"`
	Removing []int32 `json:"removing_replicas"`
}

// ClusterListReassignments prints the partition reassignments in progress
// (kafka-reassign-partitions.sh --list): each partition's replicas (its
// target followed by the ones leaving), and the replicas being added and
// removed. topics ("T" or "T:0,1,...") narrow the listing; none lists all.
func ClusterListReassignments(ctx context.Context, env *Env, topics []string) error {
	specs, err := parseTopicSpecs(topics)
	if err != nil {
		return err
	}
	cl, err := env.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := env.withTimeout(ctx)
	defer cancel()
	req := kmsg.NewPtrListPartitionReassignmentsRequest() // null topics: every reassignment
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return deadline(ctx, "list reassignments", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return kafkaErr(err, deref(resp.ErrorMessage))
	}
	infos := []reassignmentInfo{}
	for _, t := range resp.Topics {
		want, named := specs[t.Topic]
		if len(specs) > 0 && !named {
			continue
		}
		for _, p := range t.Partitions {
			if want != nil && !slices.Contains(want, p.Partition) {
				continue
			}
			infos = append(infos, reassignmentInfo{Topic: t.Topic, Part: p.Partition, Replicas: p.Replicas,
				Adding: p.AddingReplicas, Removing: p.RemovingReplicas})
		}
	}
	if env.Format == JSON {
		return writeJSON(env.Out, infos)
	}
	t := newTable(env.Out, "TOPIC", "PARTITION", "REPLICAS", "ADDING", "REMOVING")
	for _, i := range infos {
		t.row(i.Topic, i.Part, brokerList(i.Replicas), brokerList(i.Adding), brokerList(i.Removing))
	}
	return t.flush()
}

func brokerList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}
