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
	case "delete-group":
		s.respond("delete-group: %s", errName(s.c.DeleteGroups([]string{"g"})[0]))
	}
}

var shareRecordNames = map[int16]string{
	shareEpochType:        "ShareGroupMetadata",
	shareMemberType:       "ShareGroupMemberMetadata",
	shareTargetEpochType:  "ShareGroupTargetAssignmentMetadata",
	shareTargetMemberType: "ShareGroupTargetAssignmentMember",
	shareCurrentType:      "ShareGroupCurrentMemberAssignment",
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
