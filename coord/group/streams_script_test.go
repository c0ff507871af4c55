package group

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Streams group (KIP-1071) script commands, in testdata/streams. A member
// is a model Kafka Streams client: it remembers its epoch and the tasks it
// was last assigned, and reports those as owned in each heartbeat unless
// told otherwise.
//
//	streams-topology [epoch=N]         the topology members join with, one
//	<id> [sources=(a,b)] [regex=(x.*)] [changelogs=(x)] [sinks=(r)] [repartition=(r:4)] [copartition=(0,1)]
//	                                   subtopology per input line; a
//	                                   internal topic is name or name:partitions;
//	                                   copartition indexes the sources
//	streams-config [standbys=N] [delay=3s] [interval=1s]  group.streams.num.standby.replicas,
//	                                   initial.rebalance.delay.ms and assignment.interval.ms
//	                                   (kept over restarts; 0 by default)
//	streams-group-config [key=value ...]  group-config (script_test.go)
//	streams-heartbeat member=m1 [process=p1] [epoch=N] [rebalance=30s]
//	                  [owned=(0-1,1-0)] [ignore-assignment] [endpoint=host:port]
//	                  [shutdown] [no-topology] [topology] [instance=i1]
//	                  [warmup=(0-1)] [null-tasks] [rack=r1] [show-interval]
//	                  [task-offsets=(0-1:100)] [task-end-offsets=(0-1:120)]
//	                                   warmup: owned warm-up tasks reported;
//	                                   null-tasks: no task lists at all
//	streams-leave member=m1 [epoch=-1]
//	streams-describe                   the members' epochs, tasks and targets
//
// Tasks print as subtopology[partitions]: 0[0 1] 1[2]. A response lists
// its status codes by Kafka's names and the internal topics the broker is
// asked to create, as name:partitions.

// streamsScript is the streams part of a script's state.
type streamsScript struct {
	topology *kmsg.StreamsGroupHeartbeatRequestTopology
	standbys int32
	delay    int64 // ms, group.streams.initial.rebalance.delay.ms
	interval int64 // ms, group.streams.assignment.interval.ms
	members  map[string]*streamsScriptMember
}

// streamsScriptMember is a model Kafka Streams client.
type streamsScriptMember struct {
	epoch   int32
	process string
	owned   taskAssignment
}

var streamsStatusNames = map[int8]string{0: "STALE_TOPOLOGY", 1: "MISSING_SOURCE_TOPICS", 2: "INCORRECTLY_PARTITIONED_TOPICS",
	3: "MISSING_INTERNAL_TOPICS", 4: "SHUTDOWN_APPLICATION", 5: "ASSIGNMENT_DELAYED"}

func (s *script) streamsCommand(t *testing.T, d *datadriven.TestData) bool {
	switch d.Cmd {
	case "streams-topology":
		s.streams.topology = parseTopology(t, int32(argInt(t, d, "epoch", 0)), d.Input)
	case "streams-config":
		s.streams.standbys = int32(argInt(t, d, "standbys", int64(s.streams.standbys)))
		s.streams.delay = int64(argMs(t, d, "delay", time.Duration(s.streams.delay)*time.Millisecond))
		s.streams.interval = int64(argMs(t, d, "interval", time.Duration(s.streams.interval)*time.Millisecond))
		s.c.policy.Streams.NumStandbys, s.c.policy.Streams.InitialDelay = s.streams.standbys, s.streams.delay
		s.c.policy.Streams.AssignmentInterval = s.streams.interval
	case "streams-group-config":
		s.setGroupConfigs(d)
	case "streams-heartbeat":
		s.streamsHeartbeat(t, d)
	case "streams-leave":
		id := argString(d, "member", "")
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch = "g", id, int32(argInt(t, d, "epoch", -1))
		res := s.c.StreamsGroupHeartbeat(r, "client-"+id, "/127.0.0.1", s.groupConfigs)
		s.respond("leave %s: %s epoch=%d", id, errName(res.Err), res.Response.MemberEpoch)
		delete(s.streams.members, id)
	case "streams-describe":
	default:
		return false
	}
	return true
}

