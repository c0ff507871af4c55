package group

import (
	"bytes"
	"cmp"
	"slices"
)

// Server-side assignment of KIP-848 consumer groups: the coordinator, not a
// member, assigns partitions. An assignor gets every member's subscription
// (resolved to topic ids) and current target assignment, and returns each
// member's new target assignment. Assignors are pure functions of their
// input: the same spec always gives the same assignment.

// topicID is a topic's UUID, as the consumer protocol names topics.
type topicID = [16]byte

// tpSet is a set of partitions by topic id. Every slice is sorted, without
// duplicates, and never empty; a tpSet is never modified once shared.
type tpSet map[topicID][]int32

// size is the number of partitions in s.
func (s tpSet) size() int {
	n := 0
	for _, ps := range s {
		n += len(ps)
	}
	return n
}

// has reports whether s holds partition p of topic id.
func (s tpSet) has(id topicID, p int32) bool {
	_, ok := slices.BinarySearch(s[id], p)
	return ok
}

// equal reports whether a and b hold the same partitions.
func (a tpSet) equal(b tpSet) bool {
	if len(a) != len(b) {
		return false
	}
	for id, ps := range a {
		if !slices.Equal(ps, b[id]) {
			return false
		}
	}
	return true
}

// subsetOf reports whether every partition of a is in b.
func (a tpSet) subsetOf(b tpSet) bool {
	for id, ps := range a {
		for _, p := range ps {
			if !b.has(id, p) {
				return false
			}
		}
	}
	return true
}

// intersects reports whether a and b share a partition.
func (a tpSet) intersects(b tpSet) bool {
	for id, ps := range a {
		for _, p := range ps {
			if b.has(id, p) {
				return true
			}
		}
	}
	return false
}

// ids lists the topic ids of s in byte order.
func (s tpSet) ids() []topicID {
	out := make([]topicID, 0, len(s))
	for id := range s {
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b topicID) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// tpBuilder gathers partitions into a tpSet.
type tpBuilder map[topicID][]int32

func (b tpBuilder) add(id topicID, p int32) { b[id] = append(b[id], p) }

// set sorts and deduplicates what was added.
func (b tpBuilder) set() tpSet {
	out := make(tpSet, len(b))
	for id, ps := range b {
		if len(ps) == 0 {
			continue
		}
		slices.Sort(ps)
		out[id] = slices.Compact(ps)
	}
	return out
}

// assignMember is one member as an assignor sees it.
type assignMember struct {
	id         string
	instanceID string
	topics     []topicID // subscribed topics that exist, sorted
	current    tpSet     // its current target assignment
}

// assignTopic is one subscribed topic.
type assignTopic struct {
	id         topicID
	name       string
	partitions int32
}

// assignSpec is an assignor's input: members sorted by id, and the topics
// any of them subscribes to.
type assignSpec struct {
	members []assignMember
	topics  map[topicID]assignTopic
	// only, when not nil, is the partitions the simple assignor may
	// assign (a share group's initialized ones).
	only tpSet
}

// may reports whether partition p of topic id may be assigned.
func (s *assignSpec) may(id topicID, p int32) bool {
	return s.only == nil || s.only.has(id, p)
}

// assignor computes target assignments.
type assignor interface {
	assign(spec *assignSpec) map[string]tpSet
}

// assignors are the server-side assignors kzero has, by the names Kafka
// gives them (group.consumer.assignors).
var assignors = map[string]assignor{
	"uniform": uniformAssignor{},
	"range":   rangeAssignor{},
}

// sortedTopics lists spec's topics by name, then id.
func (spec *assignSpec) sortedTopics() []assignTopic {
	out := make([]assignTopic, 0, len(spec.topics))
	for _, t := range spec.topics {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b assignTopic) int {
		return cmp.Or(cmp.Compare(a.name, b.name), bytes.Compare(a.id[:], b.id[:]))
	})
	return out
}

// homogeneous reports whether every member subscribes to the same topics.
func (spec *assignSpec) homogeneous() bool {
	for i := 1; i < len(spec.members); i++ {
		if !slices.Equal(spec.members[i].topics, spec.members[0].topics) {
			return false
		}
	}
	return true
}
