package control

import (
	"slices"

	"kzero/coord/metadata"
)

// election is how a change picks a leader (Kafka's
// PartitionChangeBuilder.Election).
type election int8

const (
	// electOnline keeps the leader while it may lead, else takes the first
	// replica, in replica order, that is in the ISR and may lead.
	electOnline election = iota
	// electPreferred takes the first replica if it is in the ISR and may
	// lead; else as electOnline.
	electPreferred
	// electUnclean is electOnline, then, when no ISR member may lead, the
	// first replica that may, from outside the ISR: its ISR becomes itself
	// alone and it is Recovering. Records written meanwhile may be lost.
	electUnclean
)

// change is a partition's target state, made into the PartitionChange
// that reaches it (Kafka's PartitionChangeBuilder, without eligible leader
// replicas: kzero runs as Kafka with eligible.leader.replicas.version=0).
// Callers set the targets they change; the rest stay as they are.
type change struct {
	cur      metadata.Partition
	isr      []int32
	replicas []int32
	adding   []int32
	removing []int32
	recovery metadata.LeaderRecovery
	election election
	mayLead  func(id int32) bool // unfenced, not shutting down, ...
}

func newChange(p metadata.Partition, mayLead func(int32) bool) *change {
	return &change{cur: p, isr: p.ISR, replicas: p.Replicas, adding: p.AddingReplicas, removing: p.RemovingReplicas,
		recovery: p.LeaderRecovery, mayLead: mayLead}
}

// build returns the record that moves the partition of topic id to the
// targets, nil when nothing changes. In order: a reassignment whose new
// replicas are all in the target ISR completes; a leader is elected; the
// leader epoch is bumped when replicas leave the assignment; the ISR is set
// unless the target is empty (the last ISR member of a partition stays in
// it, leaderless, so that it can lead again cleanly when it returns).
func (c *change) build(id [16]byte) *metadata.PartitionChange {
	rec := &metadata.PartitionChange{TopicID: id, Partition: c.cur.Partition, PartitionEpoch: c.cur.PartitionEpoch + 1,
		Leader: metadata.NoLeaderChange, LeaderRecovery: metadata.RecoveryNoChange}
	c.completeReassignment()
	c.elect(rec)
	if rec.Leader == metadata.NoLeaderChange && !containsAll(c.replicas, c.cur.Replicas) {
		rec.Leader = c.cur.Leader // fence the removed replicas' view of this leader epoch
	}
	if rec.ISR == nil && len(c.isr) > 0 && !slices.Equal(c.isr, c.cur.ISR) {
		rec.ISR = slices.Clone(c.isr)
	}
	if !slices.Equal(c.replicas, c.cur.Replicas) || !slices.Equal(c.adding, c.cur.AddingReplicas) ||
		!slices.Equal(c.removing, c.cur.RemovingReplicas) {
		rec.Replicas, rec.AddingReplicas, rec.RemovingReplicas = slices.Clone(c.replicas), slices.Clone(c.adding), slices.Clone(c.removing)
	}
	if c.recovery != c.cur.LeaderRecovery {
		rec.LeaderRecovery = c.recovery
	}
	if rec.Leader == metadata.NoLeaderChange && rec.ISR == nil && rec.Replicas == nil && rec.LeaderRecovery == metadata.RecoveryNoChange {
		return nil
	}
	return rec
}

// completeReassignment ends a reassignment once the target ISR, less the
// replicas being removed, holds every remaining replica.
func (c *change) completeReassignment() {
	if len(c.adding) == 0 && len(c.removing) == 0 {
		return
	}
	isr, replicas := c.isr, c.replicas
	if len(c.removing) > 0 {
		isr, replicas = without(isr, c.removing), without(replicas, c.removing)
		if len(isr) == 0 || len(replicas) == 0 {
			return
		}
	}
	if !containsAll(isr, replicas) {
		return
	}
	c.isr, c.replicas, c.adding, c.removing = isr, replicas, nil, nil
}

func (c *change) elect(rec *metadata.PartitionChange) {
	leader, unclean := c.choose()
	if leader == c.cur.Leader {
		return
	}
	rec.Leader = leader
	if unclean {
		rec.ISR = []int32{leader}
		if c.cur.LeaderRecovery != metadata.Recovering {
			rec.LeaderRecovery = metadata.Recovering
		}
	}
}

func (c *change) choose() (leader int32, unclean bool) {
	valid := func(id int32) bool { return slices.Contains(c.isr, id) && c.mayLead(id) }
	if c.election == electPreferred && len(c.replicas) > 0 && valid(c.replicas[0]) {
		return c.replicas[0], false
	}
	if valid(c.cur.Leader) {
		return c.cur.Leader, false
	}
	for _, id := range c.replicas {
		if valid(id) {
			return id, false
		}
	}
	if c.election == electUnclean {
		for _, id := range c.replicas {
			if c.mayLead(id) {
				return id, true
			}
		}
	}
	return metadata.NoLeader, false
}

func without(a, drop []int32) []int32 {
	out := make([]int32, 0, len(a))
	for _, x := range a {
		if !slices.Contains(drop, x) {
			out = append(out, x)
		}
	}
	return out
}

func containsAll(a, all []int32) bool {
	for _, x := range all {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}
