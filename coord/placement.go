package coord

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"kzero/coord/metadata"
)

// placer assigns replicas to brokers the way Kafka spreads them: brokers in
// a ring (alternating racks when brokers have them), partition p's first
// replica (its leader) at position start+p, the followers at increasing
// distances from it that shift each time the partitions wrap around the
// ring, so leaders and followers both spread evenly. start and shift are
// random per topic, so topics do not all lead on the same broker.
type placer struct {
	ring  []*metadata.Broker
	racks int
	start int
	shift int
}

func newPlacer(brokers []*metadata.Broker, rng *rand.Rand) *placer {
	pl := &placer{ring: rackAlternated(brokers)}
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

// replicas returns partition p's replicas; rf is at most the broker count.
func (pl *placer) replicas(p int32, rf int) []int32 {
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
