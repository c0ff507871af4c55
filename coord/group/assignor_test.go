package group

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// Tests of the server-side assignors on their own: deterministic specs, no
// coordinator.

func tidOf(name string) topicID {
	var id topicID
	copy(id[:], name)
	id[15] = 1
	return id
}

// spec builds an assignSpec: topics name -> partitions, members id ->
// subscribed topic names, current targets id -> set.
func spec(topics map[string]int32, subs map[string][]string, current map[string]tpSet) *assignSpec {
	s := &assignSpec{topics: map[topicID]assignTopic{}}
	for name, n := range topics {
		s.topics[tidOf(name)] = assignTopic{id: tidOf(name), name: name, partitions: n}
	}
	for _, id := range slices.Sorted(mapKeysOf(subs)) {
		var ids []topicID
		for _, t := range subs[id] {
			ids = append(ids, tidOf(t))
		}
		slices.SortFunc(ids, compareIDs)
		s.members = append(s.members, assignMember{id: id, topics: ids, current: current[id]})
	}
	return s
}

func mapKeysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// checkAssignment fails unless every partition of a subscribed topic is
// assigned exactly once, to a member subscribing to its topic.
func checkAssignment(t *testing.T, s *assignSpec, got map[string]tpSet) {
	t.Helper()
	seen := map[tp]string{}
	for _, m := range s.members {
		for id, ps := range got[m.id] {
			if _, ok := slices.BinarySearchFunc(m.topics, id, compareIDs); !ok {
				t.Fatalf("member %s got topic %x it does not subscribe to", m.id, id)
			}
			for _, p := range ps {
				if p < 0 || p >= s.topics[id].partitions {
					t.Fatalf("member %s got %s-%d, beyond the topic", m.id, s.topics[id].name, p)
				}
				if other, dup := seen[tp{id, p}]; dup {
					t.Fatalf("%s-%d assigned to %s and %s", s.topics[id].name, p, other, m.id)
				}
				seen[tp{id, p}] = m.id
			}
		}
	}
	for id, topic := range s.topics {
		subscribed := false
		for _, m := range s.members {
			if _, ok := slices.BinarySearchFunc(m.topics, id, compareIDs); ok {
				subscribed = true
			}
		}
		for p := range topic.partitions {
			if _, ok := seen[tp{id, p}]; subscribed && !ok {
				t.Fatalf("%s-%d not assigned", topic.name, p)
			}
		}
	}
}

func loads(s *assignSpec, got map[string]tpSet) []int {
	var out []int
	for _, m := range s.members {
		out = append(out, got[m.id].size())
	}
	return out
}

func TestUniformAssignorBalancesAndSticks(t *testing.T) {
	s := spec(map[string]int32{"a": 7, "b": 3}, map[string][]string{"m1": {"a", "b"}, "m2": {"a", "b"}, "m3": {"a", "b"}}, nil)
	got := uniformAssignor{}.assign(s)
	checkAssignment(t, s, got)
	if l := loads(s, got); !slices.Equal(l, []int{4, 3, 3}) {
		t.Fatalf("loads %v", l)
	}
	// A fourth member: every old member keeps all it can (10/4: quotas
	// 3, 3, 2, 2), so only the partitions above quota move.
	s2 := spec(map[string]int32{"a": 7, "b": 3}, map[string][]string{"m1": {"a", "b"}, "m2": {"a", "b"}, "m3": {"a", "b"}, "m4": {"a", "b"}}, got)
	got2 := uniformAssignor{}.assign(s2)
	checkAssignment(t, s2, got2)
	moved := 0
	for _, m := range []string{"m1", "m2", "m3"} {
		for id, ps := range got[m] {
			for _, p := range ps {
				if !got2[m].has(id, p) {
					moved++
				}
			}
		}
	}
	if l := loads(s2, got2); slices.Max(l)-slices.Min(l) > 1 || moved != got2["m4"].size() {
		t.Fatalf("loads %v, %d moved, new member got %d", l, moved, got2["m4"].size())
	}
	// The same input gives the same output.
	if again := (uniformAssignor{}).assign(s2); !again["m1"].equal(got2["m1"]) || !again["m4"].equal(got2["m4"]) {
		t.Fatal("assignment not deterministic")
	}
}

func TestUniformAssignorHeterogeneous(t *testing.T) {
	s := spec(map[string]int32{"a": 6, "b": 6, "c": 2},
		map[string][]string{"m1": {"a"}, "m2": {"a", "b"}, "m3": {"b", "c"}, "m4": {"c"}}, nil)
	got := uniformAssignor{}.assign(s)
	checkAssignment(t, s, got)
	// 14 partitions: m4 can only have c's two, the others share 12.
	if l := loads(s, got); !slices.Equal(l, []int{4, 4, 4, 2}) {
		t.Fatalf("loads %v", l)
	}
	// A member that unsubscribes from a topic loses only its partitions.
	s2 := spec(map[string]int32{"a": 6, "b": 6, "c": 2},
		map[string][]string{"m1": {"a"}, "m2": {"a"}, "m3": {"b", "c"}, "m4": {"c"}}, got)
	got2 := uniformAssignor{}.assign(s2)
	checkAssignment(t, s2, got2)
	for _, m := range []string{"m1", "m3", "m4"} {
		lost := 0
		for id, ps := range got[m] {
			for _, p := range ps {
				if !got2[m].has(id, p) {
					lost++
				}
			}
		}
		if shrink := max(got[m].size()-got2[m].size(), 0); lost > shrink {
			t.Fatalf("%s lost %d partitions, shrinking by %d: %v -> %v", m, lost, shrink, got[m], got2[m])
		}
	}
}