// parseTopology reads a topology's subtopologies, one per line.
func parseTopology(t *testing.T, epoch int32, input string) *kmsg.StreamsGroupHeartbeatRequestTopology {
	top := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	top.Epoch = epoch
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID = fields[0]
		st.SourceTopics, st.SourceTopicRegex, st.RepartitionSinkTopics = []string{}, []string{}, []string{}
		st.StateChangelogTopics, st.RepartitionSourceTopics = []kmsg.TopicInfo{}, []kmsg.TopicInfo{}
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				t.Fatalf("subtopology %s: %q: want key=(values)", st.SubtopologyID, f)
			}
			var vals []string
			for _, x := range strings.Split(strings.Trim(v, "()"), ",") {
				if x = strings.TrimSpace(x); x != "" {
					vals = append(vals, x)
				}
			}
			switch k {
			case "sources":
				st.SourceTopics = vals
			case "sinks":
				st.RepartitionSinkTopics = vals
			case "regex":
				st.SourceTopicRegex = vals
			case "changelogs":
				st.StateChangelogTopics = parseTopicInfos(t, vals)
			case "repartition":
				st.RepartitionSourceTopics = parseTopicInfos(t, vals)
			case "copartition":
				g := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup()
				for _, x := range vals {
					i, err := strconv.Atoi(x)
					if err != nil {
						t.Fatalf("copartition %q: %v", x, err)
					}
					g.SourceTopics = append(g.SourceTopics, int16(i))
				}
				st.CopartitionGroups = append(st.CopartitionGroups, g)
			default:
				t.Fatalf("subtopology %s: unknown key %q", st.SubtopologyID, k)
			}
		}
		top.Subtopologies = append(top.Subtopologies, st)
	}
	return &top
}

// parseTopicInfos reads internal topics, name or name:partitions.
func parseTopicInfos(t *testing.T, vals []string) []kmsg.TopicInfo {
	out := []kmsg.TopicInfo{}
	for _, n := range vals {
		ti := kmsg.NewTopicInfo()
		name, parts, _ := strings.Cut(n, ":")
		ti.Topic = name
		if parts != "" {
			p, err := strconv.Atoi(parts)
			if err != nil {
				t.Fatalf("internal topic %q: %v", n, err)
			}
			ti.NumPartitions = int32(p)
		}
		out = append(out, ti)
	}
	return out
}

