package group

import (
	"cmp"
	"slices"
)

// uniformAssignor is KIP-848's default server-side assignor ("uniform"): it
// spreads partitions evenly over the members, counting all topics
// together, and keeps as many of each member's current partitions as the
// balance allows, so a rebalance moves few partitions.
//
// When every member subscribes to the same topics, each member gets
// floor(P/N) or that plus one partitions: members keep their partitions up
// to their quota (those above their quota first get the extra ones), and
// the partitions left go, in topic and partition order, to the members
// below their quota. Otherwise (heterogeneous subscriptions) members keep
// the partitions of topics they still subscribe to; the partitions left
// go, topics with the fewest subscribers first, to the least loaded
// subscriber; then partitions move, one at a time, from a member to a
// co-subscriber of the topic whose load is at least two lower, until no
// such move is left (each move lowers the sum of squared loads, so this
// ends).
type uniformAssignor struct{}

func (uniformAssignor) assign(spec *assignSpec) map[string]tpSet {
	if len(spec.members) == 0 {
		return map[string]tpSet{}
	}
	if spec.homogeneous() {
		return uniformHomogeneous(spec)
	}
	return uniformHeterogeneous(spec)
}

// tp is one partition of a topic.
type tp struct {
	id topicID
	p  int32
}

func uniformHomogeneous(spec *assignSpec) map[string]tpSet {
	var all []tp
	valid := map[topicID]int32{}
	for _, t := range spec.sortedTopics() {
		if _, ok := slices.BinarySearchFunc(spec.members[0].topics, t.id, compareIDs); !ok {
			continue
		}
		valid[t.id] = t.partitions
		for p := range t.partitions {
			all = append(all, tp{t.id, p})
		}
	}
	n := len(spec.members)
	minQuota, extra := len(all)/n, len(all)%n
	taken := make(map[tp]bool, len(all))
	retained := make([][]tp, n)
	for i, m := range spec.members {
		for _, id := range m.current.ids() {
			for _, p := range m.current[id] {
				x := tp{id, p}
				if p < valid[id] && !taken[x] {
					retained[i] = append(retained[i], x)
					taken[x] = true
				}
			}
		}
	}
	quota := make([]int, n)
	for i := range quota {
		quota[i] = minQuota
	}
	// The extra partitions go first to members already holding more
	// than the minimum, so they need not give them up.
	for _, above := range []bool{true, false} {
		for i := range quota {
			if extra > 0 && quota[i] == minQuota && (len(retained[i]) > minQuota) == above {
				quota[i]++
				extra--
			}
		}
	}
	clear(taken)
	out := make([]tpBuilder, n)
	for i := range out {
		out[i] = tpBuilder{}
		for _, x := range retained[i][:min(len(retained[i]), quota[i])] {
			out[i].add(x.id, x.p)
			taken[x] = true
			quota[i]--
		}
	}
	next := 0
	for i := range out {
		for ; quota[i] > 0 && next < len(all); next++ {
			if x := all[next]; !taken[x] {
				out[i].add(x.id, x.p)
				quota[i]--
			}
		}
	}
	res := make(map[string]tpSet, n)
	for i, m := range spec.members {
		res[m.id] = out[i].set()
	}
	return res
}

func uniformHeterogeneous(spec *assignSpec) map[string]tpSet {
	n := len(spec.members)
	subscribes := make([]map[topicID]bool, n)
	for i, m := range spec.members {
		subscribes[i] = make(map[topicID]bool, len(m.topics))
		for _, id := range m.topics {
			subscribes[i][id] = true
		}
	}
	topics := spec.sortedTopics()
	subscribers := make(map[topicID][]int, len(topics))
	for _, t := range topics {
		for i := range spec.members {
			if subscribes[i][t.id] {
				subscribers[t.id] = append(subscribers[t.id], i)
			}
		}
	}
	owner := map[tp]int{}
	load := make([]int, n)
	owned := make([]map[topicID][]int32, n) // member -> topic -> partitions
	give := func(i int, x tp) {
		owner[x] = i
		load[i]++
		if owned[i] == nil {
			owned[i] = map[topicID][]int32{}
		}
		owned[i][x.id] = append(owned[i][x.id], x.p)
	}
	// Keep current partitions of topics still subscribed.
	for i, m := range spec.members {
		for _, id := range m.current.ids() {
			t, ok := spec.topics[id]
			if !ok || !subscribes[i][id] {
				continue
			}
			for _, p := range m.current[id] {
				if x := (tp{id, p}); p < t.partitions {
					if _, dup := owner[x]; !dup {
						give(i, x)
					}
				}
			}
		}
	}
	// Place the others, scarce topics first, on the least loaded.
	order := slices.Clone(topics)
	slices.SortStableFunc(order, func(a, b assignTopic) int {
		return cmp.Compare(len(subscribers[a.id]), len(subscribers[b.id]))
	})
	for _, t := range order {
		subs := subscribers[t.id]
		if len(subs) == 0 {
			continue
		}
		for p := range t.partitions {
			x := tp{t.id, p}
			if _, ok := owner[x]; ok {
				continue
			}
			best := subs[0]
			for _, i := range subs[1:] {
				if load[i] < load[best] {
					best = i
				}
			}
			give(best, x)
		}
	}
	// Balance among co-subscribers.
	for moved := true; moved; {
		moved = false
		for _, t := range topics {
			subs := subscribers[t.id]
			if len(subs) < 2 {
				continue
			}
			from, to := -1, subs[0]
			for _, i := range subs {
				if len(owned[i][t.id]) > 0 && (from < 0 || load[i] > load[from]) {
					from = i
				}
				if load[i] < load[to] {
					to = i
				}
			}
			if from < 0 || load[from] <= load[to]+1 {
				continue
			}
			ps := owned[from][t.id]
			p := ps[len(ps)-1]
			owned[from][t.id] = ps[:len(ps)-1]
			load[from]--
			give(to, tp{t.id, p})
			moved = true
		}
	}
	res := make(map[string]tpSet, n)
	for i, m := range spec.members {
		b := tpBuilder{}
		for id, ps := range owned[i] {
			for _, p := range ps {
				b.add(id, p)
			}
		}
		res[m.id] = b.set()
	}
	return res
}
