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
	"github.com/twmb/franz-go/pkg/kgo"
)

// The group commands follow kafka-consumer-groups.sh: list, describe (the
// offsets view with lag, --members, --state), delete, delete-offsets and
// reset-offsets (group_reset.go), over the classic group APIs through kadm;
// describe also knows streams groups (group_streams.go) and share groups
// (group_share.go).

// groupStates are the group states ListGroups filters on (KIP-518), in
// Kafka's spelling: classic groups, then KIP-848 consumer groups.
var groupStates = []string{"PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty",
	"Assigning", "Reconciling", "NotReady"}

// ParseGroupStates reads --state values (a comma list, any case) into
// Kafka's spelling of each state.
func ParseGroupStates(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			i := slices.IndexFunc(groupStates, func(k string) bool { return strings.EqualFold(k, s) })
			if i < 0 {
				return nil, usagef("group state %q: want one of %s", s, strings.Join(groupStates, ", "))
			}
			out = append(out, groupStates[i])
		}
	}
	return out, nil
}

// groupListing is one group in `group list -o json`.
type groupListing struct {
	Group        string `json:"group"`
	Type         string `json:"type"`
	ProtocolType string `json:"protocol_type"`
	State        string `json:"state"`
	Coordinator  int32  `json:"coordinator"`
}

// GroupList lists the cluster's groups, only those in one of states when
// states is not empty (names as ParseGroupStates returns them).
func GroupList(ctx context.Context, env *Env, states []string) error {
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	listed, err := adm.ListGroups(ctx, states...)
	if len(listed) == 0 && err != nil {
		return deadline(ctx, "list groups", err)
	}
	var listErr error
	if err != nil { // some brokers answered: print what they said
		listErr = fmt.Errorf("list groups: %w", err)
	}
	rows := make([]groupListing, 0, len(listed))
	for _, g := range listed.Sorted() {
		rows = append(rows, groupListing{Group: g.Group, Type: g.GroupType, ProtocolType: g.ProtocolType,
			State: g.State, Coordinator: g.Coordinator})
	}
	if env.Format == JSON {
		if err := writeJSON(env.Out, rows); err != nil {
			return err
		}
		return listErr
	}
	t := newTable(env.Out, "GROUP", "TYPE", "PROTOCOL-TYPE", "STATE")
	for _, r := range rows {
		t.row(r.Group, dash(r.Type), dash(r.ProtocolType), dash(r.State))
	}
	if err := t.flush(); err != nil {
		return err
	}
	return listErr
}

// GroupView is which table `group describe` prints, as the views of
// kafka-consumer-groups.sh --describe. JSON output is the whole
// description whatever the view.
type GroupView int

const (
	// GroupOffsets is one row per partition: committed offset, log end
	// offset, lag, and the member it is assigned to.
	GroupOffsets GroupView = iota
	// GroupMembers is one row per member with its assignment (--members).
	GroupMembers
	// GroupStateView is one row per group: coordinator, assignment
	// strategy, state and member count (--state).
	GroupStateView
)

