package group

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Classic members of a consumer group, as Kafka 4 serves them during an
// online migration between the protocols (group.consumer.migration.policy):
// a consumer that still speaks the classic protocol joins a consumer group
// with JoinGroup, gets its assignment with SyncGroup, heartbeats with
// Heartbeat and leaves with LeaveGroup, its generation being its member
// epoch. The coordinator assigns it server side like any member: its
// subscription and the partitions it owns are read from its JoinGroup
// metadata (ConsumerProtocolSubscription); its JoinGroup runs the
// heartbeat logic of consumer_heartbeat.go (reconciling it at once) and is
// answered at once, with no leader; its SyncGroup gets its current
// assignment (ConsumerProtocolAssignment). When its assignment must change
// its Heartbeat gets REBALANCE_IN_PROGRESS and it joins again: an eager
// member has revoked everything by then, a cooperative one reports what it
// still owns, keeps it until it revoked what it must give up, then joins
// once more for the rest. It must join within its rebalance timeout after
// being told to, and sync within it after joining, or it is fenced.

// classicMembersAllowed reports whether classic members may join a
// consumer group with members: a step of an upgrade (a classic consumer
// bounced while the others moved on) or of a downgrade, so any policy but
// "disabled".
func (p *Policy) classicMembersAllowed() bool { return p.UpgradeAllowed || p.DowngradeAllowed }

// subscription is a classic consumer's subscription, from the first of
// its protocols whose metadata decodes.
type subscription struct {
	protocol string
	meta     kmsg.ConsumerMemberMetadata
}

func decodeSubscription(ps []Protocol) (subscription, bool) {
	for _, p := range ps {
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(p.Metadata); err == nil {
			return subscription{protocol: p.Name, meta: meta}, true
		}
	}
	return subscription{}, false
}

// owned is what the subscription says the member owns (cooperative
// members; eager ones report nothing), by topic id.
func (s *subscription) owned(topics Topics) []TopicPartitions {
	out := []TopicPartitions{}
	for _, o := range s.meta.OwnedPartitions {
		if t, ok := topics.ByName(o.Topic); ok {
			out = append(out, TopicPartitions{TopicID: t.ID, Partitions: o.Partitions})
		}
	}
	return out
}

// encodeAssignment is s as a classic consumer's SyncGroup assignment.
func encodeAssignment(s tpSet, topics Topics) []byte {
	a := kmsg.ConsumerMemberAssignment{Version: 0}
	for _, t := range named(s, topics) {
		a.Topics = append(a.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: t.Topic, Partitions: t.Partitions})
	}
	return a.AppendTo(nil)
}

// supportsClassic reports whether a classic member with these protocols
// may join: one of them is supported by every classic member already in.
func (cg *consumerGroup) supportsClassic(ps []Protocol) bool {
	votes, n := map[string]int{}, 0
	for _, m := range cg.members {
		if m.classic == nil {
			continue
		}
		n++
		for _, p := range m.classic.protocols {
			votes[p.Name]++
		}
	}
	if n == 0 {
		return true
	}
	for _, p := range ps {
		if votes[p.Name] == n {
			return true
		}
	}
	return false
}

// needsRejoin reports whether a classic member must join again (Kafka's
// classicGroupHeartbeatToConsumerGroup): the group epoch is past its
// epoch (a new target is due, or, within the assignment interval of
// KIP-1263, waits for the next join after it), it must revoke
// partitions, or it waits for partitions that no other member holds any
// more; a member waiting for partitions still held elsewhere heartbeats
// on (joining again would change nothing).
func (cg *consumerGroup) needsRejoin(m *consumerMember, topics Topics) bool {
	switch {
	case m.current.epoch < cg.epoch, m.current.state == memberUnrevoked:
		return true
	case m.current.state == memberUnreleased && !cg.waitingOnUnreleased(m):
		return true
	case m.current.state != memberStable && m.current.state != memberUnreleased:
		return true
	}
	if v := topics.Version(); v != cg.resolved.version {
		// The topics changed: a subscribed one may have been created,
		// deleted or grown, which the next join assigns.
		metas := make(map[string]*memberMeta, len(cg.members))
		for id, o := range cg.members {
			metas[id] = &o.memberMeta
		}
		byMember, subscribed, hash := cg.resolve(topics, metas)
		if hash != cg.metaHash {
			return true
		}
		cg.resolved.version, cg.resolved.topics, cg.resolved.members = v, subscribed, byMember
	}
	return false
}

