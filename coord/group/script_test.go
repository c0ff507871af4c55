package group

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/shards"
	"kzero/log"
	krecord "kzero/record"
	"kzero/replica"
)

// Script tests: the scripts in testdata/classic and testdata/consumer are
// sequences of requests to one group, "g", and of clock ticks; after each
// step they list the responses that arrived, the records the coordinator
// wrote to __consumer_offsets, and the group's state. They run the real
// Coordinator on a real partition in a temporary dir, inside a
// testing/synctest bubble: time is fake and only moves with "tick", the
// coordinator's own timers (session, rebalance and join timeouts) fire as
// they would, and every step ends once nothing in the bubble can run.
//
// Classic group commands (JoinGroup v4+ unless v3, timeouts in Go syntax):
//
//	join client=c1 [member=c1-1] [instance=i1] [protocols=(range,roundrobin)]
//	     [metadata=...] [type=consumer] [session=10s] [rebalance=30s] [v3] [v9]
//	sync member=c1-1 generation=1 [instance=i1] [assign=(c1-1:p0,c2-2:p1)]
//	heartbeat member=c1-1 generation=1 [instance=i1]
//	leave [member=c1-1] [instance=i1]
//	commit member=c1-1 generation=1 offsets=(a-0:5)
//
// Consumer group (KIP-848) commands; a member is a model client that
// remembers its epoch and the partitions it was last assigned, and reports
// those as owned unless told otherwise:
//
//	topics a=6 b=3                     the cluster's topics (names and partition counts)
//	heartbeat member=m1 [topics=(a,b)] [epoch=N] [instance=i1] [assignor=range]
//	          [rebalance=30s] [owned=(a-0,a-1)] [ignore-assignment] [show-interval]
//	consumer-leave member=m1 [epoch=-1|-2]
//	describe                           the members' epochs, assignments and targets
//
// Both:
//
//	tick 3s                            let time pass; timers fire
//	restart                            a new coordinator loads the partition
//	group-config [key=value ...]       group g's dynamic configs
//	                                   (IncrementalAlterConfigs on GROUP g),
//	                                   all of them: none clears them
//	assignment-interval [consumer=1s] [share=1s]
//	                                   group.consumer/share.assignment.interval.ms
//	                                   (kept over restarts; 0 by default)
//
// Member ids are the client id (or instance id) and a counter: c1-1.
// Responses are written "join c1: ..." or "sync c1-1: ...", with the
// Kafka error name, NONE for success, after the records written before
// them ("write ..."). Run with -rewrite to regenerate the expected output
// after a deliberate change, and read the diff.
//
// datadriven's watchdog runs in the bubble too: a failing script logs
// "still running after 10s" for long ticks, in fake time; ignore it.

func TestClassicScripts(t *testing.T) { runScripts(t, "testdata/classic") }

func TestConsumerScripts(t *testing.T) { runScripts(t, "testdata/consumer") }

func TestStreamsScripts(t *testing.T) { runScripts(t, "testdata/streams") }
func TestShareScripts(t *testing.T)   { runScripts(t, "testdata/share") }

func runScripts(t *testing.T, dir string) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		synctest.Test(t, func(t *testing.T) {
			s := newScript(t)
			datadriven.RunTest(t, path, s.run)
		})
	})
}

// script is one script's broker: a log dir, the __consumer_offsets
// partition, the coordinator, and what the clients are waiting for.
type script struct {
	t        *testing.T
	logs     *log.Manager
	replicas *replica.Manager
	part     *replica.Partition
	c        *Coordinator
	topics   *testTopics
	start    int64 // ms, the bubble's start
	next     int64 // the next offset of the partition to print
	ids      int

	members map[string]*scriptMember // consumer protocol members by id
	// groupConfigs are group g's dynamic configs (group-config): the
	// heartbeats carry them, and a restarted coordinator reads them.
	groupConfigs map[string]string
	streams      streamsScript // streams group state (streams_script_test.go)
	// consumerInterval and shareInterval (ms, assignment-interval):
	// group.consumer/share.assignment.interval.ms, kept over restarts.
	consumerInterval, shareInterval int64
	// shareInitFails (share-init fail=...): the partitions whose share
	// state initialization fails.
	shareInitFails map[string]bool
	// shareInitCrashes (share-init crash=...): the partitions after whose
	// initialization the coordinator stops.
	shareInitCrashes map[string]bool
	// shareInitHold (share-init hold): background share state
	// initializations wait in shareInits for share-init-done.
	shareInitHold bool
	shareInits    []func()

	mu  sync.Mutex
	out strings.Builder // the step's output so far
}

