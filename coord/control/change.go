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
// that reaches it (Kafka's PartitionChangeBuilder). Callers set the
// targets they change; the rest stay as they are.
//
// With eligible leader replicas (KIP-966, Kafka's
// eligible.leader.replicas.version=1, the default of new Kafka 4.1+
// clusters; Config.ELR): the HW only moves while the ISR holds at least
// min.insync.replicas (replica/isr.go), so a replica that leaves an ISR
// already below that holds every committed record. It joins the ELR, the
// ISR may empty, and when it does a leader comes from the ELR, cleanly;
// with ISR and ELR both empty, the last known leader (LastKnownELR) may
// lead again, as an unclean election. An unclean election empties the
// ELR; an ISR back at min.insync.replicas clears it.
type change struct {
	cur      metadata.Partition
	isr      []int32
	replicas []int32
	adding   []int32
	removing []int32
	recovery metadata.LeaderRecovery
	election election
	mayLead  func(id int32) bool // unfenced, not shutting down, ...

	elrEnabled      bool
	minISR          int
	elr             []int32
	uncleanShutdown int32 // a broker back from an unclean shutdown: it leaves the ELR; -1 none
}

func newChange(p metadata.Partition, mayLead func(int32) bool) *change {
	return &change{cur: p, isr: p.ISR, replicas: p.Replicas, adding: p.AddingReplicas, removing: p.RemovingReplicas,
		recovery: p.LeaderRecovery, mayLead: mayLead, elr: p.ELR, uncleanShutdown: -1}
}

// change is newChange with the controller's ELR settings for topic t.
func (c *Controller) change(v *view, t *metadata.Topic, p metadata.Partition, mayLead func(int32) bool) *change {
	ch := newChange(p, mayLead)
	if c.cfg.ELR {
		ch.elrEnabled, ch.minISR = true, c.cfg.MinInsync(v.img, t)
	}
	return ch
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
	c.trackELR()
	c.elect(rec)
	if rec.Leader == metadata.NoLeaderChange && !containsAll(c.replicas, c.cur.Replicas) {
		rec.Leader = c.cur.Leader // fence the removed replicas' view of this leader epoch
	}
	c.recordELR(rec)
	if rec.ISR == nil && (len(c.isr) > 0 || c.elrEnabled) && !slices.Equal(c.isr, c.cur.ISR) {
		rec.ISR = slices.Clone(c.isr)
		rec.EmptyISR = len(c.isr) == 0
	}
	c.recordLastKnownLeader(rec)
	if !slices.Equal(c.replicas, c.cur.Replicas) || !slices.Equal(c.adding, c.cur.AddingReplicas) ||
		!slices.Equal(c.removing, c.cur.RemovingReplicas) {
		rec.Replicas, rec.AddingReplicas, rec.RemovingReplicas = slices.Clone(c.replicas), slices.Clone(c.adding), slices.Clone(c.removing)
	}
	if c.recovery != c.cur.LeaderRecovery {
		rec.LeaderRecovery = c.recovery
	}
	if rec.Leader == metadata.NoLeaderChange && rec.ISR == nil && !rec.EmptyISR && rec.Replicas == nil &&
		rec.LeaderRecovery == metadata.RecoveryNoChange && !rec.SetELR && !rec.SetLastKnownELR {
		return nil
	}
	return rec
}

// trackELR sets the target ELR: empty while the target ISR holds
// min.insync.replicas; else the current ELR and ISR less the target ISR
// (whoever leaves an ISR below min.insync.replicas becomes eligible) and
// less a broker back from an unclean shutdown.
func (c *change) trackELR() {
	if !c.elrEnabled {
		return
	}
	if len(c.isr) >= c.minISR {
		c.elr = nil
		return
	}
	var elr []int32
	for _, id := range slices.Concat(c.elr, c.cur.ISR) {
		if !slices.Contains(c.isr, id) && id != c.uncleanShutdown && !slices.Contains(elr, id) {
			elr = append(elr, id)
		}
	}
	c.elr = elr
}

// recordELR writes the target ELR into rec; an unclean election (rec's ISR
// already set) or ELR turned off empties it.
func (c *change) recordELR(rec *metadata.PartitionChange) {
	if rec.ISR != nil || !c.elrEnabled {
		c.elr = nil
	}
	c.elr = slices.DeleteFunc(slices.Clone(c.elr), func(id int32) bool { return !slices.Contains(c.replicas, id) }) // reassigned away
	if !slices.Equal(c.elr, c.cur.ELR) {
		rec.SetELR, rec.ELR = true, slices.Clone(c.elr)
	}
}

// recordLastKnownLeader keeps the last leader of a partition whose ISR
// empties (the first time), and forgets it once the partition has a
// leader again, or when it is no longer a replica.
func (c *change) recordLastKnownLeader(rec *metadata.PartitionChange) {
	cur := c.cur.LastKnownELR
	next := c.lastKnown()
	switch {
	case !c.elrEnabled:
		next = nil
	case rec.EmptyISR && c.cur.Leader != metadata.NoLeader && slices.Contains(c.replicas, c.cur.Leader):
		next = []int32{c.cur.Leader}
	case rec.Leader >= 0 || c.cur.Leader != metadata.NoLeader && rec.Leader != metadata.NoLeader:
		next = nil
	}
	if !slices.Equal(next, cur) {
		rec.SetLastKnownELR, rec.LastKnownELR = true, next
	}
}

// lastKnown is the partition's last known leader list, less replicas
// reassigned away.
func (c *change) lastKnown() []int32 {
	return slices.DeleteFunc(slices.Clone(c.cur.LastKnownELR), func(id int32) bool { return !slices.Contains(c.replicas, id) })
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
	if slices.Contains(c.elr, leader) {
		// A clean election from the ELR: the new leader is the ISR.
		c.isr = []int32{leader}
		c.elr = without(c.elr, []int32{leader})
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
	// A leader comes from the ISR, or from the ELR once the ISR is empty.
	valid := func(id int32) bool {
		return (slices.Contains(c.isr, id) || len(c.isr) == 0 && slices.Contains(c.elr, id)) && c.mayLead(id)
	}
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
	// With ISR and ELR empty, the last known leader, if it may lead: it
	// had every record the others had, but it may have lost some in an
	// unclean shutdown, so its election counts as unclean.
	if last := c.lastKnown(); c.elrEnabled && len(c.isr) == 0 && len(c.elr) == 0 && len(last) == 1 && c.mayLead(last[0]) {
		return last[0], true
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
