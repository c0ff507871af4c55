package control

import (
	"time"

	"kzero/coord/metadata"
)

// Tick makes the decisions that time drives; the raft loop calls it
// periodically (say every broker.heartbeat.interval.ms):
//
//   - a broker whose session expired (no heartbeat for longer than
//     broker.session.timeout.ms) is fenced: it leaves every ISR and its
//     leaderships move, one group per broker (Kafka fences one at a time,
//     so that each fencing sees the one before);
//   - partitions without a leader whose topic allows an unclean election
//     get one from outside the ISR when no ISR member can lead;
//   - with auto.leader.rebalance.enable, every
//     leader.imbalance.check.interval.seconds, leaderships move back to
//     preferred replicas that are in the ISR and active.
//
// Each election and rebalance is a group of its own, so that one decided
// on a partition that changed meanwhile fails alone. At most
// MaxElectionsPerTick partitions move by each in one Tick; the next Tick
// goes on.
func (c *Controller) Tick(img *metadata.Image, now time.Time) [][]metadata.Record {
	c.sync(img, now)
	v := newView(img)
	for _, b := range img.Brokers() {
		b = v.broker(b.ID)
		if b == nil || b.Fenced || c.validSession(b, now) {
			continue
		}
		v.emit(c.leave(v, b.ID, &metadata.BrokerChange{ID: b.ID, Epoch: b.Epoch, Fence: metadata.Fence}))
	}
	for _, rec := range c.electLeaderless(v, true) {
		v.emit([]metadata.Record{rec})
	}
	if c.cfg.AutoLeaderRebalance {
		if c.nextRebalance.IsZero() {
			c.nextRebalance = now.Add(c.cfg.ImbalanceCheckInterval)
		}
		if !now.Before(c.nextRebalance) {
			c.nextRebalance = now.Add(c.cfg.ImbalanceCheckInterval)
			for _, rec := range c.rebalance(v) {
				v.emit([]metadata.Record{rec})
			}
		}
	}
	return v.groups
}

// rebalance returns the preferred-leader elections of Kafka's automatic
// leader rebalance: every partition whose leader is not its preferred
// replica, when that replica is in the ISR and active (KRaft's rule), or,
// with ImbalancePercentage set, only the partitions of preferred brokers
// whose share of partitions led by others exceeds it (the ZooKeeper
// controller's rule).
func (c *Controller) rebalance(v *view) []metadata.Record {
	imbalanced := func(int32) bool { return true }
	if pct := c.cfg.ImbalancePercentage; pct > 0 {
		total, others := map[int32]int{}, map[int32]int{}
		v.each(func(_ *metadata.Topic, p metadata.Partition) {
			pref := p.PreferredLeader()
			total[pref]++
			if p.Leader != pref {
				others[pref]++
			}
		})
		imbalanced = func(b int32) bool { return others[b]*100 > pct*total[b] }
	}
	var group []metadata.Record
	v.each(func(t *metadata.Topic, p metadata.Partition) {
		pref := p.PreferredLeader()
		if p.Leader == pref || len(group) >= MaxElectionsPerTick || !imbalanced(pref) {
			return
		}
		ch := c.change(v, t, p, v.active)
		ch.election = electPreferred
		if rec := ch.build(t.ID); rec != nil {
			group = v.add(group, rec)
		}
	})
	return group
}
