package group

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// shareAssignScript runs the share group assignor on its own (the scripts
// of testdata/share):
//
//	share-assign a=3 b=2          topics and their partition counts
//	m1 topics=a,b holds=a0,a1     a member, its subscription and its
//	m2 topics=a                   current target assignment
//	----
//	m1: a[0 1] b[0]               each member's new target assignment
//	a0: m1 m2                     each partition's members
func shareAssignScript(t *testing.T, d *datadriven.TestData) string {
	topics := map[string]int32{}
	for _, a := range d.CmdArgs {
		n, err := strconv.Atoi(a.Vals[0])
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		topics[a.Key] = int32(n)
	}
	subs, current := map[string][]string{}, map[string]tpSet{}
	for line := range strings.Lines(d.Input) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		subs[f[0]] = []string{}
		b := tpBuilder{}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			for _, x := range strings.Split(v, ",") {
				switch k {
				case "topics":
					subs[f[0]] = append(subs[f[0]], x)
				case "holds":
					i := strings.IndexFunc(x, func(r rune) bool { return r >= '0' && r <= '9' })
					p, err := strconv.Atoi(x[i:])
					if i <= 0 || err != nil {
						t.Fatalf("%s: partition %q: want a topic and a number, like a0", d.Pos, x)
					}
					b.add(tidOf(x[:i]), int32(p))
				default:
					t.Fatalf("%s: unknown %q", d.Pos, k)
				}
			}
		}
		current[f[0]] = b.set()
	}
	s := spec(topics, subs, current)
	got := simpleAssignor{}.assign(s)
	checkShareAssignment(t, s, got)

	names := slices.Sorted(maps.Keys(topics))
	var out strings.Builder
	holders := map[tp][]string{}
	for _, m := range s.members {
		fmt.Fprintf(&out, "%s:", m.id)
		if got[m.id].size() == 0 {
			out.WriteString(" nothing")
		}
		for _, name := range names {
			if ps := got[m.id][tidOf(name)]; len(ps) > 0 {
				fmt.Fprintf(&out, " %s%v", name, ps)
				for _, p := range ps {
					holders[tp{tidOf(name), p}] = append(holders[tp{tidOf(name), p}], m.id)
				}
			}
		}
		out.WriteString("\n")
	}
	for _, name := range names {
		for p := range topics[name] {
			if hs := holders[tp{tidOf(name), p}]; len(hs) > 0 {
				fmt.Fprintf(&out, "%s%d: %s\n", name, p, strings.Join(hs, " "))
			}
		}
	}
	return out.String()
}

// checkShareAssignment fails unless members got only partitions of topics
// they subscribe to, and every partition of a subscribed topic went to at
// least one member.
func checkShareAssignment(t *testing.T, s *assignSpec, got map[string]tpSet) {
	t.Helper()
	held := map[tp]int{}
	for _, m := range s.members {
		for id, ps := range got[m.id] {
			if !subscribes(&m, id) {
				t.Fatalf("member %s got topic %x it does not subscribe to", m.id, id)
			}
			for _, p := range ps {
				if p < 0 || p >= s.topics[id].partitions {
					t.Fatalf("member %s got %s-%d, beyond the topic", m.id, s.topics[id].name, p)
				}
				held[tp{id, p}]++
			}
		}
	}
	for _, m := range s.members {
		for _, id := range m.topics {
			for p := range s.topics[id].partitions {
				if held[tp{id, p}] == 0 {
					t.Fatalf("%s-%d went to nobody", s.topics[id].name, p)
				}
			}
		}
	}
}

// On random groups the share assignor gives every subscribed partition to
// someone, shares a partition only when its topic's subscribers outnumber
// its partitions, keeps members' loads within one of each other when
// subscriptions are the same, and is stable: run again on its own output
// it changes nothing.
func TestSimpleAssignorOnRandomGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	names := []string{"a", "b", "c", "d"}
	for round := range 500 {
		topics := map[string]int32{}
		for _, n := range names[:1+r.IntN(len(names))] {
			topics[n] = int32(1 + r.IntN(8))
		}
		tnames := slices.Sorted(maps.Keys(topics))
		same := r.IntN(2) == 0
		subs, current := map[string][]string{}, map[string]tpSet{}
		members := 1 + r.IntN(12)
		for i := range members {
			id := fmt.Sprintf("m%02d", i)
			subs[id] = []string{}
			if same {
				subs[id] = tnames
			} else {
				for _, n := range tnames {
					if r.IntN(2) == 0 {
						subs[id] = append(subs[id], n)
					}
				}
			}
			b := tpBuilder{}
			for _, n := range tnames {
				for p := range topics[n] {
					if r.IntN(4) == 0 {
						b.add(tidOf(n), p)
					}
				}
			}
			current[id] = b.set()
		}
		s := spec(topics, subs, current)
		got := simpleAssignor{}.assign(s)
		checkShareAssignment(t, s, got)
		for id := range s.topics {
			subscribers, holders := 0, map[int32]int{}
			for _, m := range s.members {
				if subscribes(&m, id) {
					subscribers++
				}
				for _, p := range got[m.id][id] {
					holders[p]++
				}
			}
			for p, n := range holders {
				if n > 1 && subscribers <= int(s.topics[id].partitions) {
					t.Fatalf("round %d: %s-%d shared by %d members, with %d subscribers for %d partitions", round, s.topics[id].name, p, n, subscribers, s.topics[id].partitions)
				}
			}
		}
		if s.homogeneous() {
			loads := make([]int, 0, len(s.members))
			for _, m := range s.members {
				loads = append(loads, got[m.id].size())
			}
			if slices.Max(loads)-slices.Min(loads) > 1 {
				t.Fatalf("round %d: loads %v", round, loads)
			}
		}
		again := map[string]tpSet{}
		for _, m := range s.members {
			again[m.id] = got[m.id]
		}
		s2 := spec(topics, subs, again)
		for id, set := range (simpleAssignor{}).assign(s2) {
			if !set.equal(got[id]) {
				t.Fatalf("round %d: not stable: %s had %v, then got %v", round, id, got[id], set)
			}
		}
	}
}
