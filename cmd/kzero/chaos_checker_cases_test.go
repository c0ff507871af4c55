package main

// The chaos checker on constructed runs: each kind of finding is reported,
// and a clean run, interleaved producers and failed-but-written records are
// not findings.

import (
	"bytes"
	"strings"
	"testing"
)

// obs is shorthand for a record of producer p, sequence s at offset off.
func obs(off int64, p int, s int64) chaosObs { return chaosObs{off, makeChaosValue(p, s)} }

// cleanPart is a partition where two producers wrote offsets 0..5, every
// record acknowledged, seen and in the log.
func cleanPart() chaosPart {
	log := []chaosObs{obs(0, 0, 0), obs(1, 1, 0), obs(2, 0, 1), obs(3, 1, 1), obs(4, 0, 2), obs(5, 1, 2)}
	return chaosPart{
		Name:  "t/0",
		Acked: log,
		Seen:  log,
		Final: log,
	}
}

func TestChaosCheck(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(p *chaosPart)
		found map[chaosKind]int
		inLog int
	}{
		{name: "clean", edit: func(*chaosPart) {}},
		{name: "lost", edit: func(p *chaosPart) {
			p.Final = append(p.Final[:3:3], p.Final[4:]...) // offset 3 gone, no rewrite
			p.Seen = p.Seen[:3]
		}, found: map[chaosKind]int{chaosLost: 1}},
		{name: "lost to a truncation", edit: func(p *chaosPart) {
			p.Final, p.Seen = p.Final[:4], p.Seen[:4] // offsets 4 and 5 acknowledged, gone
		}, found: map[chaosKind]int{chaosLost: 2}},
		{name: "overwritten", edit: func(p *chaosPart) {
			p.Final = append(p.Final[:5:5], obs(5, 2, 0)) // another producer's record at 5
			p.Seen = p.Seen[:5]
		}, found: map[chaosKind]int{chaosLost: 1}},
		{name: "duplicated", edit: func(p *chaosPart) {
			p.Final = append(p.Final, obs(6, 1, 2)) // p1#2 again
		}, found: map[chaosKind]int{chaosDuplicated: 1}},
		{name: "reordered", edit: func(p *chaosPart) {
			// p0#1 and p0#2 swapped, both acknowledged where they are.
			p.Final = []chaosObs{obs(0, 0, 0), obs(1, 1, 0), obs(2, 0, 2), obs(3, 1, 1), obs(4, 0, 1), obs(5, 1, 2)}
			p.Acked, p.Seen = p.Final, p.Final
		}, found: map[chaosKind]int{chaosReordered: 1}},
		{name: "vanished", edit: func(p *chaosPart) {
			p.Seen = append(p.Seen, obs(6, 0, 3)) // seen at 6, the log ends at 5
		}, found: map[chaosKind]int{chaosVanished: 1}},
		{name: "vanished, offset reused", edit: func(p *chaosPart) {
			p.Seen = append(p.Seen, obs(6, 0, 3))
			p.Final = append(p.Final, obs(6, 0, 4)) // a later record took offset 6
		}, found: map[chaosKind]int{chaosVanished: 1}},
		{name: "offset mismatch", edit: func(p *chaosPart) {
			p.Acked = append(p.Acked, obs(6, 0, 3)) // told 6, written at 7
			p.Final = append(p.Final, obs(6, 1, 3), obs(7, 0, 3))
		}, found: map[chaosKind]int{chaosMismatched: 1}},
		{name: "unreadable", edit: func(p *chaosPart) {
			p.Final = append(p.Final, chaosObs{6, 0})
		}, found: map[chaosKind]int{chaosUnreadable: 1}},
		{name: "failed but written", edit: func(p *chaosPart) {
			p.Acked = p.Acked[:5] // p1#2 failed for its producer, yet is in the log
			p.Unacked = []chaosValue{makeChaosValue(1, 2), makeChaosValue(1, 3)}
		}, inLog: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := cleanPart()
			c.edit(&p)
			r := checkChaos([]chaosPart{p})
			wantReport(t, &r, c.found)
			if r.UnackedInLog != c.inLog {
				t.Errorf("failed but in the log: %d, want %d", r.UnackedInLog, c.inLog)
			}
		})
	}
}

