package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Streams groups (KIP-1071) in `group describe`: DescribeGroups does not
// describe them (GROUP_ID_NOT_FOUND, as Kafka answers), so a group it does
// not find is asked about with StreamsGroupDescribe at its coordinator
// (kadm has no call for it). Its members show their process and tasks;
// the offsets view maps each active task to the partitions of its
// subtopology's source topics, as kafka-streams-groups.sh does.

// streamsTasks is one subtopology's tasks of a member.
type streamsTasks struct {
	Subtopology string  `json:"subtopology"`
	Partitions  []int32 `json:"partitions"`
}

// describeStreamsGroup asks group's coordinator for its streams group
// description; found is false when it is not a streams group either.
func describeStreamsGroup(ctx context.Context, adm *kadm.Client, cl *kgo.Client, group string) (g kmsg.StreamsGroupDescribeResponseGroup, found bool, err error) {
	coords := adm.FindGroupCoordinators(ctx, group)
	c, ok := coords[group]
	switch {
	case !ok:
		return g, false, fmt.Errorf("find coordinator of group %s: no answer", group)
	case c.Err != nil:
		return g, false, fmt.Errorf("find coordinator of group %s: %w", group, c.Err)
	}
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	resp, err := req.RequestWith(ctx, cl.Broker(int(c.NodeID)))
	if err != nil {
		return g, false, deadline(ctx, "describe streams group "+group, err)
	}
	if len(resp.Groups) != 1 {
		return g, false, fmt.Errorf("describe streams group %s: %d groups in the answer", group, len(resp.Groups))
	}
	g = resp.Groups[0]
	if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
		msg := ""
		if g.ErrorMessage != nil {
			msg = *g.ErrorMessage
		}
		if errors.Is(err, kerr.GroupIDNotFound) {
			return g, false, nil
		}
		return g, false, fmt.Errorf("describe streams group %s: %w", group, kafkaErr(err, msg))
	}
	return g, true, nil
}

// streamsDescription is a streams group as `group describe` shows it;
// held maps each partition of an active task to its member.
func streamsDescription(g kmsg.StreamsGroupDescribeResponseGroup, coord kadm.BrokerDetail) (groupDescription, map[kadm.Partition]groupMember) {
	d := groupDescription{Group: g.Group, State: g.State, ProtocolType: "streams", Members: []groupMember{}, Offsets: []groupOffset{}}
	d.Coordinator = &groupCoordinator{ID: coord.NodeID, Host: coord.Host, Port: coord.Port}
	sources := map[string][]string{}
	if g.Topology != nil {
		for _, st := range g.Topology.Subtopologies {
			src := slices.Clone(st.SourceTopics)
			for _, r := range st.RepartitionSourceTopics {
				src = append(src, r.Topic)
			}
			sources[st.SubtopologyID] = src
		}
	}
	held := map[kadm.Partition]groupMember{}
	for _, m := range g.Members {
		gm := groupMember{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, Host: m.ClientHost,
			Assignment: []topicPartitions{}, ProcessID: m.ProcessID, Epoch: &m.MemberEpoch,
			ActiveTasks: tasksOf(m.Assignment.ActiveTasks), StandbyTasks: tasksOf(m.Assignment.StandbyTasks),
			WarmupTasks: tasksOf(m.Assignment.WarmupTasks)}
		byTopic := map[string][]int32{}
		for _, t := range m.Assignment.ActiveTasks {
			for _, topic := range sources[t.SubtopologyID] {
				byTopic[topic] = append(byTopic[topic], t.Partitions...)
			}
		}
		for _, topic := range sortedKeys(byTopic) {
			ps := slices.Compact(slices.Sorted(slices.Values(byTopic[topic])))
			gm.Assignment = append(gm.Assignment, topicPartitions{Topic: topic, Partitions: ps})
			for _, p := range ps {
				held[kadm.Partition{Topic: topic, Partition: p}] = gm
			}
		}
		d.Members = append(d.Members, gm)
	}
	return d, held
}

func tasksOf(ts []kmsg.TaskIDs) []streamsTasks {
	out := []streamsTasks{}
	for _, t := range ts {
		out = append(out, streamsTasks{Subtopology: t.SubtopologyID, Partitions: slices.Sorted(slices.Values(t.Partitions))})
	}
	slices.SortFunc(out, func(a, b streamsTasks) int { return strings.Compare(a.Subtopology, b.Subtopology) })
	return out
}

// formatTasks writes tasks as Kafka names them: 0_1 (subtopology 0,
// partition 1), comma separated.
func formatTasks(ts []streamsTasks) string {
	var parts []string
	for _, t := range ts {
		for _, p := range t.Partitions {
			parts = append(parts, fmt.Sprintf("%s_%d", t.Subtopology, p))
		}
	}
	return dash(strings.Join(parts, ","))
}

// printStreamsMembers is the --members table of a streams group.
func printStreamsMembers(env *Env, d groupDescription) error {
	t := newTable(env.Out, "GROUP", "MEMBER-ID", "PROCESS", "HOST", "CLIENT-ID", "EPOCH", "ACTIVE-TASKS", "STANDBY-TASKS", "WARMUP-TASKS")
	for _, m := range d.Members {
		t.row(d.Group, m.MemberID, dash(m.ProcessID), m.Host, m.ClientID, optEpoch(m.Epoch), formatTasks(m.ActiveTasks),
			formatTasks(m.StandbyTasks), formatTasks(m.WarmupTasks))
	}
	return t.flush()
}

func optEpoch(e *int32) string {
	if e == nil {
		return "-"
	}
	return fmt.Sprint(*e)
}
