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

// Share groups (KIP-932) in `group describe`: DescribeGroups does not
// describe them (GROUP_ID_NOT_FOUND), so a group neither it nor
// StreamsGroupDescribe finds is asked about with ShareGroupDescribe. The
// offsets view is DescribeShareGroupOffsets (v1): per share partition the
// share-partition start offset, its leader epoch and the lag the broker
// counts (records from the start offset to the high watermark not yet
// acknowledged), as kafka-share-groups.sh --describe shows them. Its
// partitions have no single holder (members share them), so the view
// names no member.

// describeShareGroup asks group's coordinator for its share group
// description and share-partition offsets; found is false when it is no
// share group either.
func describeShareGroup(ctx context.Context, adm *kadm.Client, group string) (d groupDescription, found bool, err error) {
	d = groupDescription{Group: group, Members: []groupMember{}, Offsets: []groupOffset{}}
	described, err := adm.DescribeShareGroups(ctx, group)
	if err != nil {
		return d, false, deadline(ctx, "describe share group "+group, err)
	}
	g, ok := described[group]
	switch {
	case !ok:
		return d, false, fmt.Errorf("describe share group %s: no answer from its coordinator", group)
	case errors.Is(g.Err, kerr.GroupIDNotFound):
		return d, false, nil
	case g.Err != nil:
		return d, false, fmt.Errorf("describe share group %s: %w", group, g.Err)
	}
	d.State, d.ProtocolType, d.Protocol = g.GroupState, "share", g.Assignor
	d.GroupEpoch, d.AssignmentEpoch = &g.GroupEpoch, &g.AssignmentEpoch
	d.Coordinator = &groupCoordinator{ID: g.Coordinator.NodeID, Host: g.Coordinator.Host, Port: g.Coordinator.Port}
	for _, m := range g.Members {
		gm := groupMember{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Assignment: []topicPartitions{},
			Epoch: &m.MemberEpoch}
		for _, tp := range m.Assignment.Sorted() {
			gm.Assignment = append(gm.Assignment, topicPartitions{Topic: tp.Topic, Partitions: tp.Partitions})
		}
		d.Members = append(d.Members, gm)
	}

	offsets, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return d, true, deadline(ctx, "describe offsets of share group "+group, err)
	}
	o, ok := offsets[group]
	switch {
	case !ok:
		return d, true, fmt.Errorf("describe offsets of share group %s: no answer from its coordinator", group)
	case o.Err != nil:
		return d, true, fmt.Errorf("describe offsets of share group %s: %w", group, o.Err)
	}
	var errs []error
	for _, so := range o.Offsets.Sorted() {
		if so.Err != nil {
			errs = append(errs, fmt.Errorf("describe share group %s: offset of %s partition %d: %w", group, so.Topic, so.Partition, so.Err))
			continue
		}
		row := groupOffset{Topic: so.Topic, Partition: so.Partition}
		if so.StartOffset >= 0 {
			row.StartOffset = &so.StartOffset
		}
		if so.LeaderEpoch >= 0 {
			row.LeaderEpoch = &so.LeaderEpoch
		}
		if so.Lag >= 0 {
			row.Lag = &so.Lag
		}
		d.Offsets = append(d.Offsets, row)
	}
	slices.SortFunc(d.Offsets, func(a, b groupOffset) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return d, true, errors.Join(errs...)
}

