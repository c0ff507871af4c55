package group

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerGroupHeartbeat handles a ConsumerGroupHeartbeat (KIP-848): a
// member joins (epoch 0), heartbeats, or leaves (-1, or -2 for a static
// member that comes back). The records of the change are written to the
// group's partition before the response, and applied once written.
//
// A group that does not exist is created by a join. An empty classic group
// (one only holding offsets, or whose members all left) becomes a consumer
// group, keeping its offsets, as Kafka converts empty groups whatever
// group.consumer.migration.policy says; a classic group of consumers with
// members is upgraded when the policy allows it (consumer_migration.go),
// else gets GROUP_ID_NOT_FOUND. When the last consumer protocol member
// leaves a group whose other members are classic, the group is downgraded
// when the policy allows it.
func (c *Coordinator) ConsumerGroupHeartbeat(r *ConsumerHeartbeatRequest) ConsumerHeartbeatResult {
	if msg, err := validateHeartbeat(r, &c.policy); err != nil {
		return ConsumerHeartbeatResult{Err: err, ErrMessage: msg}
	}
	s, err := c.lock(r.Group)
	if err != nil {
		return ConsumerHeartbeatResult{Err: err}
	}
	now := c.now()
	env := c.env(now)
	env.policy = env.policy.withGroupConfigs(r.Configs)
	e := s.mu.groups[r.Group]
	notFound := func(msg string) ConsumerHeartbeatResult {
		s.Unlock()
		return ConsumerHeartbeatResult{Err: kerr.GroupIDNotFound, ErrMessage: fmt.Sprintf(msg, r.Group)}
	}
	if r.MemberEpoch < 0 {
		if e == nil || e.g.consumer == nil {
			return notFound("Group %s not found.")
		}
		out := e.g.consumer.leave(&env, r)
		out.left = r.MemberEpoch == -1
		return s.finishConsumerLocked(e, now, e.g.consumer, out, false, false)
	}
	var cg *consumerGroup
	created, convert := false, false
	switch {
	case e == nil:
		if r.MemberEpoch != 0 {
			return notFound("Group %s not found.")
		}
		e, created = s.addLocked(r.Group, now), true
		cg, convert = newConsumerGroup(), true
	case e.g.consumer != nil:
		cg = e.g.consumer
	case r.MemberEpoch == 0 && e.g.classicEmpty():
		cg, convert = newConsumerGroup(), true
	case r.MemberEpoch == 0 && e.g.upgradable(&c.policy):
		return s.upgradeLocked(e, now, r)
	default:
		return notFound("Group %s is not a consumer group.")
	}
	return s.finishConsumerLocked(e, now, cg, cg.heartbeat(&env, r, newMemberID), convert, created)
}

// finishConsumerLocked writes a heartbeat's records (after the classic
// group's tombstone when the group converts), applies them, unlocks the
// shard and returns the response.
func (s *shard) finishConsumerLocked(e *entry, now int64, cg *consumerGroup, out hbOutcome, convert, created bool) ConsumerHeartbeatResult {
	res := out.res
	if res.Err == nil && (len(out.recs) > 0 || convert) {
		if err := writeConvertingLocked(s, e.g.id, out.recs, convert && !created, nil); err != nil {
			s.c.logger.Warn("cannot store consumer group records", "group", e.g.id, "partition", s.Partition, "err", err)
			res = ConsumerHeartbeatResult{Err: storeErr(err)}
		} else {
			if convert {
				e.g.consumer = cg
			}
			replayRecords(&e.g.consumer, out.recs, newConsumerGroup)
		}
	}
	if res.Err != nil && created {
		delete(s.mu.groups, e.g.id) // the group never was
		s.Unlock()
		return res
	}
	if res.Err == nil && e.g.consumer != nil {
		e.g.consumer.apply(&out)
		if out.left && e.g.consumer.downgradable(&s.c.policy) {
			s.downgradeLocked(e, now)
		}
	}
	s.finishLocked(e, now)
	return res
}