// scriptMember is a model KIP-848 consumer.
type scriptMember struct {
	epoch    int32
	owned    []TopicPartitions
	instance *string
}

func newScript(t *testing.T) *script {
	cfg := log.DefaultManagerConfig(t.TempDir())
	cfg.Defaults.SegmentIndexBytes = 1 << 16
	cfg.Logger = discard()
	// The log's own background work is not what the scripts test: in
	// fake time a ticker every second would fire thousands of times.
	cfg.RetentionCheckInterval, cfg.FlushCheckInterval, cfg.CheckpointInterval = 0, 0, 0
	logs, err := log.OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	s := &script{t: t, logs: logs, replicas: replica.NewManager(1, logs), start: time.Now().UnixMilli(),
		topics: &testTopics{}, members: map[string]*scriptMember{}}
	lcfg := log.DefaultConfig()
	lcfg.SegmentIndexBytes = 1 << 16
	s.part, err = s.replicas.MakeLeader(replica.LeaderSpec{
		TP: log.TopicPartition{Topic: TopicName, Partition: 0}, ISR: []int32{1}, MinInsyncReplicas: 1, Config: lcfg})
	if err != nil {
		t.Fatal(err)
	}
	s.open()
	return s
}

// open starts a coordinator of the partition and waits for its load.
func (s *script) open() {
	s.c = New(Config{NumPartitions: 1, InitialRebalanceDelay: 3 * time.Second, Logger: discard(),
		GroupConfigs: func(group string) map[string]string {
			if group != "g" {
				return nil
			}
			return s.groupConfigs
		},
		InitializeShareState: s.initializeShareState, runShareInit: s.queueShareInit})
	s.c.policy.NewID = func() string { s.ids++; return strconv.Itoa(s.ids) }
	s.c.SetTopics(s.topics)
	s.c.policy.Streams.NumStandbys, s.c.policy.Streams.InitialDelay = s.streams.standbys, s.streams.delay
	s.c.policy.Streams.AssignmentInterval = s.streams.interval
	s.c.policy.ConsumerAssignmentInterval, s.c.policy.Share.AssignmentInterval = s.consumerInterval, s.shareInterval
	s.t.Cleanup(s.c.Close)
	<-s.c.Lead(s.part)
}

// respond records a response that arrived, after the records written
// before it.
func (s *script) respond(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.printRecords(&s.out)
	fmt.Fprintf(&s.out, format+"\n", args...)
}

func (s *script) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "share-assign":
		return shareAssignScript(t, d) // the assignor alone: no coordinator
	case "join":
		s.join(t, d)
	case "sync":
		s.sync(t, d)
	case "heartbeat":
		if hasArg(d, "generation") {
			s.classicHeartbeat(t, d)
		} else {
			s.consumerHeartbeat(t, d)
		}
	case "leave":
		s.leave(d)
	case "commit":
		s.commit(t, d)
	case "topics":
		for _, a := range d.CmdArgs {
			if len(a.Vals) != 1 {
				t.Fatalf("topics: want name=partitions, got %s", a)
			}
			n, err := strconv.Atoi(a.Vals[0])
			if err != nil {
				t.Fatalf("topics %s: %v", a, err)
			}
			s.topics.add(s.c, a.Key, int32(n))
		}
	case "consumer-leave":
		s.consumerLeave(t, d)
	case "group-config":
		s.setGroupConfigs(d)
	case "assignment-interval":
		s.consumerInterval = int64(argMs(t, d, "consumer", time.Duration(s.consumerInterval)*time.Millisecond))
		s.shareInterval = int64(argMs(t, d, "share", time.Duration(s.shareInterval)*time.Millisecond))
		s.c.policy.ConsumerAssignmentInterval, s.c.policy.Share.AssignmentInterval = s.consumerInterval, s.shareInterval
	case "share-heartbeat", "share-leave", "delete-group", "share-init", "share-init-done", "share-delete-offsets":
		s.runShare(t, d)
	case "tick":
		if len(d.CmdArgs) != 1 {
			t.Fatalf("tick: want a duration")
		}
		dur, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			t.Fatalf("tick: %v", err)
		}
		time.Sleep(dur)
	case "restart":
		s.c.Close()
		s.open()
	case "resign":
		s.c.Resign(0)
	case "lead":
		// This broker leads __consumer_offsets-0 (again) at an epoch.
		lcfg := log.DefaultConfig()
		lcfg.SegmentIndexBytes = 1 << 16
		p, err := s.replicas.MakeLeader(replica.LeaderSpec{TP: s.part.TP, LeaderEpoch: int32(argInt(t, d, "epoch", 0)),
			ISR: []int32{1}, MinInsyncReplicas: 1, Config: lcfg})
		if err != nil {
			t.Fatalf("lead: %v", err)
		}
		s.part = p
		<-s.c.Lead(p)
	case "describe":
	default:
		if !s.streamsCommand(t, d) {
			t.Fatalf("unknown command %q", d.Cmd)
		}
	}
	if !s.shareInitHold {
		s.runShareInits()
	}
	synctest.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.printRecords(&s.out)
	s.printState(&s.out, d.Cmd == "describe" || d.Cmd == "streams-describe")
	out := s.out.String()
	s.out.Reset()
	return out
}