func (s *script) streamsHeartbeat(t *testing.T, d *datadriven.TestData) {
	if s.streams.members == nil {
		s.streams.members = map[string]*streamsScriptMember{}
	}
	id := argString(d, "member", "")
	m := s.streams.members[id]
	if m == nil {
		m = &streamsScriptMember{process: "process-" + id}
		s.streams.members[id] = m
	}
	if p := argString(d, "process", ""); p != "" {
		m.process = p
	}
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	r.Group, r.MemberID = "g", id
	r.MemberEpoch = int32(argInt(t, d, "epoch", int64(m.epoch)))
	r.RebalanceTimeoutMillis = -1
	if r.MemberEpoch == 0 {
		r.RebalanceTimeoutMillis = argMs(t, d, "rebalance", 30*time.Second)
		// A joining Kafka Streams client reports empty task lists.
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		if !hasArg(d, "no-topology") {
			r.Topology = s.streams.topology
		}
		process := m.process
		r.ProcessID = &process
		if ep := argString(d, "endpoint", ""); ep != "" {
			host, port, _ := strings.Cut(ep, ":")
			n, _ := strconv.Atoi(port)
			r.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: host, Port: uint16(n)}
		}
	} else {
		owned := m.owned
		if list, ok := argList(d, "owned"); ok {
			owned = taskAssignment{active: parseTasks(t, list), standby: taskSet{}, warmup: taskSet{}}
		}
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = taskIDs(owned.active), taskIDs(owned.standby), taskIDs(owned.warmup)
	}
	if list, ok := argList(d, "warmup"); ok {
		r.WarmupTasks = taskIDs(parseTasks(t, list))
	}
	if hasArg(d, "null-tasks") {
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = nil, nil, nil
	}
	if list, ok := argList(d, "task-offsets"); ok {
		r.TaskOffsets = parseTaskOffsets(t, list)
	}
	if list, ok := argList(d, "task-end-offsets"); ok {
		r.TaskEndOffsets = parseTaskOffsets(t, list)
	}
	if rack, ok := argList(d, "rack"); ok {
		r.RackID = new(strings.Join(rack, ""))
	}
	if hasArg(d, "topology") {
		r.Topology = s.streams.topology
	}
	if inst := argString(d, "instance", ""); inst != "" {
		r.InstanceID = &inst
	}
	r.ShutdownApplication = hasArg(d, "shutdown")
	res := s.c.StreamsGroupHeartbeat(r, "client-"+id, "/127.0.0.1", s.groupConfigs)
	resp := res.Response
	if res.Err != nil {
		line := fmt.Sprintf("heartbeat %s: %s", id, errName(res.Err))
		if resp.ErrorMessage != nil {
			line += fmt.Sprintf(" %q", *resp.ErrorMessage)
		}
		s.respond("%s", line)
		return
	}
	m.epoch = resp.MemberEpoch
	line := fmt.Sprintf("heartbeat %s: NONE epoch=%d", id, resp.MemberEpoch)
	if hasArg(d, "show-interval") {
		line += fmt.Sprintf(" interval=%dms", resp.HeartbeatIntervalMillis)
	}
	if resp.ActiveTasks != nil {
		got := taskAssignment{active: taskSetOf(resp.ActiveTasks), standby: taskSetOf(resp.StandbyTasks), warmup: taskSetOf(resp.WarmupTasks)}
		line += " active=" + formatTasks(got.active)
		if got.standby.size() > 0 {
			line += " standby=" + formatTasks(got.standby)
		}
		if got.warmup.size() > 0 {
			line += " warmup=" + formatTasks(got.warmup)
		}
		if !hasArg(d, "ignore-assignment") {
			m.owned = got
		}
	}
	for _, st := range resp.Status {
		line += fmt.Sprintf("\n  status %s: %s", streamsStatusNames[st.StatusCode], st.StatusDetail)
	}
	for _, c := range res.Create {
		line += fmt.Sprintf("\n  create %s:%d", c.Name, c.Partitions)
	}
	s.respond("%s", line)
}

// parseTasks reads "0-1" (subtopology 0, partition 1) names.
func parseTasks(t *testing.T, names []string) taskSet {
	out := taskSet{}
	for _, n := range names {
		i := strings.LastIndexByte(n, '-')
		p, err := strconv.Atoi(n[i+1:])
		if i < 0 || err != nil {
			t.Fatalf("task %q: want subtopology-partition", n)
		}
		out.add(n[:i], int32(p))
	}
	out.normalize()
	return out
}

// parseTaskOffsets reads "0-1:100" (subtopology 0, partition 1, offset
// 100) names.
func parseTaskOffsets(t *testing.T, names []string) []kmsg.TaskOffset {
	out := []kmsg.TaskOffset{}
	for _, n := range names {
		task, off, _ := strings.Cut(n, ":")
		i := strings.LastIndexByte(task, '-')
		p, perr := strconv.Atoi(task[i+1:])
		o, oerr := strconv.ParseInt(off, 10, 64)
		if i < 0 || perr != nil || oerr != nil {
			t.Fatalf("task offset %q: want subtopology-partition:offset", n)
		}
		to := kmsg.NewTaskOffset()
		to.SubtopologyID, to.Partition, to.Offset = task[:i], int32(p), o
		out = append(out, to)
	}
	return out
}