// waitingOnUnreleased reports whether a member has in its target
// assignment a partition it does not have yet that another member still
// holds (Kafka's ConsumerGroup.waitingOnUnreleasedPartition).
func (cg *consumerGroup) waitingOnUnreleased(m *consumerMember) bool {
	for id, ps := range cg.target[m.id] {
		for _, p := range ps {
			if !m.current.assigned.has(id, p) && cg.heldByOther(id, p, m.id, "") {
				return true
			}
		}
	}
	return false
}

// rebalanceInProgress reports whether a classic member must join again
// before it syncs (Kafka's throwIfRebalanceInProgress): the group epoch
// is past its epoch, unless it is revoking partitions (it joined already;
// it finishes revoking first).
func (cg *consumerGroup) rebalanceInProgress(m *consumerMember) bool {
	return cg.epoch > m.current.epoch && m.current.state != memberUnrevoked
}

// classicMember finds a classic member of a request: UNKNOWN_MEMBER_ID
// for none (or a consumer protocol member), FENCED_INSTANCE_ID for a
// static member under another id.
func (cg *consumerGroup) classicMember(memberID, instanceID string) (*consumerMember, error) {
	if instanceID != "" {
		cur := cg.members[cg.static[instanceID]]
		switch {
		case cur == nil || cur.classic == nil:
			return nil, kerr.UnknownMemberID
		case cur.id != memberID:
			return nil, kerr.FencedInstanceID
		}
	}
	m := cg.members[memberID]
	if m == nil || m.classic == nil {
		return nil, kerr.UnknownMemberID
	}
	return m, nil
}

// joinClassicLocked handles a JoinGroup on a consumer group with members,
// unlocks the shard and answers.
func (s *shard) joinClassicLocked(e *entry, now int64, r *JoinRequest, done func(JoinResult)) {
	c, cg := s.c, e.g.consumer
	fail := func(err error, memberID string) {
		s.finishLocked(e, now)
		done(joinError(err, memberID))
	}
	if r.SessionTimeout < c.policy.MinSessionTimeout || r.SessionTimeout > c.policy.MaxSessionTimeout {
		fail(kerr.InvalidSessionTimeout, r.MemberID)
		return
	}
	sub, ok := decodeSubscription(r.Protocols)
	if r.ProtocolType != consumerProtocolType || !ok || !cg.supportsClassic(r.Protocols) {
		fail(kerr.InconsistentGroupProtocol, r.MemberID)
		return
	}
	memberID := r.MemberID
	if memberID == "" {
		prefix := r.ClientID
		if r.InstanceID != "" {
			prefix = r.InstanceID
		}
		memberID = prefix + "-" + c.policy.NewID()
		if r.InstanceID == "" && r.RequireKnownMemberID {
			fail(kerr.MemberIDRequired, memberID)
			return
		}
	}
	old := cg.members[memberID]
	if old != nil && old.classic == nil {
		fail(kerr.UnknownMemberID, memberID)
		return
	}
	env := c.env(now)
	if r.InstanceID != "" {
		if cur := cg.members[cg.static[r.InstanceID]]; cur != nil && cur.id != memberID {
			if r.MemberID != "" || cur.classic == nil {
				fail(kerr.FencedInstanceID, memberID)
				return
			}
			// The static member restarted: its old incarnation is fenced.
			recs := cg.fenceRecords(&env, cur)
			if err := writeRecordsLocked(s, e.g.id, recs); err != nil {
				c.logger.Warn("cannot fence a static member", "group", e.g.id, "partition", s.Partition, "err", err)
				fail(storeErr(err), memberID)
				return
			}
			replayRecords(&e.g.consumer, recs, newConsumerGroup)
		}
	}
	epoch := int32(0)
	if old != nil {
		epoch = old.current.epoch
	}
	topics := sub.meta.Topics
	if topics == nil {
		topics = []string{}
	}
	hr := &ConsumerHeartbeatRequest{Version: 1, Group: e.g.id, MemberID: memberID, MemberEpoch: epoch,
		RebalanceTimeout: max(r.RebalanceTimeout, 0), SubscribedTopicNames: topics, Owned: sub.owned(env.topics),
		ClientID: r.ClientID, ClientHost: r.ClientHost,
		classic: &classicMeta{sessionTimeout: r.SessionTimeout, protocols: r.Protocols}}
	if r.InstanceID != "" {
		inst := r.InstanceID
		hr.InstanceID = &inst
	}
	out := cg.heartbeat(&env, hr, nil)
	if out.res.Err != nil {
		fail(out.res.Err, memberID)
		return
	}
	if err := writeRecordsLocked(s, e.g.id, out.recs); err != nil {
		c.logger.Warn("cannot store a classic member of a consumer group", "group", e.g.id, "partition", s.Partition, "err", err)
		fail(storeErr(err), memberID)
		return
	}
	replayRecords(&e.g.consumer, out.recs, newConsumerGroup)
	cg.apply(&out)
	m := cg.members[out.member]
	m.sessionDeadline = now + int64(r.SessionTimeout)
	m.classicDeadline = now + int64(max(r.RebalanceTimeout, 0)) // it must sync by then
	res := JoinResult{MemberID: m.id, Generation: m.current.epoch, ProtocolType: consumerProtocolType,
		Protocol: strings.Clone(sub.protocol)}
	s.finishLocked(e, now)
	done(res)
}