// printShareGroup writes a share group's table for the view, with the
// columns of kafka-share-groups.sh --describe.
func printShareGroup(env *Env, d groupDescription, view GroupView) error {
	switch view {
	case GroupMembers:
		t := newTable(env.Out, "GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "MEMBER-EPOCH", "#PARTITIONS", "ASSIGNMENT")
		for _, m := range d.Members {
			n := 0
			parts := make([]string, 0, len(m.Assignment))
			for _, a := range m.Assignment {
				n += len(a.Partitions)
				parts = append(parts, a.Topic+"("+int32List(a.Partitions)+")")
			}
			t.row(d.Group, m.MemberID, m.Host, m.ClientID, optEpoch(m.Epoch), n, dash(strings.Join(parts, ",")))
		}
		return t.flush()
	case GroupStateView:
		t := newTable(env.Out, "GROUP", "COORDINATOR (ID)", "ASSIGNOR", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS")
		c := d.Coordinator
		t.row(d.Group, fmt.Sprintf("%s:%d (%d)", c.Host, c.Port, c.ID), dash(d.Protocol), d.State,
			optEpoch(d.GroupEpoch), optEpoch(d.AssignmentEpoch), len(d.Members))
		return t.flush()
	}
	t := newTable(env.Out, "GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LOG-END-OFFSET", "LAG")
	for _, o := range d.Offsets {
		t.row(d.Group, o.Topic, o.Partition, optEpoch(o.LeaderEpoch), optInt(o.StartOffset), optInt(o.LogEndOffset), optInt(o.Lag))
	}
	return t.flush()
}

// shareGroupState is a share group's state and member count; found is
// false when group is no share group.
func shareGroupState(ctx context.Context, adm *kadm.Client, group string) (state string, members int, found bool, err error) {
	described, err := adm.DescribeShareGroups(ctx, group)
	if err != nil {
		return "", 0, false, deadline(ctx, "describe share group "+group, err)
	}
	g, ok := described[group]
	switch {
	case !ok:
		return "", 0, false, fmt.Errorf("describe share group %s: no answer from its coordinator", group)
	case errors.Is(g.Err, kerr.GroupIDNotFound):
		return "", 0, false, nil
	case g.Err != nil:
		return "", 0, false, fmt.Errorf("describe share group %s: %w", group, g.Err)
	}
	return g.GroupState, len(g.Members), true, nil
}

// shareStartOffsets are a share group's share-partition start offsets,
// what `group reset-offsets` moves for a share group.
func shareStartOffsets(ctx context.Context, adm *kadm.Client, group, what string) (map[kadm.Partition]int64, error) {
	described, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return nil, deadline(ctx, what+": describe share group offsets", err)
	}
	d, ok := described[group]
	switch {
	case !ok:
		return nil, fmt.Errorf("%s: no answer from its coordinator", what)
	case d.Err != nil:
		return nil, fmt.Errorf("%s: %w", what, d.Err)
	}
	starts := map[kadm.Partition]int64{}
	for _, o := range d.Offsets.Sorted() {
		if o.Err == nil && o.StartOffset >= 0 {
			starts[kadm.Partition{Topic: o.Topic, Partition: o.Partition}] = o.StartOffset
		}
	}
	return starts, nil
}

// shareDeleteOffsets deletes the share-partition state of a share group's
// partitions of the topics in specs: their next fetch starts them where
// share.auto.offset.reset says. DeleteShareGroupOffsets names whole
// topics, so a partition list is refused, as kafka-share-groups.sh takes
// topics only; -o json is a topicResult per topic.
func shareDeleteOffsets(ctx context.Context, env *Env, adm *kadm.Client, group string, specs topicSpecs) error {
	for name, ps := range specs {
		if ps != nil {
			return usagef("group delete-offsets: %s is a share group, whose offsets are deleted per topic: give --topic %s", group, name)
		}
	}
	what := "delete offsets of share group " + group
	resps, err := adm.DeleteShareGroupOffsets(ctx, group, specs.names()...)
	if err != nil {
		return deadline(ctx, what, err)
	}
	var errs []error
	var results []topicResult
	for _, name := range specs.names() {
		res := topicResult{Topic: name}
		terr, ok := resps.Lookup(name)
		if !ok {
			terr = errors.New("no answer from the group's coordinator")
		}
		if terr != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", what, name, terr))
			res.Error = oneLine(terr.Error())
		}
		results = append(results, res)
	}
	if env.Format == JSON {
		if err := writeJSON(env.Out, results); err != nil {
			return err
		}
		return errors.Join(errs...)
	}
	t := newTable(env.Out, "TOPIC", "STATUS")
	for _, r := range results {
		status := "Successful"
		if r.Error != "" {
			status, _, _ = strings.Cut(r.Error, ":")
		}
		t.row(r.Topic, status)
	}
	if err := t.flush(); err != nil {
		return err
	}
	return errors.Join(errs...)
}