// groupDescription is one group in `group describe -o json`.
type groupDescription struct {
	Group        string `json:"group"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	Protocol     string `json:"protocol"` // the assignment strategy of a consumer group, a share group's assignor
	// A share group's epochs (group_share.go).
	GroupEpoch      *int32            `json:"group_epoch,omitempty"`
	AssignmentEpoch *int32            `json:"assignment_epoch,omitempty"`
	Coordinator     *groupCoordinator `json:"coordinator"`
	Members         []groupMember     `json:"members"`
	Offsets         []groupOffset     `json:"offsets"`
	Error           string            `json:"error,omitempty"`
}

type groupCoordinator struct {
	ID   int32  `json:"id"`
	Host string `json:"host"`
	Port int32  `json:"port"`
}

type groupMember struct {
	MemberID   string            `json:"member_id"`
	InstanceID *string           `json:"instance_id"`
	ClientID   string            `json:"client_id"`
	Host       string            `json:"host"`
	Assignment []topicPartitions `json:"assignment"`
	// A streams group's member (group_streams.go): its process, epoch
	// and tasks; its assignment is the partitions of its active tasks.
	// A share group's member has its epoch too.
	ProcessID    string         `json:"process_id,omitempty"`
	Epoch        *int32         `json:"member_epoch,omitempty"`
	ActiveTasks  []streamsTasks `json:"active_tasks,omitempty"`
	StandbyTasks []streamsTasks `json:"standby_tasks,omitempty"`
	WarmupTasks  []streamsTasks `json:"warmup_tasks,omitempty"`
}

type topicPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// groupOffset is one partition the group has committed an offset for or
// has assigned to a member. Offsets and lag are null where unknown (no
// commit yet, a topic since deleted); the member fields are empty for a
// partition no member holds. A share group's partition has a start offset
// and leader epoch instead of a committed offset, and the lag its broker
// counts.
type groupOffset struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset *int64 `json:"current_offset"`
	LogEndOffset  *int64 `json:"log_end_offset"`
	Lag           *int64 `json:"lag"`
	StartOffset   *int64 `json:"start_offset,omitempty"`
	LeaderEpoch   *int32 `json:"leader_epoch,omitempty"`
	MemberID      string `json:"member_id,omitempty"`
	ClientID      string `json:"client_id,omitempty"`
	Host          string `json:"host,omitempty"`
}

// GroupDescribe describes the named groups (every group when none is
// named): state, members and their assignments, and per partition the
// committed offset, the log end offset and the lag. A group that does not
// exist is an error (GROUP_ID_NOT_FOUND); the other groups are still
// described.
func GroupDescribe(ctx context.Context, env *Env, groups []string, view GroupView) error {
	cl, err := env.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := env.withTimeout(ctx)
	defer cancel()

	if len(groups) == 0 {
		listed, err := adm.ListGroups(ctx)
		if len(listed) == 0 && err != nil {
			return deadline(ctx, "list groups", err)
		}
		groups = listed.Groups()
	}
	var errs []error
	described := kadm.DescribedGroups{}
	if len(groups) > 0 {
		var err error
		described, err = adm.DescribeGroups(ctx, groups...)
		if len(described) == 0 && err != nil {
			return deadline(ctx, "describe groups", err)
		}
		if err != nil { // some coordinators did not answer: say why once
			errs = append(errs, fmt.Errorf("describe groups: %w", err))
		}
	}

	descs := make([]groupDescription, 0, len(groups))
	topics := map[string]bool{}
	for _, name := range groups {
		d, err := describeOne(ctx, adm, cl, described, name)
		if err != nil {
			errs = append(errs, err)
			d.Error = oneLine(err.Error())
		}
		for _, o := range d.Offsets {
			topics[o.Topic] = true
		}
		descs = append(descs, d)
	}

	// One ListOffsets for the end offsets of every group's partitions.
	if len(topics) > 0 {
		ends, err := adm.ListEndOffsets(ctx, sortedKeys(topics)...)
		if len(ends) == 0 && err != nil {
			return deadline(ctx, "list end offsets", err)
		}
		for i := range descs {
			for j := range descs[i].Offsets {
				o := &descs[i].Offsets[j]
				if e, ok := ends.Lookup(o.Topic, o.Partition); ok && e.Err == nil {
					o.LogEndOffset = &e.Offset
					if o.CurrentOffset != nil {
						lag := e.Offset - *o.CurrentOffset
						o.Lag = &lag
					}
				}
			}
		}
	}

	if env.Format == JSON {
		if err := writeJSON(env.Out, descs); err != nil {
			return err
		}
		return errors.Join(errs...)
	}
	first := true
	for _, d := range descs {
		if d.Error != "" {
			continue
		}
		if !first {
			fmt.Fprintln(env.Out)
		}
		first = false
		if err := printGroup(env, d, view); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// holder is the member holding a partition.
type holder struct{ member, client, host string }

// describeOne gathers what the broker said of one group and its committed
// offsets.
func describeOne(ctx context.Context, adm *kadm.Client, cl *kgo.Client, described kadm.DescribedGroups, name string) (groupDescription, error) {
	d := groupDescription{Group: name, Members: []groupMember{}, Offsets: []groupOffset{}}
	held := map[kadm.Partition]holder{}
	g, ok := described[name]
	switch {
	case ok && (errors.Is(g.Err, kerr.GroupIDNotFound) || g.Err == nil && g.State == "Dead"):
		// Maybe a streams or share group, which DescribeGroups does not
		// describe.
		sg, found, err := describeStreamsGroup(ctx, adm, cl, name)
		if err == nil && !found {
			var sd groupDescription
			if sd, found, err = describeShareGroup(ctx, adm, name); found {
				return sd, err
			}
		}
		switch {
		case err != nil:
			return d, err
		case !found && g.Err != nil:
			return d, fmt.Errorf("describe group %s: %w", name, kafkaErr(g.Err, g.ErrMessage))
		case !found:
			// Brokers before KIP-1043 describe a group that does not
			// exist as Dead rather than GROUP_ID_NOT_FOUND.
			return d, fmt.Errorf("describe group %s: %w", name, kerr.GroupIDNotFound)
		}
		var members map[kadm.Partition]groupMember
		d, members = streamsDescription(sg, g.Coordinator)
		for tp, m := range members {
			held[tp] = holder{m.MemberID, m.ClientID, m.Host}
		}
		return fetchGroupOffsets(ctx, adm, d, held)
	case !ok:
		return d, fmt.Errorf("describe group %s: no answer from its coordinator", name)
	case g.Err != nil:
		return d, fmt.Errorf("describe group %s: %w", name, kafkaErr(g.Err, g.ErrMessage))
	}
	d.State, d.ProtocolType, d.Protocol = g.State, g.ProtocolType, g.Protocol
	d.Coordinator = &groupCoordinator{ID: g.Coordinator.NodeID, Host: g.Coordinator.Host, Port: g.Coordinator.Port}

	for _, m := range g.Members {
		gm := groupMember{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, Host: m.ClientHost,
			Assignment: []topicPartitions{}}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				ps := slices.Sorted(slices.Values(t.Partitions))
				gm.Assignment = append(gm.Assignment, topicPartitions{Topic: t.Topic, Partitions: ps})
				for _, p := range ps {
					held[kadm.Partition{Topic: t.Topic, Partition: p}] = holder{m.MemberID, m.ClientID, m.ClientHost}
				}
			}
			slices.SortFunc(gm.Assignment, func(a, b topicPartitions) int { return strings.Compare(a.Topic, b.Topic) })
		}
		d.Members = append(d.Members, gm)
	}
	return fetchGroupOffsets(ctx, adm, d, held)
}

// fetchGroupOffsets adds a group's committed offsets, and the partitions
// its members hold (held), to d.
func fetchGroupOffsets(ctx context.Context, adm *kadm.Client, d groupDescription, held map[kadm.Partition]holder) (groupDescription, error) {
	name := d.Group
	committed, err := adm.FetchOffsets(ctx, name)
	if err != nil {
		return d, deadline(ctx, "fetch offsets of group "+name, err)
	}
	rows := map[kadm.Partition]*groupOffset{}
	row := func(tp kadm.Partition) *groupOffset {
		if r, ok := rows[tp]; ok {
			return r
		}
		r := &groupOffset{Topic: tp.Topic, Partition: tp.Partition}
		rows[tp] = r
		return r
	}
	var errs []error
	committed.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("describe group %s: offset of %s partition %d: %w", name, o.Topic, o.Partition, o.Err))
			return
		}
		if o.At < 0 {
			return // no commit
		}
		at := o.At
		row(kadm.Partition{Topic: o.Topic, Partition: o.Partition}).CurrentOffset = &at
	})
	for tp, h := range held {
		r := row(tp)
		r.MemberID, r.ClientID, r.Host = h.member, h.client, h.host
	}
	for _, r := range rows {
		d.Offsets = append(d.Offsets, *r)
	}
	slices.SortFunc(d.Offsets, func(a, b groupOffset) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return d, errors.Join(errs...)
}

// printGroup writes one group's table for the view.
func printGroup(env *Env, d groupDescription, view GroupView) error {
	if view != GroupStateView && len(d.Members) == 0 {
		kind := "Consumer"
		if d.ProtocolType == "share" {
			kind = "Share"
		}
		fmt.Fprintf(env.Out, "%s group '%s' has no active members.\n\n", kind, d.Group)
	}
	switch {
	case d.ProtocolType == "share":
		return printShareGroup(env, d, view)
	case view == GroupMembers && d.ProtocolType == "streams":
		return printStreamsMembers(env, d)
	case view == GroupMembers:
		t := newTable(env.Out, "GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT")
		for _, m := range d.Members {
			n := 0
			parts := make([]string, 0, len(m.Assignment))
			for _, a := range m.Assignment {
				n += len(a.Partitions)
				parts = append(parts, a.Topic+"("+int32List(a.Partitions)+")")
			}
			instance := "-"
			if m.InstanceID != nil {
				instance = *m.InstanceID
			}
			t.row(d.Group, m.MemberID, instance, m.Host, m.ClientID, n, dash(strings.Join(parts, ",")))
		}
		return t.flush()
	case view == GroupStateView:
		t := newTable(env.Out, "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
		c := d.Coordinator
		t.row(d.Group, fmt.Sprintf("%s:%d (%d)", c.Host, c.Port, c.ID), dash(d.Protocol), d.State, len(d.Members))
		return t.flush()
	}
	t := newTable(env.Out, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	for _, o := range d.Offsets {
		t.row(d.Group, o.Topic, o.Partition, optInt(o.CurrentOffset), optInt(o.LogEndOffset), optInt(o.Lag),
			dash(o.MemberID), dash(o.Host), dash(o.ClientID))
	}
	// Members that hold no partition still show, as Kafka's tool does.
	for _, m := range d.Members {
		if len(m.Assignment) == 0 {
			t.row(d.Group, "-", "-", "-", "-", "-", m.MemberID, m.Host, m.ClientID)
		}
	}
	return t.flush()
}

// groupResult is one group in `group delete -o json`.
type groupResult struct {
	Group string `json:"group"`
	Error string `json:"error,omitempty"`
}

// GroupDelete deletes the named groups with their committed offsets; a
// group with members cannot be deleted (NON_EMPTY_GROUP).
func GroupDelete(ctx context.Context, env *Env, groups []string) error {
	if len(groups) == 0 {
		return usagef("group delete: no group name")
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	resps, err := adm.DeleteGroups(ctx, groups...)
	if len(resps) == 0 && err != nil {
		return deadline(ctx, "delete groups", err)
	}
	var errs []error
	results := make([]groupResult, 0, len(groups))
	for _, g := range groups {
		res := groupResult{Group: g}
		r, ok := resps[g]
		switch {
		case !ok:
			err = fmt.Errorf("delete group %s: no answer from its coordinator", g)
		case r.Err != nil:
			err = fmt.Errorf("delete group %s: %w", g, kafkaErr(r.Err, r.ErrMessage))
		default:
			err = nil
		}
		if err != nil {
			errs = append(errs, err)
			res.Error = oneLine(err.Error())
		} else if env.Format == Text {
			fmt.Fprintf(env.Out, "Deleted group %s.\n", g)
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

// partitionResult is one partition in `group delete-offsets -o json`.
type partitionResult struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Error     string `json:"error,omitempty"`
}

// GroupDeleteOffsets deletes a group's committed offsets for the
// partitions of topics, each "T" (every partition) or "T:0,2" (those). A
// group whose members subscribe to a topic keeps its offsets
// (GROUP_SUBSCRIBED_TO_TOPIC). A share group's offsets go per topic
// (DeleteShareGroupOffsets), and only while it has no members.
func GroupDeleteOffsets(ctx context.Context, env *Env, group string, topics []string) error {
	if group == "" {
		return usagef("group delete-offsets: no group name")
	}
	specs, err := parseTopicSpecs(topics)
	if err != nil {
		return err
	}
	if len(specs) == 0 {
		return usagef("group delete-offsets: no --topic")
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	if _, _, share, err := shareGroupState(ctx, adm, group); err != nil {
		return fmt.Errorf("delete offsets of group %s: %w", group, err)
	} else if share {
		return shareDeleteOffsets(ctx, env, adm, group, specs)
	}
	ends, err := adm.ListEndOffsets(ctx, specs.names()...)
	if err != nil {
		return deadline(ctx, "list partitions", err)
	}
	set, err := specs.resolve(ends, "delete offsets of group "+group)
	if err != nil {
		return err
	}
	resps, err := adm.DeleteOffsets(ctx, group, set)
	if err != nil {
		return deadline(ctx, "delete offsets of group "+group, err)
	}
	var errs []error
	var results []partitionResult
	for _, tp := range set.Sorted() {
		for _, p := range tp.Partitions {
			res := partitionResult{Topic: tp.Topic, Partition: p}
			perr, ok := resps.Lookup(tp.Topic, p)
			if !ok {
				perr = errors.New("no answer from the group's coordinator")
			}
			if perr != nil {
				errs = append(errs, fmt.Errorf("delete offset of group %s, %s partition %d: %w", group, tp.Topic, p, perr))
				res.Error = oneLine(perr.Error())
			}
			results = append(results, res)
		}
	}
	if env.Format == JSON {
		if err := writeJSON(env.Out, results); err != nil {
			return err
		}
		return errors.Join(errs...)
	}
	t := newTable(env.Out, "TOPIC", "PARTITION", "STATUS")
	for _, r := range results {
		status := "Successful"
		if r.Error != "" {
			status, _, _ = strings.Cut(r.Error, ":") // the Kafka error's name
		}
		t.row(r.Topic, r.Partition, status)
	}
	if err := t.flush(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// topicSpecs are --topic values: topic name to partitions, nil for all.
type topicSpecs map[string][]int32

// parseTopicSpecs reads --topic values, each "T" or "T:0,1,2"; a topic
// named twice merges its partitions, and a bare name wins over a list.
func parseTopicSpecs(values []string) (topicSpecs, error) {
	specs := topicSpecs{}
	for _, v := range values {
		name, list, hasList := strings.Cut(v, ":")
		if name == "" {
			return nil, usagef("topic %q: want TOPIC or TOPIC:PARTITION,...", v)
		}
		if !hasList {
			specs[name] = nil
			continue
		}
		var ps []int32
		for _, f := range strings.Split(list, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
			if err != nil || n < 0 {
				return nil, usagef("topic %q: %q is not a partition number", v, f)
			}
			ps = append(ps, int32(n))
		}
		if old, seen := specs[name]; !seen || old != nil {
			specs[name] = append(old, ps...)
		}
	}
	return specs, nil
}

func (s topicSpecs) names() []string { return sortedKeys(s) }

// resolve turns the specs into partitions, checking against listed (the
// offsets of each topic's partitions) that the topics and partitions exist.
func (s topicSpecs) resolve(listed kadm.ListedOffsets, what string) (kadm.TopicsSet, error) {
	set := kadm.TopicsSet{}
	var errs []error
	for _, name := range s.names() {
		ps := listed[name]
		if l, ok := ps[-1]; ok && l.Err != nil {
			errs = append(errs, fmt.Errorf("%s: topic %s: %w", what, name, l.Err))
			continue
		}
		if len(ps) == 0 {
			errs = append(errs, fmt.Errorf("%s: topic %s: %w", what, name, kerr.UnknownTopicOrPartition))
			continue
		}
		want := s[name]
		if want == nil {
			for p := range ps {
				want = append(want, p)
			}
		}
		for _, p := range want {
			if _, ok := ps[p]; !ok {
				errs = append(errs, fmt.Errorf("%s: topic %s has no partition %d (it has %d)", what, name, p, len(ps)))
				continue
			}
			set.Add(name, p)
		}
	}
	return set, errors.Join(errs...)
}

// dash stands in for an empty cell, as Kafka's tools print.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// optInt renders an optional number, "-" when unknown.
func optInt(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}
