package control

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
)

// Placer assigns the replicas of new partitions to brokers the way Kafka
// spreads them: brokers in a ring (alternating racks when brokers have
// them), partition p's first replica (its leader) at position start+p, the
// followers at increasing distances from it that shift each time the
// partitions wrap around the ring, so leaders and followers both spread
// evenly, never two replicas of a partition on one broker, and a
// partition's replicas on as many racks as there are. start and shift are
// random per topic, so topics do not all lead on the same broker.
//
// It places only on active brokers (unfenced, not shutting down): a fenced
// broker would hold a replica that cannot join the ISR.
type Placer struct {
	ring  []*metadata.Broker
	rf    int
	racks int
	start int
	shift int
}

// NewPlacer returns a placer of rf replicas per partition over img's active
// brokers, or INVALID_REPLICATION_FACTOR (Kafka's messages) when rf is not
// positive or there are fewer active brokers than rf.
func NewPlacer(img *metadata.Image, rf int, rng *rand.Rand) (*Placer, error) {
	if rf <= 0 {
		return nil, metadata.Reject(kerr.InvalidReplicationFactor, "Invalid replication factor %d: the replication factor must be positive.", rf)
	}
	var active []*metadata.Broker
	for _, b := range img.Brokers() {
		if b.Active() {
			active = append(active, b)
		}
	}
	if len(active) == 0 {
		return nil, metadata.Reject(kerr.InvalidReplicationFactor, "Unable to replicate the partition %d time(s): All brokers are currently fenced or in controlled shutdown.", rf)
	}
	if rf > len(active) {
		return nil, metadata.Reject(kerr.InvalidReplicationFactor, "Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered and active (unfenced, not shutting down).", rf, rf, len(active))
	}
	return newPlacer(active, rf, rng), nil
}

func newPlacer(brokers []*metadata.Broker, rf int, rng *rand.Rand) *Placer {
	pl := &Placer{ring: rackAlternated(brokers), rf: rf}
	seen := map[string]bool{}
	for _, b := range brokers {
		seen[b.Rack] = true
	}
	pl.racks = len(seen)
	if n := len(pl.ring); n > 0 {
		pl.start = rng.IntN(n)
		pl.shift = rng.IntN(n)
	}
	return pl
}

// rackAlternated orders brokers so that consecutive ones sit on different
// racks where possible: rack by rack in turn, each rack's brokers by id.
// Brokers without a rack form one rack of their own.
func rackAlternated(brokers []*metadata.Broker) []*metadata.Broker {
	byRack := map[string][]*metadata.Broker{}
	for _, b := range brokers {
		byRack[b.Rack] = append(byRack[b.Rack], b)
	}
	racks := make([]string, 0, len(byRack))
	for r, bs := range byRack {
		slices.SortFunc(bs, func(a, b *metadata.Broker) int { return cmp.Compare(a.ID, b.ID) })
		racks = append(racks, r)
	}
	slices.Sort(racks)
	ring := make([]*metadata.Broker, 0, len(brokers))
	for i := 0; len(ring) < len(brokers); i++ {
		for _, r := range racks {
			if i < len(byRack[r]) {
				ring = append(ring, byRack[r][i])
			}
		}
	}
	return ring
}

// Replicas returns partition p's replicas, the first its leader.
func (pl *Placer) Replicas(p int32) []int32 {
	return pl.replicas(p, pl.rf)
}

// replicas returns partition p's rf replicas; rf is at most the broker count.
func (pl *Placer) replicas(p int32, rf int) []int32 {
	n := len(pl.ring)
	first := (int(p) + pl.start) % n
	shift := pl.shift + int(p)/n // the followers' distance grows each lap
	out := make([]int32, 0, rf)
	out = append(out, pl.ring[first].ID)
	if rf == 1 {
		return out
	}
	usedRacks := map[string]bool{pl.ring[first].Rack: true}
	chosen := map[int32]bool{pl.ring[first].ID: true}
	// Two passes over the other brokers: the first takes only racks not yet
	// used (while some remain), the second fills up with any.
	for pass := 0; pass < 2 && len(out) < rf; pass++ {
		for j := 0; j < n-1 && len(out) < rf; j++ {
			b := pl.ring[(first+1+(shift+j)%(n-1))%n]
			if chosen[b.ID] {
				continue
			}
			if pass == 0 && len(usedRacks) < pl.racks && usedRacks[b.Rack] {
				continue
			}
			out = append(out, b.ID)
			chosen[b.ID] = true
			usedRacks[b.Rack] = true
		}
	}
	return out
}

// NewPartition is partition p of topic id as Kafka creates it on these
// replicas: the ISR is the active replicas, the leader the first of them.
// INVALID_REPLICA_ASSIGNMENT when none is active (a manual assignment
// naming only fenced or shutting-down brokers).
func NewPartition(img *metadata.Image, id [16]byte, p int32, replicas []int32) (*metadata.PartitionRecord, error) {
	var isr []int32
	for _, r := range replicas {
		if b, ok := img.Broker(r); ok && b.Active() {
			isr = append(isr, r)
		}
	}
	if len(isr) == 0 {
		return nil, metadata.Reject(kerr.InvalidReplicaAssignment, "All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.", p)
	}
	return &metadata.PartitionRecord{TopicID: id, Partition: p, Replicas: slices.Clone(replicas), ISR: isr, Leader: isr[0]}, nil
}