// expireConsumerLocked fences the members of the group whose session,
// revocation, or classic join or sync expired: one batch, one group epoch
// bump; then downgrades it if only classic members remain.
func (s *shard) expireConsumerLocked(e *entry, now int64) {
	g := e.g
	for range 8 {
		if g.consumer == nil {
			return
		}
		gone := g.consumer.expired(now)
		if len(gone) == 0 {
			return
		}
		env := s.c.env(now)
		recs := g.consumer.fenceRecords(&env, gone...)
		if err := writeRecordsLocked(s, g.id, recs); err != nil {
			s.c.logger.Warn("cannot remove expired consumer group members", "group", g.id, "partition", s.Partition, "err", err)
			for _, m := range gone {
				m.sessionDeadline, m.revokeDeadline = now+1000, 0 // try again later
			}
			return
		}
		consumerLeft := false
		for _, m := range gone {
			s.c.logger.Info("consumer group member expired", "group", g.id, "member", m.id)
			consumerLeft = consumerLeft || m.classic == nil
		}
		replayRecords(&g.consumer, recs, newConsumerGroup)
		if consumerLeft && g.consumer != nil && g.consumer.downgradable(&s.c.policy) {
			s.downgradeLocked(e, now)
		}
	}
}

// deleteRecords are the tombstones that end a consumer group with no
// members: its target assignment and its epoch.
func (cg *consumerGroup) deleteRecords() []consumerRecord {
	var recs []consumerRecord
	for _, id := range slices.Sorted(maps.Keys(cg.target)) {
		recs = append(recs, consumerRecord{typ: consumerTargetMemberType, member: id, tombstone: true})
	}
	return append(recs,
		consumerRecord{typ: consumerTargetEpochType, tombstone: true},
		consumerRecord{typ: consumerEpochType, tombstone: true})
}

// env is the heartbeat logic's view of the broker at now.
func (c *Coordinator) env(now int64) hbEnv {
	var topics Topics = noTopics{}
	if v := c.topics.Load(); v != nil && v.Topics != nil {
		topics = v.Topics
	}
	return hbEnv{now: now, policy: &c.policy, topics: topics, gateShares: c.cfg.InitializeShareState != nil}
}

// newMemberID names a member that joins with none (ConsumerGroupHeartbeat
// v0), as Kafka does: a random UUID in URL-safe base64.
func newMemberID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// classicEmpty reports whether g is a classic group without members,
// pending or not: one that may become a consumer group.
func (g *Group) classicEmpty() bool {
	return g.consumer == nil && g.streams == nil && g.share == nil && g.state == Empty && len(g.members) == 0 && len(g.pending) == 0
}

// validateCommit checks an OffsetCommit (or TxnOffsetCommit, txn) of a
// member of a consumer group: the member epoch is the request's
// generation. A commit with no member (epoch -1) is allowed while the
// group has no members. A consumer protocol member must commit with
// OffsetCommit v9+ (UNSUPPORTED_VERSION). An epoch above the member's gets
// STALE_MEMBER_EPOCH (ILLEGAL_GENERATION for TxnOffsetCommit); one below
// it passes here, to be checked per partition (heldSince, KIP-1251), but
// not for TxnOffsetCommit (ILLEGAL_GENERATION).
func (cg *consumerGroup) validateCommit(memberID string, epoch int32, txn, v9 bool) error {
	if epoch < 0 && len(cg.members) == 0 {
		return nil
	}
	m := cg.members[memberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID
	case m.classic != nil && epoch != m.current.epoch:
		// A classic member commits with its generation, any version.
		return kerr.IllegalGeneration
	case m.classic != nil:
		return nil
	case !txn && !v9:
		return kerr.UnsupportedVersion
	case epoch != m.current.epoch && txn:
		return kerr.IllegalGeneration
	case epoch > m.current.epoch || epoch < 0:
		return kerr.StaleMemberEpoch
	}
	return nil
}

// staleCommits marks STALE_MEMBER_EPOCH the offsets of a commit made with a
// member epoch below the member's that the member did not hold since that
// epoch: the rule of KIP-1251 (an offset committed with epoch e is
// accepted if the member got its partition at e or before, and still has
// it), so a commit racing a heartbeat that moved the member on is not
// refused for the partitions it kept.
func (cg *consumerGroup) staleCommits(r *CommitRequest, topics Topics, errs []error) {
	m := cg.members[r.MemberID]
	if m == nil || r.Generation < 0 || r.Generation >= m.current.epoch {
		return
	}
	c := &m.current
	for i, o := range r.Offsets {
		t, ok := topics.ByName(o.Topic)
		held := ok && (c.assigned.has(t.ID, o.Partition) || c.revoking.has(t.ID, o.Partition))
		if !held || c.epochOf(t.ID, o.Partition) > r.Generation {
			errs[i] = kerr.StaleMemberEpoch
		}
	}
}

