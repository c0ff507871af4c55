package metadata

import (
	"fmt"
	"slices"
)

// With returns the partition after change c, by Kafka's rules (see
// PartitionChange): the partition epoch goes up by one, the leader epoch
// goes up by one when c sets a leader (even the same one). p is not
// modified; the result shares no slice with c.
func (p *Partition) With(c *PartitionChange) Partition {
	n := *p
	n.PartitionEpoch++
	if c.Leader != NoLeaderChange {
		n.Leader = c.Leader
		n.LeaderEpoch++
	}
	if len(c.ISR) > 0 {
		n.ISR = slices.Clone(c.ISR)
	} else if c.EmptyISR {
		n.ISR = nil
	}
	if c.SetELR {
		n.ELR = slices.Clone(c.ELR)
	}
	if c.SetLastKnownELR {
		n.LastKnownELR = slices.Clone(c.LastKnownELR)
	}
	if len(c.Replicas) > 0 {
		n.Replicas = slices.Clone(c.Replicas)
		n.AddingReplicas = slices.Clone(c.AddingReplicas)
		n.RemovingReplicas = slices.Clone(c.RemovingReplicas)
	}
	if c.LeaderRecovery != RecoveryNoChange {
		n.LeaderRecovery = c.LeaderRecovery
	}
	return n
}

// partition is the state r sets; it shares r's slices.
func (r *PartitionRecord) partition() Partition {
	return Partition{Partition: r.Partition, Replicas: r.Replicas, ISR: r.ISR, Leader: r.Leader,
		LeaderEpoch: r.LeaderEpoch, PartitionEpoch: r.PartitionEpoch, AddingReplicas: r.AddingReplicas,
		RemovingReplicas: r.RemovingReplicas, LeaderRecovery: r.LeaderRecovery, ELR: r.ELR, LastKnownELR: r.LastKnownELR}
}

// problem says what is wrong with a partition's state, "" if nothing: the
// rules every PartitionChange must leave in place.
func (p *Partition) problem() string {
	if len(p.Replicas) == 0 || len(p.Replicas) > 1<<15 {
		return fmt.Sprintf("%d replicas", len(p.Replicas))
	}
	if dup(p.Replicas) {
		return fmt.Sprintf("replicas %v repeat a broker", p.Replicas)
	}
	if dup(p.ISR) || !subset(p.ISR, p.Replicas) {
		return fmt.Sprintf("ISR %v is not a set of replicas %v", p.ISR, p.Replicas)
	}
	if len(p.ISR) == 0 && p.Leader != NoLeader {
		return fmt.Sprintf("leader %d with an empty ISR", p.Leader)
	}
	if dup(p.ELR) || !subset(p.ELR, p.Replicas) || dup(p.LastKnownELR) || !subset(p.LastKnownELR, p.Replicas) {
		return fmt.Sprintf("eligible leader replicas %v and last known %v must be sets of replicas %v", p.ELR, p.LastKnownELR, p.Replicas)
	}
	for _, e := range p.ELR {
		if slices.Contains(p.ISR, e) {
			return fmt.Sprintf("replica %d is both in the ISR and eligible", e)
		}
	}
	if p.Leader != NoLeader && !slices.Contains(p.ISR, p.Leader) {
		return fmt.Sprintf("leader %d is not in the ISR %v", p.Leader, p.ISR)
	}
	if dup(p.AddingReplicas) || dup(p.RemovingReplicas) || !subset(p.AddingReplicas, p.Replicas) || !subset(p.RemovingReplicas, p.Replicas) {
		return fmt.Sprintf("adding %v and removing %v must be sets of replicas %v", p.AddingReplicas, p.RemovingReplicas, p.Replicas)
	}
	for _, a := range p.AddingReplicas {
		if slices.Contains(p.RemovingReplicas, a) {
			return fmt.Sprintf("replica %d is both added and removed", a)
		}
	}
	if p.LeaderRecovery != Recovered && p.LeaderRecovery != Recovering {
		return fmt.Sprintf("leader recovery state %d", p.LeaderRecovery)
	}
	return ""
}

func subset(a, of []int32) bool {
	for _, x := range a {
		if !slices.Contains(of, x) {
			return false
		}
	}
	return true
}

func dup(a []int32) bool {
	for i, x := range a {
		if slices.Contains(a[i+1:], x) {
			return true
		}
	}
	return false
}
