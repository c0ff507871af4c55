package group

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// Share group (KIP-932) commands of the script tests (testdata/share); a
// share member remembers its epoch:
//
//	share-heartbeat member=m1 [topics=(a,b)] [epoch=N]
//	share-leave member=m1
//	share-delete-offsets topic=a          DeleteShareGroupOffsets' records: a
//	                                      is being deleted, then deleted
//	share-init [fail=(a-1)] [crash=(a-1)] [hold]
//	                                      initializing these share partitions' state fails;
//	                                      or succeeds, and the coordinator stops (a crash before
//	                                      it records them initialized; "restart" brings it back);
//	                                      hold: the background initializations wait for
//	                                      share-init-done
//	share-init-done                       the held initializations run
//
// A heartbeat's background initialization of share state runs at the end
// of the command that started it (unless held), after its response:
// "(background) N share state initialization(s)", then the share
// coordinator's initializations, written "initialize a-0 epoch=N" (OK)
// or "... FAILED", then the records that end them.
//
//	delete-group                          DeleteGroups of "g"
func (s *script) runShare(t *testing.T, d *datadriven.TestData) {
	id := argString(d, "member", "")
	switch d.Cmd {
	case "share-heartbeat":
		m := s.members[id]
		if m == nil {
			m = &scriptMember{}
			s.members[id] = m
		}
		r := &ShareHeartbeatRequest{Group: "g", MemberID: id, MemberEpoch: int32(argInt(t, d, "epoch", int64(m.epoch))),
			ClientID: "client-" + id, ClientHost: "/127.0.0.1", Configs: s.groupConfigs}
		if topics, ok := argList(d, "topics"); ok {
			r.SubscribedTopicNames = topics
			if topics == nil {
				r.SubscribedTopicNames = []string{}
			}
		}
		res := s.c.ShareGroupHeartbeat(r)
		if res.Err != nil {
			s.respond("share-heartbeat %s: %s", id, errName(res.Err))
			return
		}
		m.epoch = res.MemberEpoch
		line := fmt.Sprintf("share-heartbeat %s: NONE epoch=%d interval=%dms", id, res.MemberEpoch, res.HeartbeatInterval)
		if res.HasAssignment {
			line += " assignment=" + s.formatList(res.Assignment)
		}
		s.respond("%s", line)
	case "share-leave":
		res := s.c.ShareGroupHeartbeat(&ShareHeartbeatRequest{Group: "g", MemberID: id, MemberEpoch: -1, Configs: s.groupConfigs})
		if res.Err != nil {
			s.respond("share-leave %s: %s", id, errName(res.Err))
			return
		}
		s.respond("share-leave %s: NONE epoch=%d", id, res.MemberEpoch)
		delete(s.members, id)
	case "share-delete-offsets":
		name := argString(d, "topic", "")
		info, ok := s.topics.ByName(name)
		if !ok {
			t.Fatalf("share-delete-offsets: no topic %q", name)
		}
		topics := map[[16]byte]string{info.ID: name}
		for _, done := range []bool{false, true} {
			if err := s.c.ShareTopicsDeleting("g", topics, done); err != nil {
				s.respond("share-delete-offsets %s: %v", name, err)
				return
			}
		}
		s.respond("share-delete-offsets %s: NONE", name)
	case "share-init":
		list, _ := argList(d, "fail")
		s.shareInitFails = map[string]bool{}
		for _, tp := range list {
			s.shareInitFails[tp] = true
		}
		crash, _ := argList(d, "crash")
		s.shareInitCrashes = map[string]bool{}
		for _, tp := range crash {
			s.shareInitCrashes[tp] = true
		}
		s.shareInitHold = hasArg(d, "hold")
	case "share-init-done":
		s.runShareInits()
	case "delete-group":
		s.respond("delete-group: %s", errName(s.c.DeleteGroups([]string{"g"})[0]))
	}
}

