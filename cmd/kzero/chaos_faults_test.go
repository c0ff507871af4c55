package main

// The chaos run's fault loop: kill -9, SIGSTOP (a frozen node keeps its
// connections open and answers nothing, as a long GC pause or a stalled
// disk would), sometimes aimed at the metadata quorum's leader, then a
// restart or SIGCONT after a random time. Every choice comes from the
// seeded generator, in this one goroutine, so a seed replays the same
// schedule: the faults, victims and times, though not the timing of the
// system under test (nor, with CHAOS_MAX_DOWN=2, which node is still
// starting when the next victim is drawn; nor who the controller is).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// chaosFault is one kind of fault.
type chaosFault int

const (
	chaosKill chaosFault = iota
	chaosKillController
	chaosFreeze
	chaosFreezeController
)

var chaosFaultNames = []string{"kill", "kill the controller", "freeze", "freeze the controller"}

// chaosFaultWeights: how often each fault is picked, out of their sum.
var chaosFaultWeights = []int{3, 2, 3, 2}

// chaosPlan bounds the fault loop's random times.
type chaosPlan struct {
	maxDown   int              // nodes killed or frozen at once
	pause     [2]time.Duration // between one fault and the next
	calm      [2]time.Duration // after a heal before the next fault
	killedFor [2]time.Duration // before a killed node restarts
	frozenFor [2]time.Duration // before a frozen node resumes
}

var defaultChaosPlan = chaosPlan{
	maxDown:   1,
	pause:     [2]time.Duration{2 * time.Second, 15 * time.Second},
	calm:      [2]time.Duration{2 * time.Second, 10 * time.Second},
	killedFor: [2]time.Duration{1 * time.Second, 20 * time.Second},
	frozenFor: [2]time.Duration{1 * time.Second, 15 * time.Second},
}

func between(rnd *rand.Rand, r [2]time.Duration) time.Duration {
	return r[0] + time.Duration(rnd.Int64N(int64(r[1]-r[0])+1))
}

// chaosHeal is a pending restart or SIGCONT.
type chaosHeal struct {
	at time.Time
	nd *chaosNode
}

// chaosFaultStats counts what the loop did.
type chaosFaultStats struct {
	faults [4]int
}

func (st chaosFaultStats) String() string {
	var parts []string
	for k, n := range st.faults {
		parts = append(parts, fmt.Sprintf("%s %d", chaosFaultNames[k], n))
	}
	return strings.Join(parts, ", ")
}

// runFaults injects faults until ctx ends, then heals every node it hurt,
// waits for the restarted ones and returns. A node counts as down from its
// fault until it is thawed or its restart is ready.
func runFaults(ctx context.Context, c *chaosCluster, rnd *rand.Rand, plan chaosPlan) chaosFaultStats {
	var st chaosFaultStats
	var heals []chaosHeal // sorted by time
	starting := 0
	started := make(chan chaosStarted, len(c.nodes))
	heal := func(h chaosHeal) {
		if h.nd.proc == nil {
			c.restart(h.nd, started)
			starting++
		} else {
			c.thaw(h.nd)
		}
	}
	ready := func(s chaosStarted) {
		starting--
		c.ready(s.nd, s.err)
		c.events.log("node %d ready", s.nd.id)
	}
	next := time.Now().Add(between(rnd, plan.pause))
	for ctx.Err() == nil {
		now := time.Now()
		for len(heals) > 0 && !heals[0].at.After(now) {
			heal(heals[0])
			heals = heals[1:]
			if calm := time.Now().Add(between(rnd, plan.calm)); calm.After(next) {
				next = calm
			}
		}
		if len(heals)+starting < plan.maxDown && !now.Before(next) {
			if h, ok := inject(ctx, c, rnd, plan, &st); ok {
				heals = append(heals, h)
				slices.SortFunc(heals, func(a, b chaosHeal) int { return a.at.Compare(b.at) })
			}
			next = time.Now().Add(between(rnd, plan.pause))
		}
		wake := next
		if len(heals) > 0 && heals[0].at.Before(wake) {
			wake = heals[0].at
		}
		select {
		case <-ctx.Done():
		case s := <-started:
			ready(s)
		case <-time.After(time.Until(wake)):
		}
	}
	for _, h := range heals {
		heal(h)
	}
	for starting > 0 {
		ready(<-started)
	}
	return st
}

// inject picks a fault and a victim and applies it.
func inject(ctx context.Context, c *chaosCluster, rnd *rand.Rand, plan chaosPlan, st *chaosFaultStats) (chaosHeal, bool) {
	total := 0
	for _, w := range chaosFaultWeights {
		total += w
	}
	kind, pick := chaosFault(0), rnd.IntN(total)
	for pick >= chaosFaultWeights[kind] {
		pick -= chaosFaultWeights[kind]
		kind++
	}
	healthy := c.healthy()
	if len(healthy) == 0 {
		return chaosHeal{}, false
	}
	// Drawn before asking for the controller, so the schedule does not
	// depend on whether a node answered.
	victim := healthy[rnd.IntN(len(healthy))]
	var d time.Duration
	if kind == chaosKill || kind == chaosKillController {
		d = between(rnd, plan.killedFor)
	} else {
		d = between(rnd, plan.frozenFor)
	}
	view := c.view(ctx)
	if kind == chaosKillController || kind == chaosFreezeController {
		if view.controller != nil && slices.Contains(healthy, view.controller) {
			victim = view.controller
		} else {
			c.events.log("no healthy controller found: %s hits node %d instead", chaosFaultNames[kind], victim.id)
		}
	}
	st.faults[kind]++
	role := ""
	if view.controller == victim {
		role = ", the controller,"
	}
	c.events.log("fault: %s: node %d%s for %v; it leads %v", chaosFaultNames[kind], victim.id, role,
		d.Round(time.Millisecond), view.leads[victim.id])
	if kind == chaosKill || kind == chaosKillController {
		c.kill(victim)
	} else {
		c.freeze(victim)
	}
	return chaosHeal{at: time.Now().Add(d), nd: victim}, true
}
