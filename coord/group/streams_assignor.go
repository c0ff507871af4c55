package group

import (
	"cmp"
	"slices"
)

// The streams task assignor, after the behaviour of Kafka's
// StickyTaskAssignor (the default of group.streams.assignors): active
// tasks are spread evenly over the members (their counts differ by at
// most one), each staying with the member that had it while that keeps
// the balance, else going to another member of that member's process
// when one is as little loaded (the task's state is on the process);
// then each active task gets num.standby.replicas standby tasks on
// members of other processes than the active's (never two on one
// process), sticky likewise and balanced by each member's total. A task
// for which no other process is left gets fewer standbys. Like Kafka's
// sticky assignor it assigns no warm-up tasks.

// streamsAssignee is one member as the assignor sees it.
type streamsAssignee struct {
	id, process string
	prev        taskAssignment // its previous target, for stickiness
}

// task is one task: a subtopology and a partition.
type task struct {
	sub string
	p   int32
}

// assignStreams assigns the tasks of a topology (subtopology id ->
// number of tasks) to members, sorted by id.
func assignStreams(tasks map[string]int32, members []streamsAssignee, standbys int) map[string]taskAssignment {
	out := make(map[string]taskAssignment, len(members))
	for _, m := range members {
		out[m.id] = taskAssignment{active: taskSet{}, standby: taskSet{}, warmup: taskSet{}}
	}
	if len(members) == 0 {
		return out
	}
	var all []task
	for _, sub := range sortedKeys(tasks) {
		for p := range tasks[sub] {
			all = append(all, task{sub, p})
		}
	}
	byID := make(map[string]*streamsAssignee, len(members))
	for i := range members {
		byID[members[i].id] = &members[i]
	}
	prevActive := map[task]string{}
	prevStandby := map[task][]string{}
	for _, m := range members {
		for sub, ps := range m.prev.active {
			for _, p := range ps {
				if _, dup := prevActive[task{sub, p}]; !dup {
					prevActive[task{sub, p}] = m.id
				}
			}
		}
		for sub, ps := range m.prev.standby {
			for _, p := range ps {
				prevStandby[task{sub, p}] = append(prevStandby[task{sub, p}], m.id)
			}
		}
	}

	// Active tasks: sticky up to an even share, the rest to the least
	// loaded member (its previous owner when that one is among them).
	load := make(map[string]int, len(members))
	owner := make(map[task]string, len(all))
	floor := len(all) / len(members)
	var rest []task
	for _, t := range all {
		if id, ok := prevActive[t]; ok && byID[id] != nil && load[id] < floor {
			owner[t] = id
			load[id]++
			continue
		}
		rest = append(rest, t)
	}
	// The rest: each member takes up to floor tasks, and len(all) %
	// len(members) of them one more. A task goes to its previous owner
	// if it has room, else to the least loaded member of that owner's
	// process with room (the task's state is there), else to the least
	// loaded member.
	extra := len(all) % len(members)
	room := func(m *streamsAssignee) bool { return load[m.id] < floor || load[m.id] == floor && extra > 0 }
	for _, t := range rest {
		pick := ""
		if id, ok := prevActive[t]; ok && byID[id] != nil {
			prev := byID[id]
			if room(prev) {
				pick = id
			} else {
				pick = leastLoaded(members, load, func(m *streamsAssignee) bool { return m.process == prev.process && room(m) })
			}
		}
		if pick == "" {
			pick = leastLoaded(members, load, room)
		}
		if load[pick] == floor {
			extra--
		}
		owner[t] = pick
		load[pick]++
	}
	for _, t := range all {
		out[owner[t]].active.add(t.sub, t.p)
	}

	// Standby tasks: on other processes than the task's active and its
	// other standbys.
	for range standbys {
		for _, t := range all {
			used := map[string]bool{byID[owner[t]].process: true}
			for _, m := range members {
				if out[m.id].standby.has(t.sub, t.p) {
					used[m.process] = true
				}
			}
			eligible := func(m *streamsAssignee) bool { return !used[m.process] }
			least := leastLoaded(members, load, eligible)
			if least == "" {
				continue // no process left for another standby
			}
			for _, id := range prevStandby[t] {
				if m := byID[id]; m != nil && eligible(m) && load[id] <= load[least]+1 {
					least = id
					break
				}
			}
			out[least].standby.add(t.sub, t.p)
			out[least].standby.normalize()
			load[least]++
		}
	}
	for _, a := range out {
		a.active.normalize()
		a.standby.normalize()
	}
	return out
}

// leastLoaded is the eligible member with the fewest tasks (ties to the
// first by id); "" if none is eligible.
func leastLoaded(members []streamsAssignee, load map[string]int, eligible func(*streamsAssignee) bool) string {
	best := ""
	for i := range members {
		m := &members[i]
		if eligible(m) && (best == "" || load[m.id] < load[best]) {
			best = m.id
		}
	}
	return best
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp.Compare[string])
	return keys
}