// formatTasks writes tasks as subtopology[partitions]: 0[0 1] 1[2].
func formatTasks(s taskSet) string {
	ids := s.ids()
	if len(ids) == 0 {
		return "[]"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		ps := make([]string, len(s[id]))
		for j, p := range s[id] {
			ps[j] = strconv.Itoa(int(p))
		}
		parts[i] = id + "[" + strings.Join(ps, " ") + "]"
	}
	return strings.Join(parts, " ")
}

func formatAssignment(a taskAssignment) string {
	out := "active=" + formatTasks(a.active)
	if a.standby.size() > 0 {
		out += " standby=" + formatTasks(a.standby)
	}
	if a.warmup.size() > 0 {
		out += " warmup=" + formatTasks(a.warmup)
	}
	return out
}

var streamsRecordNames = map[int16]string{
	streamsEpochType:        "StreamsGroupMetadata",
	streamsMemberType:       "StreamsGroupMemberMetadata",
	streamsTargetEpochType:  "StreamsGroupTargetAssignmentMetadata",
	streamsTargetMemberType: "StreamsGroupTargetAssignmentMember",
	streamsCurrentType:      "StreamsGroupCurrentMemberAssignment",
	streamsTopologyType:     "StreamsGroupTopology",
}

var streamsStateNames = [...]string{"STABLE", "UNREVOKED_TASKS", "UNRELEASED_TASKS"}

func (s *script) formatStreamsRecord(b *strings.Builder, r *streamsRecord) {
	b.WriteString(streamsRecordNames[r.typ])
	if r.member != "" {
		b.WriteString(" " + r.member)
	}
	b.WriteString(": ")
	if r.tombstone {
		b.WriteString("tombstone\n")
		return
	}
	switch r.typ {
	case streamsEpochType:
		fmt.Fprintf(b, "epoch=%d validated-topology=%d standbys=%d\n", r.epoch, r.validatedEpoch, r.standbys)
	case streamsTargetEpochType:
		s.formatTargetMetadata(b, r.epoch, r.assignedAt)
	case streamsTopologyType:
		ids := make([]string, len(r.topology.subtopologies))
		for i, st := range r.topology.subtopologies {
			ids[i] = st.id
		}
		fmt.Fprintf(b, "epoch=%d subtopologies=[%s]\n", r.topology.epoch, strings.Join(ids, " "))
	case streamsMemberType:
		m := &r.meta
		fmt.Fprintf(b, "process=%s topology-epoch=%d rebalance=%s", m.processID, m.topologyEpoch, time.Duration(m.rebalanceTimeout)*time.Millisecond)
		if m.endpoint != nil {
			fmt.Fprintf(b, " endpoint=%s:%d", m.endpoint.host, m.endpoint.port)
		}
		b.WriteByte('\n')
	case streamsTargetMemberType:
		fmt.Fprintf(b, "%s\n", formatAssignment(r.target))
	case streamsCurrentType:
		c := &r.current
		fmt.Fprintf(b, "epoch=%d previous=%d state=%s %s", c.epoch, c.previousEpoch, streamsStateNames[c.state], formatAssignment(c.assigned))
		if !c.revoking.empty() {
			fmt.Fprintf(b, " revoking=(%s)", formatAssignment(c.revoking))
		}
		b.WriteByte('\n')
	}
}

func (s *script) printStreamsState(b *strings.Builder, g *Group, members bool) {
	sg := g.streams
	fmt.Fprintf(b, "state: %s epoch=%d assignment-epoch=%d", g.State(), sg.epoch, sg.assignmentEpoch)
	if len(g.offsets) > 0 {
		fmt.Fprintf(b, " offsets=%d", len(g.offsets))
	}
	b.WriteByte('\n')
	if !members {
		return
	}
	for _, m := range sg.sortedMembers() {
		fmt.Fprintf(b, "  member %s process=%s epoch=%d %s", m.id, m.processID, m.current.epoch, formatAssignment(m.current.assigned))
		if !m.current.revoking.empty() {
			fmt.Fprintf(b, " revoking=(%s)", formatAssignment(m.current.revoking))
		}
		fmt.Fprintf(b, " target=(%s)\n", formatAssignment(sg.target[m.id]))
	}
}

