package control

import (
	"math/rand/v2"
	"slices"
	"testing"

	"kzero/coord/metadata"
)

func brokers(racks ...string) []*metadata.Broker {
	var bs []*metadata.Broker
	for i, r := range racks {
		bs = append(bs, &metadata.Broker{ID: int32(i + 1), Rack: r})
	}
	return bs
}

// TestPlacementEven places many partitions and checks Kafka's promises:
// distinct replicas, leaders and replicas spread evenly over brokers.
func TestPlacementEven(t *testing.T) {
	for _, tc := range []struct {
		brokers []*metadata.Broker
		rf      int
	}{
		{brokers("", "", ""), 3},
		{brokers("", "", "", "", ""), 2},
		{brokers("", ""), 1},
		{brokers("", "", "", "", "", ""), 3},
	} {
		n := len(tc.brokers)
		parts := 12 * n
		pl := newPlacer(tc.brokers, tc.rf, rand.New(rand.NewPCG(1, 2)))
		leaders := map[int32]int{}
		replicas := map[int32]int{}
		for p := range parts {
			rs := pl.Replicas(int32(p))
			if len(rs) != tc.rf {
				t.Fatalf("partition %d: %v", p, rs)
			}
			sorted := slices.Clone(rs)
			slices.Sort(sorted)
			if len(slices.Compact(sorted)) != tc.rf {
				t.Fatalf("partition %d: duplicate replica in %v", p, rs)
			}
			leaders[rs[0]]++
			for _, r := range rs {
				replicas[r]++
			}
		}
		for _, b := range tc.brokers {
			if leaders[b.ID] != parts/n {
				t.Fatalf("%d brokers rf %d: leaders %v", n, tc.rf, leaders)
			}
			if replicas[b.ID] != parts*tc.rf/n {
				t.Fatalf("%d brokers rf %d: replicas %v", n, tc.rf, replicas)
			}
		}
	}
}

// TestPlacementRacks spreads each partition's replicas over distinct racks
// while there are racks left to use.
func TestPlacementRacks(t *testing.T) {
	bs := brokers("a", "a", "b", "b", "c", "c")
	rack := map[int32]string{}
	for _, b := range bs {
		rack[b.ID] = b.Rack
	}
	for seed := range uint64(20) {
		pl := newPlacer(bs, 3, rand.New(rand.NewPCG(seed, seed)))
		for p := range int32(30) {
			rs := pl.Replicas(p)
			seen := map[string]bool{}
			for _, r := range rs {
				seen[rack[r]] = true
			}
			if len(seen) != 3 {
				t.Fatalf("seed %d partition %d: %v on racks %v", seed, p, rs, seen)
			}
		}
		// More replicas than racks: all racks used, no broker twice.
		rs := pl.replicas(0, 5)
		sorted := slices.Clone(rs)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != 5 {
			t.Fatalf("rf 5: %v", rs)
		}
	}
}