// setGroupConfigs sets group g's dynamic configs, all of them.
func (s *script) setGroupConfigs(d *datadriven.TestData) {
	s.groupConfigs = map[string]string{}
	for _, a := range d.CmdArgs {
		s.groupConfigs[a.Key] = strings.Join(a.Vals, "")
	}
}

// Arguments.

func hasArg(d *datadriven.TestData, key string) bool {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return true
		}
	}
	return false
}

func argString(d *datadriven.TestData, key, def string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			if len(a.Vals) != 1 {
				panic(fmt.Sprintf("%s: argument %s wants one value", d.Pos, key))
			}
			return a.Vals[0]
		}
	}
	return def
}

func argList(d *datadriven.TestData, key string) ([]string, bool) {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			var out []string
			for _, v := range a.Vals {
				if v = strings.TrimSpace(v); v != "" {
					out = append(out, v)
				}
			}
			return out, true
		}
	}
	return nil, false
}

func argInt(t *testing.T, d *datadriven.TestData, key string, def int64) int64 {
	v := argString(d, key, "")
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return n
}

func argMs(t *testing.T, d *datadriven.TestData, key string, def time.Duration) int32 {
	v := argString(d, key, "")
	if v == "" {
		return int32(def.Milliseconds())
	}
	dur, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return int32(dur.Milliseconds())
}