func TestRangeAssignorCoPartitions(t *testing.T) {
	s := spec(map[string]int32{"orders": 5, "payments": 5, "other": 2},
		map[string][]string{"m1": {"orders", "payments"}, "m2": {"orders", "payments", "other"}}, nil)
	got := rangeAssignor{}.assign(s)
	checkAssignment(t, s, got)
	for _, m := range []string{"m1", "m2"} {
		if !slices.Equal(got[m][tidOf("orders")], got[m][tidOf("payments")]) {
			t.Fatalf("%s: orders %v, payments %v", m, got[m][tidOf("orders")], got[m][tidOf("payments")])
		}
	}
	if !slices.Equal(got["m1"][tidOf("orders")], []int32{0, 1, 2}) || !slices.Equal(got["m2"][tidOf("other")], []int32{0, 1}) {
		t.Fatalf("ranges %v", got)
	}
	// A static member is ordered by its instance id.
	s.members[1].instanceID = "a-instance"
	got = rangeAssignor{}.assign(s)
	if !slices.Equal(got["m2"][tidOf("orders")], []int32{0, 1, 2}) {
		t.Fatalf("static member's range %v", got["m2"])
	}
}

// Random groups: both assignors always give a complete, exclusive
// assignment to subscribers; the uniform one a balanced one when
// subscriptions are the same.
func TestAssignorsOnRandomGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"t0", "t1", "t2", "t3", "t4"}
	for i := range 300 {
		topics := map[string]int32{}
		for _, n := range names[:1+r.IntN(len(names))] {
			topics[n] = int32(1 + r.IntN(20))
		}
		var all []string
		for n := range topics {
			all = append(all, n)
		}
		slices.Sort(all)
		homogeneous := i%2 == 0
		subs := map[string][]string{}
		for m := range 1 + r.IntN(8) {
			sub := all
			if !homogeneous {
				sub = nil
				for _, n := range all {
					if r.IntN(2) == 0 {
						sub = append(sub, n)
					}
				}
			}
			subs[fmt.Sprintf("m%d", m)] = sub
		}
		var prev map[string]tpSet
		for range 2 {
			for _, a := range []assignor{uniformAssignor{}, rangeAssignor{}} {
				s := spec(topics, subs, prev)
				got := a.assign(s)
				checkAssignment(t, s, got)
				if _, ok := a.(uniformAssignor); ok && homogeneous {
					if l := loads(s, got); slices.Max(l)-slices.Min(l) > 1 {
						t.Fatalf("case %d: uniform loads %v", i, l)
					}
					prev = got
				}
			}
			// The group changes: a member leaves.
			for m := range subs {
				delete(subs, m)
				break
			}
			if len(subs) == 0 {
				break
			}
		}
	}
}

func TestReconcileRevokesBeforeAssigning(t *testing.T) {
	a, b := tidOf("a"), tidOf("b")
	set := func(ps ...int32) tpSet { return tpSet{a: ps} }
	free := func(topicID, int32) bool { return false }
	held := func(id topicID, p int32) bool { return id == a && p == 3 }

	// Stable at epoch 1 with a-0..2; the target at epoch 2 is a-1..3.
	cur := currentAssignment{epoch: 1, state: memberStable, assigned: set(0, 1, 2)}
	next := reconcile(cur, 2, set(1, 2, 3), set(0, 1, 2), free)
	if next.state != memberUnrevoked || next.epoch != 1 || !next.assigned.equal(set(1, 2)) || !next.revoking.equal(set(0)) {
		t.Fatalf("first step %+v", next)
	}
	// Still owning a-0: nothing moves.
	if again := reconcile(next, 2, set(1, 2, 3), set(0, 1, 2), free); !again.equal(&next) {
		t.Fatalf("moved while revoking: %+v", again)
	}
	// Revoked, but a-3 is still held by another member.
	next = reconcile(next, 2, set(1, 2, 3), set(1, 2), held)
	if next.state != memberUnreleased || next.epoch != 2 || next.previousEpoch != 1 || !next.assigned.equal(set(1, 2)) {
		t.Fatalf("unreleased %+v", next)
	}
	// Released: the member gets it.
	next = reconcile(next, 2, set(1, 2, 3), set(1, 2), free)
	if next.state != memberStable || next.epoch != 2 || !next.assigned.equal(set(1, 2, 3)) {
		t.Fatalf("stable %+v", next)
	}
	// A member that does not own what it must revoke (it lost it) skips
	// the revocation.
	cur = currentAssignment{epoch: 2, state: memberStable, assigned: tpSet{a: {0}, b: {0}}}
	next = reconcile(cur, 3, tpSet{b: {0, 1}}, tpSet{b: {0}}, free)
	if next.state != memberStable || next.epoch != 3 || !next.assigned.equal(tpSet{b: {0, 1}}) {
		t.Fatalf("skipped revocation %+v", next)
	}
}