// validateFetch checks an OffsetFetch v9+ naming a member of the group;
// a request naming none (an admin client) is not checked.
func (cg *consumerGroup) validateFetch(memberID string, epoch int32) error {
	if memberID == "" && epoch < 0 {
		return nil
	}
	m := cg.members[memberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID
	case epoch != m.current.epoch:
		return kerr.StaleMemberEpoch
	}
	return nil
}

// ConsumerGroupDescription is one group of a ConsumerGroupDescribe.
type ConsumerGroupDescription struct {
	Err             error
	ErrMessage      string // the text Kafka sends with Err, if any
	State           State
	Epoch           int32
	AssignmentEpoch int32
	AssignorName    string
	Members         []ConsumerMemberDescription
}

// ConsumerMemberDescription is one member of a consumer group.
type ConsumerMemberDescription struct {
	MemberID, InstanceID, RackID string
	MemberEpoch                  int32
	ClientID, ClientHost         string
	SubscribedTopicNames         []string
	SubscribedTopicRegex         string
	Assignment, TargetAssignment []TopicPartitions // with topic names
	Classic                      bool              // a classic protocol member
}

// DescribeConsumerGroup describes a consumer group (ConsumerGroupDescribe):
// GROUP_ID_NOT_FOUND for a group that does not exist or is classic.
func (c *Coordinator) DescribeConsumerGroup(group string) ConsumerGroupDescription {
	if group == "" {
		return ConsumerGroupDescription{Err: kerr.InvalidGroupID, State: Dead}
	}
	s, err := c.lock(group)
	if err != nil {
		return ConsumerGroupDescription{Err: err, State: Dead}
	}
	defer s.Unlock()
	e := s.mu.groups[group]
	switch {
	case e == nil:
		return ConsumerGroupDescription{Err: kerr.GroupIDNotFound, ErrMessage: fmt.Sprintf("Group %s not found.", group), State: Dead}
	case e.g.consumer == nil:
		return ConsumerGroupDescription{Err: kerr.GroupIDNotFound, ErrMessage: fmt.Sprintf("Group %s is not a consumer group.", group), State: Dead}
	}
	cg := e.g.consumer
	env := c.env(c.now())
	d := ConsumerGroupDescription{State: e.g.State(), Epoch: cg.epoch, AssignmentEpoch: cg.assignmentEpoch,
		AssignorName: cg.preferredAssignor(&c.policy, nil)}
	for _, m := range cg.sortedMembers() {
		d.Members = append(d.Members, ConsumerMemberDescription{
			MemberID: m.id, InstanceID: m.instanceID, RackID: m.rackID, MemberEpoch: m.current.epoch,
			ClientID: m.clientID, ClientHost: m.clientHost,
			SubscribedTopicNames: slices.Clone(m.topics), SubscribedTopicRegex: m.regex,
			Assignment: named(m.current.assigned, env.topics), TargetAssignment: named(cg.target[m.id], env.topics),
			Classic: m.classic != nil,
		})
	}
	return d
}

// named lists s with topic names (topics deleted since are left out).
func named(s tpSet, topics Topics) []TopicPartitions {
	out := make([]TopicPartitions, 0, len(s))
	for _, id := range s.ids() {
		if t, ok := topics.ByID(id); ok {
			out = append(out, TopicPartitions{TopicID: id, Topic: t.Name, Partitions: slices.Clone(s[id])})
		}
	}
	return out
}

// describeClassic is a consumer group as DescribeGroups shows it, as Kafka
// does for classic clients and tools: protocol type "consumer", the
// assignor as the protocol, each member's subscription and assignment in
// the classic consumer protocol's encoding.
func (cg *consumerGroup) describeClassic(state State, p *Policy, topics Topics) Description {
	d := Description{State: state, ProtocolType: consumerProtocolType, Protocol: cg.preferredAssignor(p, nil)}
	for _, m := range cg.sortedMembers() {
		var metadata []byte
		if m.classic != nil && len(m.classic.protocols) > 0 {
			metadata = m.classic.protocols[0].Metadata
		} else {
			meta := kmsg.ConsumerMemberMetadata{Version: 0, Topics: slices.Clone(m.topics)}
			metadata = meta.AppendTo(nil)
		}
		d.Members = append(d.Members, MemberDescription{MemberID: m.id, InstanceID: m.instanceID, ClientID: m.clientID,
			ClientHost: m.clientHost, Metadata: metadata, Assignment: encodeAssignment(m.current.assigned, topics)})
	}
	return d
}
