package main

// The chaos run's checker (make chaos, issue 15): pure, so its verdicts are
// tested on constructed cases (chaos_checker_cases_test.go) rather than
// trusted from a run that happened to find nothing. Input: per partition,
// what producers were told (acknowledged offsets), what failed, what the
// tailing consumers were handed, and the whole log read from its start once
// the cluster has healed. Output: counts and a few examples of each kind.

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// chaosValue names one produced record: the producer (numbered from 0) and
// its sequence, which counts up over all of that producer's records. Zero is
// no record (a value that did not parse).
type chaosValue uint64

const chaosSeqBits = 40

func makeChaosValue(producer int, seq int64) chaosValue {
	return chaosValue(uint64(producer+1)<<chaosSeqBits | uint64(seq)&(1<<chaosSeqBits-1))
}

func (v chaosValue) producer() int { return int(v>>chaosSeqBits) - 1 }
func (v chaosValue) seq() int64    { return int64(v & (1<<chaosSeqBits - 1)) }

func (v chaosValue) String() string { return fmt.Sprintf("p%d#%d", v.producer(), v.seq()) }

// appendChaosRecord writes the record value for v: "producer:seq;" padded
// with '.' to size bytes, so a dump of a log (kcat, kzctl dump-log) reads.
func appendChaosRecord(b []byte, v chaosValue, size int) []byte {
	start := len(b)
	b = strconv.AppendInt(b, int64(v.producer()), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, v.seq(), 10)
	b = append(b, ';')
	for len(b)-start < size {
		b = append(b, '.')
	}
	return b
}

// parseChaosRecord reads a value appendChaosRecord wrote; false for
// anything else.
func parseChaosRecord(b []byte) (chaosValue, bool) {
	end := slices.Index(b, ';')
	if end < 0 {
		return 0, false
	}
	ps, ss, ok := strings.Cut(string(b[:end]), ":")
	if !ok {
		return 0, false
	}
	p, err := strconv.ParseUint(ps, 10, 16)
	if err != nil {
		return 0, false
	}
	s, err := strconv.ParseUint(ss, 10, chaosSeqBits)
	if err != nil {
		return 0, false
	}
	return makeChaosValue(int(p), int64(s)), true
}

// chaosObs is a record at an offset.
type chaosObs struct {
	Offset int64
	Value  chaosValue
}

// chaosPart is what one partition's run left.
type chaosPart struct {
	Name    string       // topic/partition, for the report
	Acked   []chaosObs   // every acknowledged record, at the offset its producer was told
	Unacked []chaosValue // records whose produce failed: they may or may not be in the log
	Seen    []chaosObs   // every distinct (offset, value) a consumer was handed
	Final   []chaosObs   // the log read from its start at the end, in offset order; Value 0: did not parse
}

// chaosKind is one kind of finding.
type chaosKind int

const (
	chaosLost       chaosKind = iota // acknowledged, absent from the final log
	chaosDuplicated                  // a (producer, seq) more than once in the final log
	chaosReordered                   // a producer's sequence going back within a partition
	chaosVanished                    // a consumer saw it at an offset that now holds something else or nothing
	chaosMismatched                  // acknowledged at one offset, found at another
	chaosUnreadable                  // a record in the final log that is not one of ours
	chaosKinds
)

var chaosKindNames = [chaosKinds]string{"lost", "duplicated", "reordered", "vanished", "offset mismatch", "unreadable"}

// chaosFatal: the kinds a durable, idempotent cluster never shows.
// Reordering is reported but not fatal (as the issue asks).
var chaosFatal = [chaosKinds]bool{chaosLost: true, chaosDuplicated: true, chaosVanished: true,
	chaosMismatched: true, chaosUnreadable: true}

// chaosExamples is how many findings of each kind the report spells out.
const chaosExamples = 5

// chaosReport is the checker's verdict.
type chaosReport struct {
	Partitions   int
	Acked        int
	Unacked      int
	UnackedInLog int // failed for the producer yet written: allowed (at most once each)
	Seen         int
	Final        int
	Found        [chaosKinds]int
	Examples     [chaosKinds][]string
}

func (r *chaosReport) add(k chaosKind, format string, args ...any) {
	r.Found[k]++
	if len(r.Examples[k]) < chaosExamples {
		r.Examples[k] = append(r.Examples[k], fmt.Sprintf(format, args...))
	}
}

// failed says whether the run found anything a durable, idempotent cluster
// never shows.
func (r *chaosReport) failed() bool {
	for k, n := range r.Found {
		if n > 0 && chaosFatal[k] {
			return true
		}
	}
	return false
}