func errName(err error) string {
	if err == nil {
		return "NONE"
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

// Classic group requests.

func (s *script) join(t *testing.T, d *datadriven.TestData) {
	client := argString(d, "client", "")
	r := &JoinRequest{
		Group: "g", MemberID: argString(d, "member", ""), InstanceID: argString(d, "instance", ""),
		ClientID: client, ClientHost: "/127.0.0.1", ProtocolType: argString(d, "type", "consumer"),
		SessionTimeout: argMs(t, d, "session", 10*time.Second), RebalanceTimeout: argMs(t, d, "rebalance", 30*time.Second),
		RequireKnownMemberID: !hasArg(d, "v3"), SupportsSkipAssignment: hasArg(d, "v9"),
	}
	names, ok := argList(d, "protocols")
	if !ok {
		names = []string{"range"}
	}
	meta := []byte(argString(d, "metadata", ""))
	if topics, ok := argList(d, "topics"); ok {
		// A classic consumer joining a consumer group: its subscription.
		meta = (&kmsg.ConsumerMemberMetadata{Topics: topics}).AppendTo(nil)
	}
	for _, n := range names {
		r.Protocols = append(r.Protocols, Protocol{Name: n, Metadata: meta})
	}
	who := r.MemberID
	if who == "" {
		who = client
		if r.InstanceID != "" {
			who = r.InstanceID
		}
	}
	s.c.JoinGroup(r, func(res JoinResult) {
		var b strings.Builder
		fmt.Fprintf(&b, "join %s: %s", who, errName(res.Err))
		if res.MemberID != "" && res.MemberID != who {
			fmt.Fprintf(&b, " member=%s", res.MemberID)
		}
		if res.Err == nil || res.Generation >= 0 {
			fmt.Fprintf(&b, " generation=%d", res.Generation)
		}
		if res.Protocol != "" {
			fmt.Fprintf(&b, " protocol=%s", res.Protocol)
		}
		if res.Leader != "" {
			fmt.Fprintf(&b, " leader=%s", res.Leader)
		}
		if res.SkipAssignment {
			b.WriteString(" skip-assignment")
		}
		if len(res.Members) > 0 {
			ids := make([]string, len(res.Members))
			for i, m := range res.Members {
				ids[i] = m.MemberID
			}
			fmt.Fprintf(&b, " members=[%s]", strings.Join(ids, " "))
		}
		s.respond("%s", b.String())
	})
}

func (s *script) sync(t *testing.T, d *datadriven.TestData) {
	member := argString(d, "member", "")
	r := &SyncRequest{Group: "g", MemberID: member, InstanceID: argString(d, "instance", ""),
		Generation: int32(argInt(t, d, "generation", -1))}
	assign, _ := argList(d, "assign")
	for _, a := range assign {
		id, val, ok := strings.Cut(a, ":")
		if !ok {
			t.Fatalf("assign %q: want member:assignment", a)
		}
		r.Assignments = append(r.Assignments, Assignment{MemberID: id, Assignment: []byte(val)})
	}
	s.c.SyncGroup(r, func(res SyncResult) {
		if res.Err != nil {
			s.respond("sync %s: %s", member, errName(res.Err))
			return
		}
		if hasArg(d, "consumer") {
			// A classic member of a consumer group: its partitions.
			var a kmsg.ConsumerMemberAssignment
			if err := a.ReadFrom(res.Assignment); err != nil {
				t.Errorf("sync %s: assignment %q: %v", member, res.Assignment, err)
			}
			var b strings.Builder
			for _, at := range a.Topics {
				fmt.Fprintf(&b, "%s%v", at.Topic, at.Partitions)
			}
			if b.Len() == 0 {
				b.WriteString("[]")
			}
			s.respond("sync %s: NONE assignment=%s", member, b.String())
			return
		}
		s.respond("sync %s: NONE assignment=%q", member, res.Assignment)
	})
}

func (s *script) classicHeartbeat(t *testing.T, d *datadriven.TestData) {
	member := argString(d, "member", "")
	code := s.c.Heartbeat(&HeartbeatRequest{Group: "g", MemberID: member, InstanceID: argString(d, "instance", ""),
		Generation: int32(argInt(t, d, "generation", -1))})
	s.respond("heartbeat %s: %s", member, errName(code))
}

func (s *script) leave(d *datadriven.TestData) {
	m := LeaveMember{MemberID: argString(d, "member", ""), InstanceID: argString(d, "instance", "")}
	who := m.MemberID
	switch {
	case who == "":
		who = m.InstanceID
	case m.InstanceID != "":
		who += "(" + m.InstanceID + ")"
	}
	codes, code := s.c.LeaveGroup("g", []LeaveMember{m})
	if code != nil {
		s.respond("leave %s: %s", who, errName(code))
		return
	}
	s.respond("leave %s: %s", who, errName(codes[0]))
}

func (s *script) commit(t *testing.T, d *datadriven.TestData) {
	member := argString(d, "member", "")
	r := &CommitRequest{Group: "g", MemberID: member, InstanceID: argString(d, "instance", ""),
		Generation: int32(argInt(t, d, "generation", -1)), RetentionMs: -1, UnknownGroupIsNotFound: hasArg(d, "v9")}
	offsets, _ := argList(d, "offsets")
	for _, o := range offsets {
		p, off, ok := strings.Cut(o, ":")
		n, err := strconv.ParseInt(off, 10, 64)
		if !ok || err != nil {
			t.Fatalf("offset %q: want topic-partition:offset", o)
		}
		r.Offsets = append(r.Offsets, CommitOffset{TopicPartition: parseTP(t, p), Offset: n, LeaderEpoch: -1})
	}
	codes := s.c.CommitOffsets(r)
	var parts []string
	for i, o := range r.Offsets {
		parts = append(parts, fmt.Sprintf("%s-%d=%s", o.Topic, o.Partition, errName(codes[i])))
	}
	s.respond("commit %s: %s", member, strings.Join(parts, " "))
}

// parseTP reads "topic-partition".
func parseTP(t *testing.T, s string) TopicPartition {
	i := strings.LastIndexByte(s, '-')
	p, err := strconv.Atoi(s[i+1:])
	if i < 0 || err != nil {
		t.Fatalf("partition %q: want topic-partition", s)
	}
	return TopicPartition{Topic: s[:i], Partition: int32(p)}
}

// Consumer group requests.

func (s *script) consumerHeartbeat(t *testing.T, d *datadriven.TestData) {
	id := argString(d, "member", "")
	m := s.members[id]
	if m == nil {
		m = &scriptMember{owned: []TopicPartitions{}}
		s.members[id] = m
	}
	if inst := argString(d, "instance", ""); inst != "" {
		m.instance = &inst
	}
	r := &ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: id, MemberEpoch: int32(argInt(t, d, "epoch", int64(m.epoch))),
		InstanceID: m.instance, RebalanceTimeout: argMs(t, d, "rebalance", 30*time.Second), Owned: m.owned,
		ClientID: "client-" + id, ClientHost: "/127.0.0.1", Configs: s.groupConfigs}
	if topics, ok := argList(d, "topics"); ok {
		r.SubscribedTopicNames = topics
		if topics == nil {
			r.SubscribedTopicNames = []string{}
		}
	}
	if a := argString(d, "assignor", ""); a != "" {
		r.ServerAssignor = &a
	}
	if owned, ok := argList(d, "owned"); ok {
		r.Owned = s.partitions(t, owned)
	}
	res := s.c.ConsumerGroupHeartbeat(r)
	if res.Err != nil {
		s.respond("heartbeat %s: %s", id, errName(res.Err))
		return
	}
	line := fmt.Sprintf("heartbeat %s: NONE epoch=%d", id, res.MemberEpoch)
	if hasArg(d, "show-interval") {
		line += fmt.Sprintf(" interval=%dms", res.HeartbeatInterval)
	}
	m.epoch = res.MemberEpoch
	if res.HasAssignment {
		line += " assignment=" + s.formatList(res.Assignment)
		if !hasArg(d, "ignore-assignment") {
			m.owned = res.Assignment
		}
	}
	s.respond("%s", line)
}

func (s *script) consumerLeave(t *testing.T, d *datadriven.TestData) {
	id := argString(d, "member", "")
	m := s.members[id]
	if m == nil {
		m = &scriptMember{}
	}
	res := s.c.ConsumerGroupHeartbeat(&ConsumerHeartbeatRequest{Version: 1, Group: "g", MemberID: id,
		MemberEpoch: int32(argInt(t, d, "epoch", -1)), InstanceID: m.instance, RebalanceTimeout: -1})
	if res.Err != nil {
		s.respond("leave %s: %s", id, errName(res.Err))
		return
	}
	s.respond("leave %s: NONE epoch=%d", id, res.MemberEpoch)
	delete(s.members, id)
}

// partitions reads "a-0" names into a heartbeat's owned list.
func (s *script) partitions(t *testing.T, names []string) []TopicPartitions {
	b := tpBuilder{}
	for _, n := range names {
		tp := parseTP(t, n)
		info, ok := s.topics.ByName(tp.Topic)
		if !ok {
			t.Fatalf("no topic %q", tp.Topic)
		}
		b.add(info.ID, tp.Partition)
	}
	return partitionList(b.set())
}

// Output.

// formatList writes partitions by topic name: a[0 1 2] b[0].
func (s *script) formatList(ts []TopicPartitions) string {
	b := tpBuilder{}
	for _, t := range ts {
		for _, p := range t.Partitions {
			b.add(t.TopicID, p)
		}
	}
	return s.formatSet(b.set())
}

func (s *script) formatSet(set tpSet) string {
	type named struct {
		name string
		ps   []int32
	}
	var ts []named
	for id, ps := range set {
		name := fmt.Sprintf("%x", id[:4])
		if info, ok := s.topics.ByID(id); ok {
			name = info.Name
		}
		if len(ps) > 0 {
			ts = append(ts, named{name, slices.Sorted(slices.Values(ps))})
		}
	}
	if len(ts) == 0 {
		return "[]"
	}
	slices.SortFunc(ts, func(a, b named) int { return strings.Compare(a.name, b.name) })
	parts := make([]string, len(ts))
	for i, t := range ts {
		ps := make([]string, len(t.ps))
		for j, p := range t.ps {
			ps[j] = strconv.Itoa(int(p))
		}
		parts[i] = t.name + "[" + strings.Join(ps, " ") + "]"
	}
	return strings.Join(parts, " ")
}

// printRecords writes the records appended to __consumer_offsets since
// the last step, decoded as the coordinator decodes them on load.
func (s *script) printRecords(b *strings.Builder) {
	l := s.part.Log()
	var rr krecord.Iter
	defer rr.Release()
	end := l.LogEndOffset()
	err := l.Scan(s.next, end, func(batch krecord.Batch) error {
		if err := rr.Reset(batch, 0); err != nil {
			return err
		}
		for rr.Next() {
			if rr.Offset() < s.next {
				continue
			}
			rec := rr.Record()
			if batch.IsControl() {
				fmt.Fprintf(b, "write marker\n")
				continue
			}
			r, err := decodeRecord(rec.Key, rec.Value)
			if err != nil {
				return err
			}
			b.WriteString("write ")
			s.formatRecord(b, &r, rec.Value == nil)
		}
		return rr.Err()
	})
	if err != nil {
		fmt.Fprintf(b, "cannot read __consumer_offsets: %v\n", err)
	}
	s.next = end
}

var consumerRecordNames = map[int16]string{
	consumerEpochType:        "ConsumerGroupMetadata",
	consumerMemberType:       "ConsumerGroupMemberMetadata",
	consumerTargetEpochType:  "ConsumerGroupTargetAssignmentMetadata",
	consumerTargetMemberType: "ConsumerGroupTargetAssignmentMember",
	consumerCurrentType:      "ConsumerGroupCurrentMemberAssignment",
}

var memberStateNames = [...]string{"STABLE", "UNREVOKED_PARTITIONS", "UNRELEASED_PARTITIONS"}

func (s *script) formatRecord(b *strings.Builder, r *record, tombstone bool) {
	switch r.kind {
	case recordOffset:
		fmt.Fprintf(b, "OffsetCommit %s-%d: ", r.tp.Topic, r.tp.Partition)
		if tombstone {
			b.WriteString("tombstone\n")
			return
		}
		fmt.Fprintf(b, "offset=%d\n", r.offset.Offset)
	case recordGroup:
		b.WriteString("GroupMetadata: ")
		if tombstone {
			b.WriteString("tombstone\n")
			return
		}
		formatGroupValue(b, r.meta)
	case recordConsumer:
		c := &r.cr
		b.WriteString(consumerRecordNames[c.typ])
		if c.member != "" {
			b.WriteString(" " + c.member)
		}
		b.WriteString(": ")
		if c.tombstone {
			b.WriteString("tombstone\n")
			return
		}
		switch c.typ {
		case consumerEpochType:
			fmt.Fprintf(b, "epoch=%d\n", c.epoch)
		case consumerTargetEpochType:
			s.formatTargetMetadata(b, c.epoch, c.assignedAt)
		case consumerMemberType:
			m := &c.meta
			fmt.Fprintf(b, "topics=[%s]", strings.Join(m.topics, " "))
			if m.regex != "" {
				fmt.Fprintf(b, " regex=%q", m.regex)
			}
			if m.instanceID != "" {
				fmt.Fprintf(b, " instance=%s", m.instanceID)
			}
			if m.assignor != "" {
				fmt.Fprintf(b, " assignor=%s", m.assignor)
			}
			fmt.Fprintf(b, " rebalance=%s\n", time.Duration(m.rebalanceTimeout)*time.Millisecond)
		case consumerTargetMemberType:
			fmt.Fprintf(b, "%s\n", s.formatSet(c.target))
		case consumerCurrentType:
			a := &c.current
			fmt.Fprintf(b, "epoch=%d previous=%d state=%s assigned=%s", a.epoch, a.previousEpoch, memberStateNames[a.state], s.formatSet(a.assigned))
			if a.revoking.size() > 0 {
				fmt.Fprintf(b, " revoking=%s", s.formatSet(a.revoking))
			}
			b.WriteByte('\n')
		}
	case recordStreams:
		s.formatStreamsRecord(b, &r.sr)
	case recordShare:
		s.formatShareRecord(b, &r.shr)
	default:
		b.WriteString("other record\n")
	}
}

// formatTargetMetadata writes a target assignment metadata record's
// epoch and, if it has one, its AssignmentTimestamp (at=, from the
// script's start).
func (s *script) formatTargetMetadata(b *strings.Builder, epoch int32, assignedAt int64) {
	fmt.Fprintf(b, "epoch=%d", epoch)
	if assignedAt != 0 {
		fmt.Fprintf(b, " at=%s", time.Duration(assignedAt-s.start)*time.Millisecond)
	}
	b.WriteString("\n")
}

func formatGroupValue(b *strings.Builder, v *kmsg.GroupMetadataValue) {
	fmt.Fprintf(b, "generation=%d protocol-type=%s", v.Generation, v.ProtocolType)
	if v.Protocol != nil {
		fmt.Fprintf(b, " protocol=%s", *v.Protocol)
	}
	if v.Leader != nil {
		fmt.Fprintf(b, " leader=%s", *v.Leader)
	}
	b.WriteByte('\n')
	for _, m := range v.Members {
		fmt.Fprintf(b, "  member %s", m.MemberID)
		if m.InstanceID != nil {
			fmt.Fprintf(b, " instance=%s", *m.InstanceID)
		}
		fmt.Fprintf(b, " client=%s session=%s rebalance=%s", m.ClientID,
			time.Duration(m.SessionTimeoutMillis)*time.Millisecond, time.Duration(m.RebalanceTimeoutMillis)*time.Millisecond)
		if len(m.Subscription) > 0 {
			fmt.Fprintf(b, " subscription=%q", m.Subscription)
		}
		fmt.Fprintf(b, " assignment=%q\n", m.Assignment)
	}
}

// printState writes the group's state as its coordinator holds it.
func (s *script) printState(b *strings.Builder, members bool) {
	sh, code := s.c.lock("g")
	if code != nil {
		fmt.Fprintf(b, "state: %s\n", errName(code))
		return
	}
	defer sh.Unlock()
	e := sh.mu.groups["g"]
	if e == nil {
		b.WriteString("state: no group\n")
		return
	}
	g := e.g
	if g.streams != nil {
		s.printStreamsState(b, g, members)
		return
	}
	if g.share != nil {
		s.printShareState(b, g, members)
		return
	}
	if cg := g.consumer; cg != nil {
		fmt.Fprintf(b, "state: %s epoch=%d assignment-epoch=%d\n", g.State(), cg.epoch, cg.assignmentEpoch)
		if members {
			for _, m := range cg.sortedMembers() {
				fmt.Fprintf(b, "  member %s epoch=%d assigned=%s", m.id, m.current.epoch, s.formatSet(m.current.assigned))
				if m.current.revoking.size() > 0 {
					fmt.Fprintf(b, " revoking=%s", s.formatSet(m.current.revoking))
				}
				fmt.Fprintf(b, " target=%s\n", s.formatSet(cg.target[m.id]))
			}
		}
		return
	}
	fmt.Fprintf(b, "state: %s generation=%d", g.state, g.generation)
	if g.protocol != "" {
		fmt.Fprintf(b, " protocol=%s", g.protocol)
	}
	if g.leader != "" && len(g.members) > 0 {
		fmt.Fprintf(b, " leader=%s", g.leader)
	}
	ids := make([]string, 0, len(g.order))
	var joined, unsynced []string
	for _, m := range g.order {
		id := m.id
		if m.instanceID != "" {
			id += "(" + m.instanceID + ")"
		}
		ids = append(ids, id)
		if m.joinDone != nil {
			joined = append(joined, m.id)
		}
		if g.pendingSync[m.id] {
			unsynced = append(unsynced, m.id)
		}
	}
	fmt.Fprintf(b, " members=[%s]", strings.Join(ids, " "))
	if g.state == PreparingRebalance {
		fmt.Fprintf(b, " joined=[%s]", strings.Join(joined, " "))
	}
	if len(unsynced) > 0 {
		fmt.Fprintf(b, " not-synced=[%s]", strings.Join(unsynced, " "))
	}
	if len(g.offsets) > 0 {
		fmt.Fprintf(b, " offsets=%d", len(g.offsets))
	}
	b.WriteByte('\n')
}

// codesOf is the Kafka code of each error, for comparing per-item results.
func codesOf(errs []error) []int16 {
	out := make([]int16, len(errs))
	for i, err := range errs {
		out[i] = shards.Code(err)
	}
	return out
}
