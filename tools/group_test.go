package tools

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest/await"
)

// memberID matches the member ids the broker makes up for the test's
// consumer: its client id and a UUID.
var memberID = regexp.MustCompile(`member-one-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// normalizeGroup hides what changes from run to run in group output: the
// member id's UUID becomes zeros (the same width, so tables stay aligned)
// and the coordinator's port <port>.
func normalizeGroup(s string) string {
	s = memberID.ReplaceAllString(s, "member-one-00000000-0000-0000-0000-000000000000")
	return normalize(s)
}

// seedGroupTopic makes a topic of three partitions holding 5, 3 and 0
// records.
func seedGroupTopic(t *testing.T, topic string) {
	t.Helper()
	ctx := testCtx(t)
	env, _ := testEnv(t, Text)
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{topic}, Partitions: 3, ReplicationFactor: 1}))
	must(t, Produce(ctx, env, ProduceOptions{Topic: topic, Partition: 0, Input: strings.NewReader("a\nb\nc\nd\ne\n")}))
	must(t, Produce(ctx, env, ProduceOptions{Topic: topic, Partition: 1, Input: strings.NewReader("x\ny\nz\n")}))
}

// joinGroup starts a consumer in group on topic and returns once the
// group has assigned it every partition; stop makes it leave.
func joinGroup(t *testing.T, group, topic string) (stop func()) {
	t.Helper()
	return startMember(t, group, topic, true)
}

// startMember starts a consumer in group on topic, and with waitAssigned
// returns once partitions are assigned to it.
func startMember(t *testing.T, group, topic string, waitAssigned bool) (stop func()) {
	t.Helper()
	assigned := make(chan struct{}, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker.addr), kgo.ClientID("member-one"),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}))
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	stop = func() {
		cancel()
		<-polled
		cl.Close() // leaves the group
	}
	if !waitAssigned {
		return stop
	}
	select {
	case <-assigned:
	case <-time.After(30 * time.Second):
		stop()
		t.Fatal("consumer not assigned partitions after 30s")
	}
	return stop
}

// committed is the group's committed offsets by topic and partition.
func committed(t *testing.T, group string) map[string]map[int32]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker.addr))
	must(t, err)
	adm := kadm.NewClient(cl)
	defer adm.Close()
	fetched, err := adm.FetchOffsets(testCtx(t), group)
	must(t, err)
	out := map[string]map[int32]int64{}
	fetched.Each(func(o kadm.OffsetResponse) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.At
	})
	return out
}

// waitState waits until the group is in state, as a member's leaving takes
// effect at the coordinator a moment after the client returns.
func waitState(t *testing.T, group, state string) {
	t.Helper()
	waitMembers(t, group, state, -1)
}

// waitMembers waits until the group is in state with members members (any
// number when members < 0).
func waitMembers(t *testing.T, group, state string, members int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker.addr))
	must(t, err)
	adm := kadm.NewClient(cl)
	defer adm.Close()
	var last string
	if !await.Poll(30*time.Second, func() bool {
		d, err := adm.DescribeGroups(testCtx(t), group)
		if err != nil {
			return false
		}
		last = d[group].State
		return last == state && (members < 0 || len(d[group].Members) == members)
	}) {
		t.Fatalf("group %s still %s, want %s", group, last, state)
	}
}

func TestGroupLifecycle(t *testing.T) {
	const topic, group = "grp", "grp-a"
	seedGroupTopic(t, topic)
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	jenv, jout := testEnv(t, JSON)

	// A reset creates a group that does not exist; the offset is kept in
	// the log (5 and 3 records; partition 2 is empty, so 0).
	must(t, GroupResetOffsets(ctx, env, ResetOptions{Group: group, Topics: []string{topic},
		To: ResetTarget{Kind: ResetToOffset, Offset: 2}, Execute: true}))
	golden(t, "group_reset_execute.txt", out.String())
	if got := committed(t, group)[topic]; !maps.Equal(got, map[int32]int64{0: 2, 1: 2, 2: 0}) {
		t.Fatalf("committed after reset: %v", got)
	}

	out.Reset()
	must(t, GroupDescribe(ctx, env, []string{group}, GroupOffsets))
	golden(t, "group_describe_empty.txt", normalizeGroup(out.String()))

	// With a member: it holds every partition.
	stop := joinGroup(t, group, topic)
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	for view, name := range map[GroupView]string{GroupOffsets: "offsets", GroupMembers: "members", GroupStateView: "state"} {
		out.Reset()
		must(t, GroupDescribe(ctx, env, []string{group}, view))
		got := normalizeGroup(out.String())
		if view == GroupStateView { // the port's width varies: collapse the blanks
			got = keepLines(regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllString(got, "127.0.0.1:<port>"), "GROUP", group)
		}
		golden(t, "group_describe_"+name+".txt", got)
	}
	jout.Reset()
	must(t, GroupDescribe(ctx, jenv, []string{group}, GroupOffsets))
	golden(t, "group_describe.json", normalizeGroup(jout.String()))

	// An active group's offsets cannot be reset (not even as a dry run),
	// nor the group deleted, nor offsets of a topic it reads deleted.
	for _, execute := range []bool{false, true} {
		out.Reset()
		err := GroupResetOffsets(ctx, env, ResetOptions{Group: group, Topics: []string{topic},
			To: ResetTarget{Kind: ResetToEarliest}, Execute: execute})
		lines := ErrorLines(err)
		if !errors.Is(err, kerr.NonEmptyGroup) || len(lines) != 1 ||
			!strings.HasPrefix(lines[0], "reset offsets of group grp-a: NON_EMPTY_GROUP: ") || out.Len() != 0 {
			t.Fatalf("reset of an active group (execute %t): %q, printed %q", execute, lines, out.String())
		}
	}
	if err := GroupDelete(ctx, env, []string{group}); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Fatalf("delete of an active group: %v", err)
	}
	out.Reset()
	err := GroupDeleteOffsets(ctx, env, group, []string{topic + ":0"})
	if !errors.Is(err, kerr.GroupSubscribedToTopic) || !strings.Contains(out.String(), "grp    0          GROUP_SUBSCRIBED_TO_TOPIC\n") {
		t.Fatalf("delete-offsets of a subscribed topic: %v\n%s", err, out.String())
	}
	stop()
	stop = nil
	waitState(t, group, "Empty")

	// Resets of an empty group. A dry run changes nothing.
	jout.Reset()
	must(t, GroupResetOffsets(ctx, jenv, ResetOptions{Group: group, Topics: []string{topic}, To: ResetTarget{Kind: ResetToEarliest}}))
	golden(t, "group_reset_dry.json", jout.String())
	out.Reset()
	must(t, GroupResetOffsets(ctx, env, ResetOptions{Group: group, AllTopics: true, To: ResetTarget{Kind: ResetToLatest}}))
	golden(t, "group_reset_dry.txt", out.String())
	if got := committed(t, group)[topic]; !maps.Equal(got, map[int32]int64{0: 2, 1: 2, 2: 0}) {
		t.Fatalf("committed after a dry run: %v", got)
	}
	for _, c := range []struct {
		name string
		opts ResetOptions
		want map[int32]int64
	}{
		{"latest", ResetOptions{Topics: []string{topic}, To: ResetTarget{Kind: ResetToLatest}}, map[int32]int64{0: 5, 1: 3, 2: 0}},
		{"shift back", ResetOptions{AllTopics: true, To: ResetTarget{Kind: ResetShiftBy, Offset: -2}}, map[int32]int64{0: 3, 1: 1, 2: 0}},
		{"shift past the end", ResetOptions{AllTopics: true, To: ResetTarget{Kind: ResetShiftBy, Offset: 100}}, map[int32]int64{0: 5, 1: 3, 2: 0}},
		{"earliest of one partition", ResetOptions{Topics: []string{topic + ":1"}, To: ResetTarget{Kind: ResetToEarliest}}, map[int32]int64{0: 5, 1: 0, 2: 0}},
		{"offset clamped", ResetOptions{Topics: []string{topic + ":0,1"}, To: ResetTarget{Kind: ResetToOffset, Offset: 4}}, map[int32]int64{0: 4, 1: 3, 2: 0}},
		{"datetime before", ResetOptions{Topics: []string{topic}, To: ResetTarget{Kind: ResetToDatetime, Time: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)}}, map[int32]int64{0: 0, 1: 0, 2: 0}},
		{"datetime after", ResetOptions{Topics: []string{topic}, To: ResetTarget{Kind: ResetToDatetime, Time: time.Now().Add(time.Hour)}}, map[int32]int64{0: 5, 1: 3, 2: 0}},
		{"by duration", ResetOptions{Topics: []string{topic}, To: ResetTarget{Kind: ResetByDuration, Duration: time.Hour}}, map[int32]int64{0: 0, 1: 0, 2: 0}},
	} {
		c.opts.Group, c.opts.Execute = group, true
		jout.Reset()
		must(t, GroupResetOffsets(ctx, jenv, c.opts))
		var plan resetPlan
		must(t, json.Unmarshal(jout.Bytes(), &plan))
		if got := committed(t, group)[topic]; !plan.Executed || !maps.Equal(got, c.want) {
			t.Fatalf("%s: committed %v, want %v (plan %+v)", c.name, got, c.want, plan)
		}
	}

	// Delete the offset of partition 1: describe no longer lists it, and
	// shifting it is an error that commits nothing.
	out.Reset()
	must(t, GroupDeleteOffsets(ctx, env, group, []string{topic + ":1"}))
	golden(t, "group_delete_offsets.txt", out.String())
	err = GroupResetOffsets(ctx, env, ResetOptions{Group: group, Topics: []string{topic}, To: ResetTarget{Kind: ResetShiftBy, Offset: 1}, Execute: true})
	if err == nil || !strings.Contains(err.Error(), "grp partition 1: no committed offset to shift") {
		t.Fatalf("shift without a commit: %v", err)
	}
	if got := committed(t, group)[topic]; !maps.Equal(got, map[int32]int64{0: 0, 2: 0}) {
		t.Fatalf("committed after a failed shift: %v", got)
	}

	// list, with and without a state filter.
	out.Reset()
	must(t, GroupList(ctx, env, []string{"Empty"}))
	golden(t, "group_list.txt", keepLines(out.String(), "GROUP", "grp-"))
	out.Reset()
	must(t, GroupList(ctx, env, []string{"Stable"}))
	if strings.Contains(out.String(), group) {
		t.Fatalf("list --state Stable shows the empty group:\n%s", out.String())
	}
	jout.Reset()
	must(t, GroupList(ctx, jenv, nil))
	var listed []groupListing
	must(t, json.Unmarshal(jout.Bytes(), &listed))
	if i := indexGroup(listed, group); i < 0 || listed[i] != (groupListing{Group: group, Type: "classic", ProtocolType: "consumer", State: "Empty", Coordinator: 1}) {
		t.Fatalf("list -o json: %+v", listed)
	}

	// Describe a group that exists and one that does not: the first is
	// shown, the second is an error.
	out.Reset()
	err = GroupDescribe(ctx, env, []string{group, "grp-none"}, GroupStateView)
	if lines := ErrorLines(err); !errors.Is(err, kerr.GroupIDNotFound) || len(lines) != 1 ||
		!strings.HasPrefix(lines[0], "describe group grp-none: GROUP_ID_NOT_FOUND") || !strings.Contains(out.String(), "grp-a ") {
		t.Fatalf("describe missing group: %q\n%s", lines, out.String())
	}

	out.Reset()
	must(t, GroupDelete(ctx, env, []string{group}))
	if out.String() != "Deleted group grp-a.\n" {
		t.Fatalf("delete printed %q", out.String())
	}
	jout.Reset()
	err = GroupDelete(ctx, jenv, []string{group})
	if !errors.Is(err, kerr.GroupIDNotFound) {
		t.Fatalf("delete again: %v", err)
	}
	golden(t, "group_delete.json", jout.String())
}

// TestGroupDescribeIdleMember describes a group with more members than
// partitions: the member without one gets a row of its own.
func TestGroupDescribeIdleMember(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"grp-one"}, Partitions: 1, ReplicationFactor: 1}))
	stop1 := startMember(t, "grp-idle", "grp-one", true)
	defer stop1()
	stop2 := startMember(t, "grp-idle", "grp-one", false)
	defer stop2()
	waitMembers(t, "grp-idle", "Stable", 2)
	out.Reset()
	must(t, GroupDescribe(ctx, env, []string{"grp-idle"}, GroupOffsets))
	lines := strings.Split(strings.TrimSuffix(normalizeGroup(out.String()), "\n"), "\n")
	idle := regexp.MustCompile(`^grp-idle +- +- +- +- +- +member-one-0{8}-0{4}-0{4}-0{4}-0{12} +/127\.0\.0\.1 +member-one$`)
	held := regexp.MustCompile(`^grp-idle +grp-one +0 +- +0 +- +member-one-0{8}-0{4}-0{4}-0{4}-0{12} +/127\.0\.0\.1 +member-one$`)
	if len(lines) != 3 || !held.MatchString(lines[1]) || !idle.MatchString(lines[2]) {
		t.Fatalf("describe:\n%s", strings.Join(lines, "\n"))
	}
}

func indexGroup(l []groupListing, name string) int {
	for i, g := range l {
		if g.Group == name {
			return i
		}
	}
	return -1
}

// TestGroupResetProgress resets many partitions with the bar forced on: it
// ends full, on a line of its own, and stdout holds only the table.
func TestGroupResetProgress(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"grp-many"}, Partitions: 40, ReplicationFactor: 1}))
	var bar strings.Builder
	env.Progress, env.forceProgress = &bar, true
	out.Reset()
	must(t, GroupResetOffsets(ctx, env, ResetOptions{Group: "grp-many-g", Topics: []string{"grp-many"},
		To: ResetTarget{Kind: ResetToLatest}, Execute: true}))
	if !strings.HasSuffix(bar.String(), "] 100% 40/40 partitions\x1b[K\n") {
		t.Fatalf("progress %q", bar.String())
	}
	if n := strings.Count(out.String(), "\n"); n != 41 || strings.Contains(out.String(), "\r") {
		t.Fatalf("output has %d lines:\n%s", n, out.String())
	}
}

func TestGroupUsageErrors(t *testing.T) {
	ctx := testCtx(t)
	env, _ := testEnv(t, Text)
	earliest := ResetTarget{Kind: ResetToEarliest}
	for name, err := range map[string]error{
		"reset no group":          GroupResetOffsets(ctx, env, ResetOptions{Topics: []string{"t"}, To: earliest}),
		"reset no topic":          GroupResetOffsets(ctx, env, ResetOptions{Group: "g", To: earliest}),
		"reset topic and all":     GroupResetOffsets(ctx, env, ResetOptions{Group: "g", Topics: []string{"t"}, AllTopics: true, To: earliest}),
		"reset no target":         GroupResetOffsets(ctx, env, ResetOptions{Group: "g", AllTopics: true}),
		"reset negative offset":   GroupResetOffsets(ctx, env, ResetOptions{Group: "g", AllTopics: true, To: ResetTarget{Kind: ResetToOffset, Offset: -1}}),
		"reset zero duration":     GroupResetOffsets(ctx, env, ResetOptions{Group: "g", AllTopics: true, To: ResetTarget{Kind: ResetByDuration}}),
		"reset bad partition":     GroupResetOffsets(ctx, env, ResetOptions{Group: "g", Topics: []string{"t:x"}, To: earliest}),
		"reset empty topic name":  GroupResetOffsets(ctx, env, ResetOptions{Group: "g", Topics: []string{":1"}, To: earliest}),
		"delete no group":         GroupDelete(ctx, env, nil),
		"delete-offsets no topic": GroupDeleteOffsets(ctx, env, "g", nil),
		"delete-offsets no group": GroupDeleteOffsets(ctx, env, "", []string{"t"}),
		"bad state": func() error {
			_, err := ParseGroupStates([]string{"stable,Sleeping"})
			return err
		}(),
	} {
		if !errors.Is(err, ErrUsage) {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}

	// Unknown topics and partitions name what is missing.
	err := GroupResetOffsets(ctx, env, ResetOptions{Group: "g", Topics: []string{"grp-no-such"}, To: earliest})
	if !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("reset of an unknown topic: %v", err)
	}
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"grp-two"}, Partitions: 2, ReplicationFactor: 1}))
	err = GroupDeleteOffsets(ctx, env, "g", []string{"grp-two:5"})
	if err == nil || !strings.Contains(err.Error(), "topic grp-two has no partition 5 (it has 2)") {
		t.Errorf("delete-offsets of an unknown partition: %v", err)
	}
}

func TestParseGroupStates(t *testing.T) {
	got, err := ParseGroupStates([]string{"stable, empty", "PREPARINGREBALANCE", ""})
	must(t, err)
	if strings.Join(got, ",") != "Stable,Empty,PreparingRebalance" {
		t.Fatalf("states %q", got)
	}
}

func TestParseTopicSpecs(t *testing.T) {
	specs, err := parseTopicSpecs([]string{"a:2,0", "b", "a:1", "b:4", "c:3"})
	must(t, err)
	// A bare name means every partition, whatever lists come with it.
	want := topicSpecs{"a": {2, 0, 1}, "b": nil, "c": {3}}
	if !maps.EqualFunc(specs, want, func(x, y []int32) bool { return (x == nil) == (y == nil) && slices.Equal(x, y) }) {
		t.Fatalf("specs %v, want %v", specs, want)
	}
}

func TestParseResetTimes(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"90m": 90 * time.Minute, "1h30m": 90 * time.Minute, "PT1H30M": 90 * time.Minute,
		"P1DT12H": 36 * time.Hour, "pt0.5s": 500 * time.Millisecond, "P2D": 48 * time.Hour, "PT10S": 10 * time.Second,
	} {
		got, err := ParseResetDuration(in)
		if err != nil || got != want {
			t.Errorf("duration %q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "P", "PT", "-5m", "0s", "PT0S", "1 hour", "P1H", "PT1D"} {
		if _, err := ParseResetDuration(in); !errors.Is(err, ErrUsage) {
			t.Errorf("duration %q: %v, want a usage error", in, err)
		}
	}
	for in, want := range map[string]time.Time{
		"2024-05-01T10:00:00Z":          time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC),
		"2024-05-01T12:00:00.250+02:00": time.Date(2024, 5, 1, 10, 0, 0, 250e6, time.UTC),
		"2024-05-01T10:00:00":           time.Date(2024, 5, 1, 10, 0, 0, 0, time.Local),
		"2024-05-01T10:00:00.123":       time.Date(2024, 5, 1, 10, 0, 0, 123e6, time.Local),
	} {
		got, err := ParseResetDatetime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("datetime %q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "yesterday", "2024-05-01", "2024-13-01T00:00:00Z"} {
		if _, err := ParseResetDatetime(in); !errors.Is(err, ErrUsage) {
			t.Errorf("datetime %q: %v, want a usage error", in, err)
		}
	}
}
