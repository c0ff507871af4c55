package group

import (
	"math"
	"slices"
)

// simpleAssignor is the share group assignor of KIP-932 ("simple", Kafka's
// SimpleAssignor with its homogeneous and heterogeneous assignment
// builders, Kafka 4.1 on). Members of a share group consume a partition
// together, so a partition may go to several members; the assignor
// balances first and sticks second:
//
//   - Each partition is shared by S = ceil(M/P) members (M members, P
//     partitions): one member each while partitions are at least as many
//     as members, more when members outnumber them.
//   - That makes S*P assignments, spread over the members as evenly as
//     can be: member i of M gets ceil(x*(i+1)) - ceil(x*i) of them, x =
//     S*P/M (the first members get the extra ones).
//   - A member keeps what it has of the topics it subscribes to, except
//     what takes it past its quota (it gives up its lowest partitions
//     first) and what takes a partition past S members (the
//     lowest-numbered members give it up first).
//   - The partitions short of S members then go round the members short
//     of their quota, in member order, the round carrying on from
//     partition to partition; a partition every short member already has
//     stays short (Kafka accepts that small imbalance).
//
// When every member subscribes to the same topics, all their partitions
// are balanced together; otherwise each topic is balanced on its own
// among its subscribers (a member of two topics gets its share of each).
//
// Kafka walks Java hash maps and sets where this walks members by id,
// topics by name and partitions by number: with the same input the shape
// (sharing, quotas, what is kept) is Kafka's, the member given a
// particular partition may differ. Unlike Kafka's heterogeneous builder,
// a member keeps no partition of a topic nobody subscribes to any more.
type simpleAssignor struct{}

func (simpleAssignor) assign(spec *assignSpec) map[string]tpSet {
	out := make(map[string]tpSet, len(spec.members))
	if len(spec.members) == 0 {
		return out
	}
	held := make([]tpBuilder, len(spec.members))
	for i := range held {
		held[i] = tpBuilder{}
	}
	if spec.homogeneous() {
		all := make([]int, len(spec.members))
		for i := range all {
			all[i] = i
		}
		var parts []tp
		for _, t := range spec.sortedTopics() {
			if subscribes(&spec.members[0], t.id) {
				for p := range t.partitions {
					if spec.may(t.id, p) {
						parts = append(parts, tp{t.id, p})
					}
				}
			}
		}
		(&sharing{spec: spec, members: all, parts: parts, held: held}).balance()
	} else {
		for _, t := range spec.sortedTopics() {
			var subs []int
			for i := range spec.members {
				if subscribes(&spec.members[i], t.id) {
					subs = append(subs, i)
				}
			}
			if len(subs) == 0 {
				continue
			}
			parts := make([]tp, 0, t.partitions)
			for p := range t.partitions {
				if spec.may(t.id, p) {
					parts = append(parts, tp{t.id, p})
				}
			}
			(&sharing{spec: spec, members: subs, parts: parts, held: held}).balance()
		}
	}
	for i, m := range spec.members {
		out[m.id] = held[i].set()
	}
	return out
}

// subscribes reports whether m subscribes to topic id.
func subscribes(m *assignMember, id topicID) bool {
	_, ok := slices.BinarySearchFunc(m.topics, id, compareIDs)
	return ok
}

// sharing balances one set of partitions over the members subscribed to
// them: every partition of the group when subscriptions are homogeneous,
// else one topic's.
type sharing struct {
	spec    *assignSpec
	members []int // indexes into spec.members, ascending
	parts   []tp
	held    []tpBuilder // by member index: the result, added to

	share   int          // S: members per partition
	quota   map[int]int  // assignments per member
	holders map[tp][]int // partition -> members holding it, ascending
	has     map[int][]tp // member -> partitions it holds, in parts order
}

func (s *sharing) balance() {
	n, p := len(s.members), len(s.parts)
	if p > 0 {
		s.share = (n + p - 1) / p
	}
	// Quotas: S*P assignments, member k of n gets ceil(x*(k+1)) -
	// ceil(x*k), x = S*P/n, computed in float64 as Kafka does in double.
	s.quota = make(map[int]int, n)
	x := float64(s.share*p) / float64(n)
	for k, i := range s.members {
		s.quota[i] = int(math.Ceil(x*float64(k+1))) - int(math.Ceil(x*float64(k)))
	}
	s.holders = make(map[tp][]int, p)
	s.has = make(map[int][]tp, n)

	// 1. What members hold of these partitions, subscribers or not (a
	// member that no longer subscribes has a quota of 0).
	for i := range s.spec.members {
		cur := s.spec.members[i].current
		if len(cur) == 0 {
			continue
		}
		for _, part := range s.parts {
			if cur.has(part.id, part.p) {
				s.holders[part] = append(s.holders[part], i)
				s.has[i] = append(s.has[i], part)
			}
		}
	}
	// 2. Members over their quota give up their first partitions.
	for i := range s.spec.members {
		over := len(s.has[i]) - s.quota[i]
		if over <= 0 {
			continue
		}
		for _, part := range s.has[i][:over] {
			s.holders[part] = slices.DeleteFunc(s.holders[part], func(j int) bool { return j == i })
		}
		s.has[i] = s.has[i][over:]
	}
	// 3. Partitions held by more than S members: the lowest-numbered
	// members give them up.
	for _, part := range s.parts {
		hs := s.holders[part]
		if over := len(hs) - s.share; over > 0 {
			for _, i := range hs[:over] {
				s.has[i] = slices.DeleteFunc(s.has[i], func(q tp) bool { return q == part })
			}
			s.holders[part] = hs[over:]
		}
	}
	for i, parts := range s.has {
		for _, part := range parts {
			s.held[i].add(part.id, part.p)
		}
	}
	s.fill()
}

// fill hands the partitions short of S members to the members short of
// their quota: one round of the short members runs on from partition to
// partition, skipping members that have the partition; a partition that a
// whole round could not place stays short.
func (s *sharing) fill() {
	var short []int
	for _, i := range s.members {
		if len(s.has[i]) < s.quota[i] {
			short = append(short, i)
		}
	}
	if len(short) == 0 {
		return
	}
	next, placed := 0, false // the round's position; whether it placed anything
	for _, part := range s.parts {
		hs := s.holders[part] // as it was: as in Kafka, a round placing a partition twice on one member places it once
		for need := s.share - len(hs); need > 0; {
			if next == len(short) {
				if !placed {
					break
				}
				next, placed = 0, false
			}
			i := short[next]
			if slices.Contains(hs, i) {
				next++
				continue
			}
			if !slices.Contains(s.has[i], part) {
				s.has[i] = append(s.has[i], part)
				s.held[i].add(part.id, part.p)
			}
			need--
			placed = true
			if len(s.has[i]) >= s.quota[i] {
				short = slices.Delete(short, next, next+1)
			} else {
				next++
			}
		}
		if len(short) == 0 {
			return
		}
	}
}
