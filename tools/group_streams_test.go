package tools

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest/await"
)

// joinStreamsGroup makes member m1 of process p1 join streams group group
// on topic with raw StreamsGroupHeartbeat requests, heartbeating until it
// holds every task; leave makes it leave.
func joinStreamsGroup(t *testing.T, group, topic string, tasks int) (leave func()) {
	t.Helper()
	ctx := testCtx(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker.addr), kgo.ClientID("streams-one"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	var c kadm.FindCoordinatorResponse
	if !await.Poll(30*time.Second, func() bool {
		c = kadm.NewClient(cl).FindGroupCoordinators(ctx, group)[group]
		return c.Err == nil
	}) {
		t.Fatalf("find coordinator: %v", c.Err)
	}
	coord := c.NodeID
	b := cl.Broker(int(coord))
	epoch, owned := int32(0), []kmsg.TaskIDs{}
	// The member heartbeats until it owns every task.
	await.True(t, 30*time.Second, func() bool {
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = group, "m1", epoch, -1
		if epoch == 0 {
			top := kmsg.NewStreamsGroupHeartbeatRequestTopology()
			st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
			st.SubtopologyID, st.SourceTopics = "0", []string{topic}
			top.Subtopologies = append(top.Subtopologies, st)
			p := "p1"
			r.Topology, r.ProcessID, r.RebalanceTimeoutMillis = &top, &p, 30000
			r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		} else {
			r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = owned, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		}
		resp, err := r.RequestWith(ctx, b)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil && !kerr.IsRetriable(err) {
			t.Fatalf("streams heartbeat: %v", err)
		}
		if err == nil {
			epoch = resp.MemberEpoch
			if resp.ActiveTasks != nil {
				owned = resp.ActiveTasks
			}
			n := 0
			for _, ts := range owned {
				n += len(ts.Partitions)
			}
			return n == tasks
		}
		return false
	}, "the streams member's tasks")
	return func() {
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = group, "m1", -1, -1
		if resp, err := r.RequestWith(context.Background(), b); err != nil || resp.ErrorCode != 0 {
			t.Errorf("leave: %v %v", err, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
}

// TestGroupStreams lists and describes a streams group: its type, its
// members' processes and tasks, the partitions its tasks read and their
// committed offsets; then deletes it once empty.
func TestGroupStreams(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	// Names of their own, so the test runs again on the same broker.
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	app, in := "st-app-"+suffix, "st-in-"+suffix
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{in}, Partitions: 2, ReplicationFactor: 1}))
	leave := joinStreamsGroup(t, app, in, 2)

	out.Reset()
	must(t, GroupList(ctx, env, nil))
	if !regexp.MustCompile(`(?m)^` + app + ` +streams +streams +Stable$`).MatchString(out.String()) {
		t.Fatalf("list:\n%s", out)
	}
	out.Reset()
	must(t, GroupDescribe(ctx, env, []string{app}, GroupMembers))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !regexp.MustCompile(`^`+app+` +m1 +p1 +\S+ +streams-one +\d+ +0_0,0_1 +- +-$`).MatchString(lines[1]) {
		t.Fatalf("describe --members:\n%s", out)
	}
	out.Reset()
	must(t, GroupDescribe(ctx, env, []string{app}, GroupOffsets))
	if !regexp.MustCompile(`(?m)^` + app + ` +` + in + ` +1 +- +0 +- +m1 +\S+ +streams-one$`).MatchString(out.String()) {
		t.Fatalf("describe:\n%s", out)
	}

	jenv, jout := testEnv(t, JSON)
	must(t, GroupDescribe(ctx, jenv, []string{app}, GroupMembers))
	var descs []groupDescription
	if err := json.Unmarshal(jout.Bytes(), &descs); err != nil {
		t.Fatal(err)
	}
	if len(descs) != 1 || descs[0].State != "Stable" || len(descs[0].Members) != 1 || descs[0].Members[0].ProcessID != "p1" ||
		len(descs[0].Members[0].ActiveTasks) != 1 {
		t.Fatalf("json: %s", jout)
	}

	leave()
	out.Reset()
	must(t, GroupDelete(ctx, env, []string{app}))
	out.Reset()
	if err := GroupDescribe(ctx, env, []string{app}, GroupMembers); err == nil || !strings.Contains(err.Error(), "GROUP_ID_NOT_FOUND") {
		t.Fatalf("describe after delete: %v", err)
	}
}
