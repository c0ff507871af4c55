package group

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The online migration of a group with members between the protocols, as
// Kafka 4 does it under group.consumer.migration.policy (empty groups
// convert whatever the policy):
//
//   - upgrade: a ConsumerGroupHeartbeat joining a classic group of
//     consumers (protocol type "consumer", every member's metadata a
//     ConsumerProtocolSubscription) makes it a consumer group. Each
//     classic member becomes a classic member of it (consumer_classic.go)
//     at member epoch = the generation, keeping the partitions its
//     assignment gave it (and those it reports owning), which are also
//     its target; the group and assignment epochs are the generation.
//     Then the heartbeat runs as in any consumer group: a new member
//     bumps the epoch and the classic members are told to rejoin. The
//     classic group's metadata tombstone and the consumer group's
//     records are one batch.
//   - downgrade: when the last consumer protocol member leaves (or is
//     fenced) and only classic members remain, the group becomes a
//     classic group at generation = the group epoch, the members with
//     their protocols and current assignments, and a rebalance starts:
//     the consumer group's tombstones and the group's metadata are one
//     batch.

// upgradable reports whether a classic group with members may become a
// consumer group now.
func (g *Group) upgradable(p *Policy) bool {
	if !p.UpgradeAllowed || g.consumer != nil || g.state == Dead || len(g.members) == 0 ||
		g.protocolType != consumerProtocolType || len(g.members) > p.ConsumerMaxSize {
		return false
	}
	for _, m := range g.order {
		if _, ok := g.subscriptionOf(m); !ok {
			return false
		}
	}
	return true
}

// subscriptionOf is a member's subscription: its metadata for the
// generation's protocol, else for the first of its protocols that decodes.
func (g *Group) subscriptionOf(m *member) (subscription, bool) {
	ps := m.protocols
	if g.protocol != "" {
		ps = append([]Protocol{{Name: g.protocol, Metadata: m.metadataFor(g.protocol)}}, ps...)
	}
	return decodeSubscription(ps)
}

// consumerRecords are the records of the consumer group g becomes, and
// that group: each member with its subscription and classic metadata, its
// current and target assignment what its last assignment gave it plus
// what it reports owning (a partition claimed twice goes to the first in
// join order), all at epoch = the generation.
func (g *Group) consumerRecords(topics Topics) ([]consumerRecord, *consumerGroup) {
	cg := newConsumerGroup()
	gen := g.generation
	taken := map[tp]bool{}
	metas := make(map[string]*memberMeta, len(g.members))
	var recs []consumerRecord
	for _, m := range g.order {
		sub, _ := g.subscriptionOf(m)
		b := tpBuilder{}
		add := func(topic string, ps []int32) {
			t, ok := topics.ByName(topic)
			if !ok {
				return
			}
			for _, p := range ps {
				if p >= 0 && p < t.Partitions && !taken[tp{t.ID, p}] {
					taken[tp{t.ID, p}] = true
					b.add(t.ID, p)
				}
			}
		}
		var a kmsg.ConsumerMemberAssignment
		if len(m.assignment) > 0 && a.ReadFrom(m.assignment) == nil {
			for _, t := range a.Topics {
				add(t.Topic, t.Partitions)
			}
		}
		for _, o := range sub.meta.OwnedPartitions {
			add(o.Topic, o.Partitions)
		}
		assigned := b.set()
		meta := cloneMeta(memberMeta{
			instanceID: m.instanceID, clientID: m.clientID, clientHost: m.clientHost,
			topics:           slices.Compact(slices.Sorted(slices.Values(sub.meta.Topics))),
			rebalanceTimeout: m.rebalanceTimeout,
			classic:          &classicMeta{sessionTimeout: m.sessionTimeout, protocols: m.protocols},
		})
		metas[m.id] = &meta
		recs = append(recs,
			consumerRecord{typ: consumerMemberType, member: m.id, meta: meta},
			consumerRecord{typ: consumerTargetMemberType, member: m.id, target: assigned},
			consumerRecord{typ: consumerCurrentType, member: m.id, current: currentAssignment{
				epoch: gen, previousEpoch: gen, state: memberStable, assigned: assigned, revoking: tpSet{}}})
	}
	_, _, hash := cg.resolve(topics, metas)
	recs = append(recs,
		consumerRecord{typ: consumerEpochType, epoch: gen, metaHash: hash},
		consumerRecord{typ: consumerTargetEpochType, epoch: gen})
	for i := range recs {
		cg.replay(&recs[i])
	}
	return recs, cg
}