// String is the summary table and the examples.
func (r *chaosReport) String() string {
	var b strings.Builder
	row := func(name string, n int, note string) { fmt.Fprintf(&b, "  %-26s %10d  %s\n", name, n, note) }
	fmt.Fprintf(&b, "chaos report over %d partitions\n", r.Partitions)
	row("acknowledged", r.Acked, "")
	row("failed for the producer", r.Unacked, fmt.Sprintf("(%d of them in the log anyway)", r.UnackedInLog))
	row("seen by consumers", r.Seen, "(distinct offset, value, per consumer)")
	row("in the final log", r.Final, "")
	for k := range chaosKinds {
		note := ""
		if !chaosFatal[k] {
			note = "(reported, not fatal)"
		}
		row(chaosKindNames[k], r.Found[k], note)
	}
	for k, ex := range r.Examples {
		for _, e := range ex {
			fmt.Fprintf(&b, "  %s: %s\n", chaosKindNames[k], e)
		}
	}
	return b.String()
}

// checkChaos compares what was acknowledged and seen with the final logs.
func checkChaos(parts []chaosPart) chaosReport {
	r := chaosReport{Partitions: len(parts)}

	// Every record of every final log, sorted by value: duplicates sit
	// side by side and a value is found by binary search.
	type place struct {
		v    chaosValue
		part int
		off  int64
	}
	var all []place
	for pi, p := range parts {
		r.Final += len(p.Final)
		for _, o := range p.Final {
			if o.Value == 0 {
				r.add(chaosUnreadable, "%s offset %d", p.Name, o.Offset)
				continue
			}
			all = append(all, place{o.Value, pi, o.Offset})
		}
	}
	slices.SortFunc(all, func(a, b place) int {
		return cmp.Or(cmp.Compare(a.v, b.v), cmp.Compare(a.part, b.part), cmp.Compare(a.off, b.off))
	})
	for i := 1; i < len(all); i++ {
		if a, b := all[i-1], all[i]; a.v == b.v {
			r.add(chaosDuplicated, "%v at %s offset %d and %s offset %d", b.v, parts[a.part].Name, a.off, parts[b.part].Name, b.off)
		}
	}
	find := func(v chaosValue) (place, bool) {
		i, ok := slices.BinarySearchFunc(all, v, func(p place, v chaosValue) int { return cmp.Compare(p.v, v) })
		if !ok {
			return place{}, false
		}
		return all[i], true
	}

	for _, p := range parts {
		// A producer's sequence only goes up within a partition.
		last := map[int]int64{}
		for _, o := range p.Final {
			if o.Value == 0 {
				continue
			}
			pr, s := o.Value.producer(), o.Value.seq()
			prev, ok := last[pr]
			switch {
			case ok && s < prev:
				r.add(chaosReordered, "%v at %s offset %d after p%d#%d", o.Value, p.Name, o.Offset, pr, prev)
			case !ok || s > prev:
				last[pr] = s
			}
		}

		at := func(off int64) (chaosValue, bool) {
			i, ok := slices.BinarySearchFunc(p.Final, off, func(o chaosObs, off int64) int { return cmp.Compare(o.Offset, off) })
			if !ok {
				return 0, false
			}
			return p.Final[i].Value, true
		}
		describe := func(off int64) string {
			if v, ok := at(off); ok {
				return "holds " + v.String()
			}
			return "holds nothing"
		}

		r.Acked += len(p.Acked)
		for _, o := range p.Acked {
			if v, ok := at(o.Offset); ok && v == o.Value {
				continue
			}
			if w, ok := find(o.Value); ok {
				r.add(chaosMismatched, "%v acknowledged at %s offset %d (which %s), found at %s offset %d",
					o.Value, p.Name, o.Offset, describe(o.Offset), parts[w.part].Name, w.off)
				continue
			}
			r.add(chaosLost, "%v acknowledged at %s offset %d, which %s", o.Value, p.Name, o.Offset, describe(o.Offset))
		}

		r.Seen += len(p.Seen)
		for _, o := range p.Seen {
			if v, ok := at(o.Offset); ok && v == o.Value {
				continue
			}
			r.add(chaosVanished, "%v seen at %s offset %d, which %s", o.Value, p.Name, o.Offset, describe(o.Offset))
		}

		r.Unacked += len(p.Unacked)
		for _, v := range p.Unacked {
			if _, ok := find(v); ok {
				r.UnackedInLog++
			}
		}
	}
	return r
}
