package group

import (
	"cmp"
	"slices"
)

// rangeAssignor is KIP-848's server-side "range" assignor: each topic's
// partitions are split into contiguous ranges, one per member subscribing
// to it, in member order (instance id for static members, else member id),
// the first members taking one more when the partitions do not divide
// evenly. Members with the same subscription get the same partition numbers
// of every topic with the same partition count, so co-partitioned topics
// stay together (a join of topics A and B sees A-3 and B-3 on one member).
type rangeAssignor struct{}

func (rangeAssignor) assign(spec *assignSpec) map[string]tpSet {
	built := make(map[string]tpBuilder, len(spec.members))
	for _, m := range spec.members {
		built[m.id] = tpBuilder{}
	}
	for _, t := range spec.sortedTopics() {
		var subs []*assignMember
		for i := range spec.members {
			m := &spec.members[i]
			if _, ok := slices.BinarySearchFunc(m.topics, t.id, compareIDs); ok {
				subs = append(subs, m)
			}
		}
		if len(subs) == 0 {
			continue
		}
		slices.SortFunc(subs, func(a, b *assignMember) int { return cmp.Compare(rangeKey(a), rangeKey(b)) })
		n := int32(len(subs))
		per, extra := t.partitions/n, t.partitions%n
		next := int32(0)
		for i, m := range subs {
			count := per
			if int32(i) < extra {
				count++
			}
			for p := next; p < next+count; p++ {
				built[m.id].add(t.id, p)
			}
			next += count
		}
	}
	out := make(map[string]tpSet, len(built))
	for id, b := range built {
		out[id] = b.set()
	}
	return out
}

// rangeKey orders members for the range assignor: a static member by its
// instance id, so it keeps its ranges across restarts.
func rangeKey(m *assignMember) string {
	if m.instanceID != "" {
		return "0" + m.instanceID
	}
	return "1" + m.id
}

func compareIDs(a, b topicID) int {
	for i := range a {
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}