// TestStreamsAssignorBalance checks the assignor's promises over many
// shapes: active tasks spread within one of each other, every task active
// exactly once, standbys never on the active's process, and a member that
// keeps its share keeps its tasks.
func TestStreamsAssignorBalance(t *testing.T) {
	for members := 1; members <= 7; members++ {
		for tasks := 0; tasks <= 13; tasks++ {
			for standbys := 0; standbys <= 2; standbys++ {
				var ms []streamsAssignee
				for i := range members {
					ms = append(ms, streamsAssignee{id: fmt.Sprintf("m%d", i), process: fmt.Sprintf("p%d", i/2)})
				}
				topo := map[string]int32{"0": int32(tasks)}
				out := assignStreams(topo, ms, standbys)
				checkStreamsAssignment(t, topo, ms, out)
				// Again with the result as the previous assignment: nothing moves.
				for i := range ms {
					ms[i].prev = out[ms[i].id]
				}
				again := assignStreams(topo, ms, standbys)
				for _, m := range ms {
					if !again[m.id].active.equal(out[m.id].active) {
						t.Fatalf("%d members, %d tasks: %s moved from %s to %s", members, tasks, m.id, formatTasks(out[m.id].active), formatTasks(again[m.id].active))
					}
				}
			}
		}
	}
}

func checkStreamsAssignment(t *testing.T, topo map[string]int32, ms []streamsAssignee, out map[string]taskAssignment) {
	t.Helper()
	owner := map[task]string{}
	lo, hi := 1<<30, 0
	process := map[string]string{}
	for _, m := range ms {
		process[m.id] = m.process
		a := out[m.id]
		n := a.active.size()
		lo, hi = min(lo, n), max(hi, n)
		for sub, ps := range a.active {
			for _, p := range ps {
				if prev, dup := owner[task{sub, p}]; dup {
					t.Fatalf("task %s-%d active on %s and %s", sub, p, prev, m.id)
				}
				owner[task{sub, p}] = m.id
			}
		}
	}
	if hi-lo > 1 {
		t.Fatalf("active tasks unbalanced: %d to %d", lo, hi)
	}
	total := 0
	for _, n := range topo {
		total += int(n)
	}
	if len(owner) != total {
		t.Fatalf("%d of %d tasks assigned", len(owner), total)
	}
	for _, m := range ms {
		for sub, ps := range out[m.id].standby {
			for _, p := range ps {
				if process[owner[task{sub, p}]] == m.process {
					t.Fatalf("standby %s-%d on %s, the process of its active", sub, p, m.process)
				}
			}
		}
	}
}

// TestStreamsAssignorProcessSticky: tasks a member must give up go to a
// member of its own process first, where their state is.
func TestStreamsAssignorProcessSticky(t *testing.T) {
	ms := []streamsAssignee{
		{id: "a1", process: "pa", prev: taskAssignment{active: taskSet{"0": {0, 1, 2, 3}}}},
		{id: "a2", process: "pa"},
		{id: "b1", process: "pb", prev: taskAssignment{active: taskSet{"0": {4, 5, 6, 7}}}},
		{id: "b2", process: "pb"},
	}
	out := assignStreams(map[string]int32{"0": 8}, ms, 0)
	checkStreamsAssignment(t, map[string]int32{"0": 8}, ms, out)
	for _, m := range ms {
		for _, p := range out[m.id].active["0"] {
			if (p < 4) != (m.process == "pa") {
				t.Fatalf("task 0_%d left its process for %s: %s", p, m.id, formatAssignment(out[m.id]))
			}
		}
	}
}
