package group

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestStreamsReconciliationModel drives the streams heartbeat logic with
// random joins, heartbeats, leaves, topic growth and standby changes from
// model clients that apply every assignment at once, and checks after
// every step what KIP-1071 promises: a task is active on at most one
// member, and a process never holds a task both as active and as standby
// or warm-up; then, once the changes stop, that heartbeats bring every
// member to its target and the group to Stable.
func TestStreamsReconciliationModel(t *testing.T) {
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runStreamsModel(t, seed) })
	}
}

type modelClient struct {
	id, process string
	epoch       int32
	owned       taskAssignment
}

func runStreamsModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	sg := newStreamsGroup()
	topics := &testTopics{}
	addTopic := func(name string, n int32) {
		next := &testTopics{version: topics.version + 1}
		for _, x := range topics.topics {
			if x.Name != name {
				next.topics = append(next.topics, x)
			}
		}
		next.topics = append(next.topics, TopicInfo{Name: name, ID: tidOf(name), Partitions: n})
		topics = next
	}
	addTopic("a", 3)
	addTopic("b", 2)
	addTopic("app-store-changelog", 3)
	top := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	for i, src := range []string{"a", "b"} {
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID, st.SourceTopics = fmt.Sprint(i), []string{src}
		if i == 0 {
			cl := kmsg.NewTopicInfo()
			cl.Topic = "app-store-changelog"
			st.StateChangelogTopics = []kmsg.TopicInfo{cl}
		}
		top.Subtopologies = append(top.Subtopologies, st)
	}
	policy := StreamsPolicy{SessionTimeout: 45000, HeartbeatInterval: 5000, MaxSize: 1 << 20}
	clients := map[string]*modelClient{}
	var order []string
	now := int64(1000)

	heartbeat := func(c *modelClient) {
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = "g", c.id, c.epoch, -1
		if c.epoch == 0 {
			r.RebalanceTimeoutMillis, r.Topology, r.ProcessID = 30000, &top, &c.process
			r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		} else {
			r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = taskIDs(c.owned.active), taskIDs(c.owned.standby), taskIDs(c.owned.warmup)
		}
		if msg, err := validateStreamsHeartbeat(r); err != nil {
			t.Fatalf("invalid request: %s", msg)
		}
		env := streamsEnv{now: now, policy: &policy, topics: topics, clientID: c.id, clientHost: "/h"}
		out := sg.heartbeat(&env, r)
		if err := out.res.Err; err != nil {
			t.Fatalf("heartbeat of %s at epoch %d: %s", c.id, c.epoch, errName(err))
		}
		for i := range out.recs {
			sg.replay(&out.recs[i])
		}
		sg.apply(&out)
		resp := out.res.Response
		c.epoch = resp.MemberEpoch
		if resp.ActiveTasks != nil {
			c.owned = taskAssignment{taskSetOf(resp.ActiveTasks), taskSetOf(resp.StandbyTasks), taskSetOf(resp.WarmupTasks)}
		}
	}
	check := func(step int) {
		active := map[task]string{}
		byProcess := map[string]map[task]string{} // process -> task -> "active"/"passive"
		for _, m := range sg.members {
			p := byProcess[m.processID]
			if p == nil {
				p = map[task]string{}
				byProcess[m.processID] = p
			}
			for _, s := range []taskSet{m.current.assigned.active, m.current.revoking.active} {
				for sub, ps := range s {
					for _, part := range ps {
						k := task{sub, part}
						if other, dup := active[k]; dup && other != m.id {
							t.Fatalf("step %d: task %s_%d active on %s and %s", step, sub, part, other, m.id)
						}
						active[k] = m.id
						if p[k] == "passive" {
							t.Fatalf("step %d: process %s holds task %s_%d as active and passive", step, m.processID, sub, part)
						}
						p[k] = "active"
					}
				}
			}
		}
		for _, m := range sg.members {
			p := byProcess[m.processID]
			for _, s := range []taskSet{m.current.assigned.standby, m.current.assigned.warmup, m.current.revoking.standby, m.current.revoking.warmup} {
				for sub, ps := range s {
					for _, part := range ps {
						if p[task{sub, part}] == "active" {
							t.Fatalf("step %d: process %s holds task %s_%d as active and passive", step, m.processID, sub, part)
						}
					}
				}
			}
		}
	}

	for step := range 300 {
		now += 100
		switch op := rng.IntN(20); {
		case op < 3 && len(order) < 6:
			id := fmt.Sprintf("m%d", step)
			c := &modelClient{id: id, process: fmt.Sprintf("p%d", rng.IntN(3))}
			clients[id] = c
			order = append(order, id)
			heartbeat(c)
		case op == 3 && len(order) > 0:
			i := rng.IntN(len(order))
			c := clients[order[i]]
			out := sg.leave(&kmsg.StreamsGroupHeartbeatRequest{Group: "g", MemberID: c.id, MemberEpoch: -1})
			for j := range out.recs {
				sg.replay(&out.recs[j])
			}
			delete(clients, c.id)
			order = append(order[:i], order[i+1:]...)
		case op == 4:
			name := []string{"a", "b"}[rng.IntN(2)]
			if ti, _ := topics.ByName(name); ti.Partitions < 6 {
				addTopic(name, ti.Partitions+1)
				if name == "a" {
					addTopic("app-store-changelog", ti.Partitions+1)
				}
			}
		case op == 5:
			policy.NumStandbys = int32(rng.IntN(3))
		default:
			if len(order) > 0 {
				heartbeat(clients[order[rng.IntN(len(order))]])
			}
		}
		check(step)
	}
	// Quiet: heartbeats bring everyone to the target.
	for round := range 20 {
		for _, id := range order {
			heartbeat(clients[id])
		}
		check(1000 + round)
	}
	if len(order) > 0 && sg.stateOf() != Stable {
		for _, m := range sg.sortedMembers() {
			t.Logf("%s epoch %d state %d %s target %s", m.id, m.current.epoch, m.current.state, formatAssignment(m.current.assigned), formatAssignment(sg.target[m.id]))
		}
		t.Fatalf("group %s after quiet heartbeats (epoch %d, assignment epoch %d)", sg.stateOf(), sg.epoch, sg.assignmentEpoch)
	}
	for _, m := range sg.members {
		if !m.current.assigned.equal(sg.target[m.id]) {
			t.Fatalf("%s holds %s, target %s", m.id, formatAssignment(m.current.assigned), formatAssignment(sg.target[m.id]))
		}
	}
}
