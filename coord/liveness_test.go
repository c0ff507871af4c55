package coord

import (
	"slices"
	"testing"
	"time"
)

// waitPartition waits until cond holds for a partition, or the test's
// context ends.
func waitPartition(t *testing.T, c *Controller, topic string, p int32, cond func(leader int32, isr []int32) bool) {
	t.Helper()
	ctx := ctx(t)
	for {
		q := partition(c, topic, p)
		if cond(q.Leader, q.ISR) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s-%d never got there: %+v", topic, p, q)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// With auto.leader.rebalance.enable, the quorum leader's controller moves
// a leadership back to its preferred replica every
// leader.imbalance.check.interval.seconds.
func TestAutoLeaderRebalance(t *testing.T) {
	c := withBrokers(t, 2, func(cfg *Config) {
		cfg.AutoLeaderRebalance, cfg.LeaderImbalanceCheckInterval = true, 200*time.Millisecond
	})
	mustCreate(t, c, TopicSpec{Name: "b", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {2, 1}}})
	setPartition(t, c, "b", 0, 1, 1, 2)
	waitPartition(t, c, "b", 0, func(leader int32, _ []int32) bool { return leader == 2 })
}

// unclean.leader.election.enable as the node's static config: a partition
// whose only ISR member is fenced gets a leader from outside the ISR.
func TestUncleanLeaderElectionConfig(t *testing.T) {
	c := withBrokers(t, 2, func(cfg *Config) { cfg.UncleanLeaderElection = true })
	mustCreate(t, c, TopicSpec{Name: "u", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {2, 1}}})
	fence(t, c, 2)
	setPartition(t, c, "u", 0, -1, 2) // 2 alone in sync, and fenced
	waitPartition(t, c, "u", 0, func(leader int32, isr []int32) bool { return leader == 1 && slices.Equal(isr, []int32{1}) })
}