// upgradeLocked makes a classic group with members a consumer group for a
// joining ConsumerGroupHeartbeat, unlocks the shard and answers it. The
// classic members' waiting JoinGroup and SyncGroup requests are told
// REBALANCE_IN_PROGRESS: they join again, as classic members.
func (s *shard) upgradeLocked(e *entry, now int64, r *ConsumerHeartbeatRequest) ConsumerHeartbeatResult {
	env := s.c.env(now)
	env.policy = env.policy.withGroupConfigs(r.Configs)
	pre, cg := e.g.consumerRecords(env.topics)
	out := cg.heartbeat(&env, r, newMemberID)
	if out.res.Err != nil {
		s.finishLocked(e, now)
		return out.res
	}
	if err := writeConvertingLocked(s, e.g.id, append(pre, out.recs...), true, nil); err != nil {
		s.c.logger.Warn("cannot upgrade classic group to consumer group", "group", e.g.id, "partition", s.Partition, "err", err)
		s.finishLocked(e, now)
		return ConsumerHeartbeatResult{Err: storeErr(err)}
	}
	e.g.resetClassic(now, kerr.RebalanceInProgress)
	e.g.consumer = cg
	replayRecords(&e.g.consumer, out.recs, newConsumerGroup)
	for _, m := range cg.members {
		if m.classic != nil {
			m.sessionDeadline = now + int64(m.classic.sessionTimeout)
		}
	}
	cg.apply(&out)
	s.c.logger.Info("classic group upgraded to consumer group", "group", e.g.id, "members", len(cg.members))
	s.finishLocked(e, now)
	return out.res
}

// downgradable reports whether a consumer group may become a classic group
// now that a consumer protocol member left: only classic members remain.
func (cg *consumerGroup) downgradable(p *Policy) bool {
	if !p.DowngradeAllowed || len(cg.members) == 0 || len(cg.members) > p.MaxSize {
		return false
	}
	for _, m := range cg.members {
		if m.classic == nil {
			return false
		}
	}
	return true
}

// downgradeLocked makes a consumer group whose members are all classic a
// classic group, which starts a rebalance.
func (s *shard) downgradeLocked(e *entry, now int64) {
	g, cg := e.g, e.g.consumer
	topics := s.c.env(now).topics
	var recs []consumerRecord
	members := cg.sortedMembers()
	for _, m := range members {
		recs = append(recs,
			consumerRecord{typ: consumerCurrentType, member: m.id, tombstone: true},
			consumerRecord{typ: consumerMemberType, member: m.id, tombstone: true})
	}
	recs = append(recs, cg.deleteRecords()...)

	g.resetClassic(now, kerr.RebalanceInProgress)
	g.protocolType, g.generation = consumerProtocolType, cg.epoch
	for _, m := range members {
		g.add(&member{
			id: m.id, instanceID: m.instanceID, clientID: m.clientID, clientHost: m.clientHost,
			rebalanceTimeout: m.rebalanceTimeout, sessionTimeout: m.classic.sessionTimeout,
			protocolType: consumerProtocolType, protocols: m.classic.protocols,
			assignment: encodeAssignment(m.current.assigned, topics),
			deadline:   now + int64(m.classic.sessionTimeout),
		})
	}
	protocol, ok := g.selectProtocol()
	if !ok {
		g.resetClassic(now, nil) // no protocol they all support: stay
		return
	}
	g.protocol = protocol
	g.transition(now, Stable)
	if err := writeConvertingLocked(s, g.id, recs, false, g.metadataValue(nil)); err != nil {
		s.c.logger.Warn("cannot downgrade consumer group to classic group", "group", g.id, "partition", s.Partition, "err", err)
		g.resetClassic(now, nil)
		return
	}
	replayRecords(&g.consumer, recs, newConsumerGroup)
	g.prepareRebalance(now)
	s.c.logger.Info("consumer group downgraded to classic group", "group", g.id, "members", len(g.members))
}

// resetClassic empties the classic side of a group (its members move to,
// or stay in, the consumer group): waiting JoinGroup and SyncGroup
// requests get err.
func (g *Group) resetClassic(now int64, err error) {
	for _, m := range g.order {
		g.invokeJoin(m, joinError(err, m.id))
		g.invokeSync(m, SyncResult{Err: err})
	}
	clear(g.members)
	g.order = nil
	clear(g.static)
	clear(g.pending)
	clear(g.pendingSync)
	clear(g.votes)
	g.awaitingJoin, g.leader, g.protocol, g.newMemberAdded = 0, "", "", false
	g.join.deadline, g.join.initial, g.join.remaining = 0, false, 0
	g.syncDeadline = 0
	g.transition(now, Empty)
}