var shareRecordNames = map[int16]string{
	shareEpochType:          "ShareGroupMetadata",
	shareMemberType:         "ShareGroupMemberMetadata",
	shareTargetEpochType:    "ShareGroupTargetAssignmentMetadata",
	shareTargetMemberType:   "ShareGroupTargetAssignmentMember",
	shareCurrentType:        "ShareGroupCurrentMemberAssignment",
	shareStatePartitionType: "ShareGroupStatePartitionMetadata",
}

// initializeShareState is the script coordinator's share coordinator.
func (s *script) initializeShareState(group string, stateEpoch int32, topics []TopicPartitions) (failed []TopicPartitions) {
	for _, t := range topics {
		name := fmt.Sprintf("%x", t.TopicID[:4])
		if info, ok := s.topics.ByID(t.TopicID); ok {
			name = info.Name
		}
		for _, p := range t.Partitions {
			tp := fmt.Sprintf("%s-%d", name, p)
			if s.shareInitFails[tp] {
				s.respond("initialize %s %s epoch=%d: FAILED", group, tp, stateEpoch)
				failed = append(failed, TopicPartitions{TopicID: t.TopicID, Partitions: []int32{p}})
				continue
			}
			s.respond("initialize %s %s epoch=%d: OK", group, tp, stateEpoch)
			if s.shareInitCrashes[tp] {
				s.respond("the coordinator stops")
				s.c.Close()
			}
		}
	}
	return failed
}

// queueShareInit is the script coordinator's runner of background share
// state initializations: they run, in order, at the end of the command
// that started them, or with share-init-done while held.
func (s *script) queueShareInit(job func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shareInits = append(s.shareInits, job)
}

// runShareInits runs the queued share state initializations.
func (s *script) runShareInits() {
	for {
		s.mu.Lock()
		jobs := s.shareInits
		s.shareInits = nil
		s.mu.Unlock()
		if len(jobs) == 0 {
			return
		}
		s.respond("(background) %d share state initialization(s)", len(jobs))
		for _, job := range jobs {
			job()
		}
	}
}

// formatStateTopics writes a list of record 15.
func formatStateTopics(list []stateTopic, partitions bool) string {
	var parts []string
	for _, t := range list {
		if partitions {
			parts = append(parts, fmt.Sprintf("%s%v", t.name, t.partitions))
		} else {
			parts = append(parts, t.name)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func (s *script) formatShareRecord(b *strings.Builder, r *shareRecord) {
	b.WriteString(shareRecordNames[r.typ])
	if r.member != "" {
		b.WriteString(" " + r.member)
	}
	b.WriteString(": ")
	if r.tombstone {
		b.WriteString("tombstone\n")
		return
	}
	switch r.typ {
	case shareEpochType:
		fmt.Fprintf(b, "epoch=%d\n", r.epoch)
	case shareTargetEpochType:
		s.formatTargetMetadata(b, r.epoch, r.assignedAt)
	case shareMemberType:
		fmt.Fprintf(b, "topics=[%s] client=%s\n", strings.Join(r.meta.topics, " "), r.meta.clientID)
	case shareTargetMemberType:
		fmt.Fprintf(b, "%s\n", s.formatSet(r.target))
	case shareCurrentType:
		fmt.Fprintf(b, "epoch=%d previous=%d assigned=%s\n", r.current.epoch, r.current.previousEpoch, s.formatSet(r.current.assigned))
	case shareStatePartitionType:
		m := &r.state
		fmt.Fprintf(b, "initializing=%s initialized=%s deleting=%s\n",
			formatStateTopics(m.initializing, true), formatStateTopics(m.initialized, true), formatStateTopics(m.deleting, false))
	}
}

func (s *script) printShareState(b *strings.Builder, g *Group, members bool) {
	sg := g.share
	fmt.Fprintf(b, "state: share %s epoch=%d assignment-epoch=%d\n", g.State(), sg.epoch, sg.assignmentEpoch)
	if members {
		for _, m := range sg.sortedMembers() {
			fmt.Fprintf(b, "  member %s epoch=%d assigned=%s target=%s\n", m.id, m.current.epoch, s.formatSet(m.current.assigned), s.formatSet(sg.target[m.id]))
		}
	}
}