// Duplicates and mismatches are found across partitions too: a value
// acknowledged in one partition and written to another.
func TestChaosCheckAcrossPartitions(t *testing.T) {
	a, b := cleanPart(), cleanPart()
	b.Name = "t/1"
	for i := range b.Final {
		b.Final[i].Value = makeChaosValue(b.Final[i].Value.producer()+2, b.Final[i].Value.seq())
	}
	b.Acked, b.Seen = b.Final, b.Final
	// p0#3 acknowledged in t/0 at 6, written to t/1 at 6 and t/0 at 7.
	a.Acked = append(a.Acked, obs(6, 0, 3))
	a.Final = append(a.Final, obs(6, 1, 9), obs(7, 0, 3))
	b.Final = append(b.Final, obs(6, 0, 3))
	r := checkChaos([]chaosPart{a, b})
	wantReport(t, &r, map[chaosKind]int{chaosMismatched: 1, chaosDuplicated: 1})
	if r.Partitions != 2 || r.Acked != 13 || r.Final != 15 {
		t.Errorf("totals: %d partitions, %d acknowledged, %d final; want 2, 13, 15", r.Partitions, r.Acked, r.Final)
	}
}

// wantReport checks every kind's count, the examples and the verdict.
func wantReport(t *testing.T, r *chaosReport, found map[chaosKind]int) {
	t.Helper()
	fatal := false
	for k := range chaosKinds {
		if r.Found[k] != found[k] {
			t.Errorf("%s: %d, want %d", chaosKindNames[k], r.Found[k], found[k])
		}
		if len(r.Examples[k]) != min(found[k], chaosExamples) {
			t.Errorf("%s: %d examples for %d findings", chaosKindNames[k], len(r.Examples[k]), found[k])
		}
		fatal = fatal || found[k] > 0 && chaosFatal[k]
	}
	if r.failed() != fatal {
		t.Errorf("failed() = %v, want %v", r.failed(), fatal)
	}
	s := r.String()
	for k := range chaosKinds {
		if !strings.Contains(s, chaosKindNames[k]) {
			t.Errorf("summary has no %s row:\n%s", chaosKindNames[k], s)
		}
	}
	if t.Failed() {
		t.Log(s)
	}
}

func TestChaosRecordValue(t *testing.T) {
	for _, v := range []chaosValue{makeChaosValue(0, 0), makeChaosValue(7, 123456), makeChaosValue(65534, 1<<chaosSeqBits-1)} {
		b := appendChaosRecord(nil, v, 100)
		if len(b) != 100 {
			t.Fatalf("%v: %d bytes, want 100", v, len(b))
		}
		got, ok := parseChaosRecord(b)
		if !ok || got != v {
			t.Fatalf("%q parsed as %v %v, want %v", b, got, ok, v)
		}
	}
	for _, bad := range []string{"", "1:2", ":2;", "1:;", "x:1;", "1:x;", "-1:2;", "65536:1;", "1:1099511627776;"} {
		if v, ok := parseChaosRecord([]byte(bad)); ok {
			t.Errorf("%q parsed as %v", bad, v)
		}
	}
}

// FuzzChaosRecordValue: record values come off the socket; any bytes are
// refused or parse to a value that writes back to the same prefix.
func FuzzChaosRecordValue(f *testing.F) {
	f.Add([]byte("3:42;..."))
	f.Add([]byte("1:2"))
	f.Add([]byte("65535:1099511627775;"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := parseChaosRecord(b)
		if !ok {
			return
		}
		again, ok := parseChaosRecord(appendChaosRecord(nil, v, 0))
		if !ok || again != v {
			t.Fatalf("%q -> %v -> %v %v", b, v, again, ok)
		}
		if bytes.IndexByte(b, ';') < 0 {
			t.Fatalf("%q parsed without its terminator", b)
		}
	})
}