// syncClassicLocked handles a SyncGroup on a consumer group: the member's
// current assignment. It unlocks the shard and answers.
func (s *shard) syncClassicLocked(e *entry, now int64, r *SyncRequest, done func(SyncResult)) {
	cg := e.g.consumer
	m, err := cg.classicMember(r.MemberID, r.InstanceID)
	switch {
	case err != nil:
	case r.Generation != m.current.epoch:
		err = kerr.IllegalGeneration
	case r.ProtocolType != nil && *r.ProtocolType != consumerProtocolType,
		r.Protocol != nil && !slices.ContainsFunc(m.classic.protocols, func(p Protocol) bool { return p.Name == *r.Protocol }):
		err = kerr.InconsistentGroupProtocol
	case cg.rebalanceInProgress(m):
		// The group moved on since the member joined (or, within the
		// assignment interval, its join kept the last target): it joins
		// again, by its rebalance timeout.
		if m.classicDeadline == 0 {
			m.classicDeadline = now + int64(max(m.rebalanceTimeout, 0))
		}
		err = kerr.RebalanceInProgress
	}
	if err != nil {
		s.finishLocked(e, now)
		done(SyncResult{Err: err})
		return
	}
	m.classicDeadline = 0
	m.sessionDeadline = now + int64(m.classic.sessionTimeout)
	protocol := m.classic.protocols[0].Name
	if r.Protocol != nil {
		protocol = *r.Protocol
	}
	res := SyncResult{ProtocolType: consumerProtocolType, Protocol: strings.Clone(protocol),
		Assignment: encodeAssignment(m.current.assigned, s.c.env(now).topics)}
	s.finishLocked(e, now)
	done(res)
}

// heartbeatClassicLocked handles a Heartbeat on a consumer group:
// REBALANCE_IN_PROGRESS when the member must join again. It unlocks the
// shard.
func (s *shard) heartbeatClassicLocked(e *entry, now int64, r *HeartbeatRequest) error {
	cg := e.g.consumer
	m, err := cg.classicMember(r.MemberID, r.InstanceID)
	switch {
	case err != nil:
	case r.Generation != m.current.epoch:
		err = kerr.IllegalGeneration
	default:
		m.sessionDeadline = now + int64(m.classic.sessionTimeout)
		if cg.needsRejoin(m, s.c.env(now).topics) {
			if m.classicDeadline == 0 {
				m.classicDeadline = now + int64(max(m.rebalanceTimeout, 0))
			}
			err = kerr.RebalanceInProgress
		}
	}
	s.finishLocked(e, now)
	return err
}

// leaveClassicLocked handles a LeaveGroup on a consumer group: the classic
// members named leave in one batch, and the group epoch is bumped. It
// unlocks the shard.
func (s *shard) leaveClassicLocked(e *entry, now int64, leaving []LeaveMember) []error {
	cg := e.g.consumer
	errs := make([]error, len(leaving))
	var gone []*consumerMember
	for i, l := range leaving {
		var m *consumerMember
		if l.InstanceID != "" {
			m = cg.members[cg.static[l.InstanceID]]
			switch {
			case m == nil || m.classic == nil:
				errs[i] = kerr.UnknownMemberID
				continue
			case l.MemberID != "" && l.MemberID != m.id:
				errs[i] = kerr.FencedInstanceID
				continue
			}
		} else if m = cg.members[l.MemberID]; m == nil || m.classic == nil {
			errs[i] = kerr.UnknownMemberID
			continue
		}
		if !slices.Contains(gone, m) {
			gone = append(gone, m)
		}
	}
	if len(gone) > 0 {
		env := s.c.env(now)
		recs := cg.fenceRecords(&env, gone...)
		if err := writeRecordsLocked(s, e.g.id, recs); err != nil {
			s.c.logger.Warn("cannot remove classic members of a consumer group", "group", e.g.id, "partition", s.Partition, "err", err)
			err = storeErr(err)
			for i := range errs {
				if errs[i] == nil {
					errs[i] = err
				}
			}
		} else {
			replayRecords(&e.g.consumer, recs, newConsumerGroup)
		}
	}
	s.finishLocked(e, now)
	return errs
}
