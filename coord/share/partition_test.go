package share

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// Script tests of Partition (testdata/partition_*.txt). Commands:
//
//	new start=0 [lock=1000] [limit=3] [max=100]
//	acquire member=a from=0 to=10 [now=0] [max=N] [strict] [skip=(3,4)] [batches=(0-4,5-9)] [expire]
//	ack member=a first=0 last=2 types=(1) [now=0]
//	expire now=1000
//	release member=a
//	fetch-offset
//	lock-due                        when the lock timer is to fire
//	move-start offset=5
//
// After each command the partition is printed: SPSO, SPEO and its spans,
// after a line saying so when records became acquirable again (given back,
// or room made under max.record.locks): parked share fetches wake then.
func TestPartitionScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var p *Partition
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var out strings.Builder
			switch d.Cmd {
			case "new":
				p = NewPartition(argInt(t, d, "start", 0), Limits{
					LockDuration: argInt(t, d, "lock", 1000), DeliveryLimit: int(argInt(t, d, "limit", 3)), MaxInFlight: int(argInt(t, d, "max", 100))})
			case "acquire":
				skips := map[int64]bool{}
				for _, s := range argList(d, "skip") {
					skips[mustInt(t, s)] = true
				}
				var ends [][2]int64
				for _, b := range argList(d, "batches") {
					lo, hi, _ := strings.Cut(b, "-")
					ends = append(ends, [2]int64{mustInt(t, lo), mustInt(t, hi) + 1})
				}
				var batchEnd func(int64) int64
				if len(ends) > 0 {
					batchEnd = func(off int64) int64 {
						for _, e := range ends {
							if off >= e[0] && off < e[1] {
								return e[1]
							}
						}
						return off + 1
					}
				}
				if d.HasArg("expire") {
					p.Expire(argInt(t, d, "now", 0)) // as a share fetch does first
				}
				got := p.Acquire(argInt(t, d, "now", 0), argStr(d, "member"), argInt(t, d, "from", 0), argInt(t, d, "to", 0),
					int(argInt(t, d, "max", 0)), d.HasArg("strict"), func(o int64) bool { return skips[o] }, batchEnd)
				fmt.Fprintf(&out, "acquired:")
				for _, a := range got {
					fmt.Fprintf(&out, " %d-%d(x%d)", a.First, a.Last, a.Count)
				}
				out.WriteString("\n")
			case "ack":
				var types []int8
				for _, s := range argList(d, "types") {
					types = append(types, int8(mustInt(t, s)))
				}
				err := p.Acknowledge(argInt(t, d, "now", 0), argStr(d, "member"), argInt(t, d, "first", 0), argInt(t, d, "last", 0), types)
				fmt.Fprintf(&out, "ack: %v\n", errText(err))
			case "expire":
				next, ended := p.Expire(argInt(t, d, "now", 0))
				fmt.Fprintf(&out, "next deadline: %d, %d locks ended\n", next, ended)
			case "release":
				p.ReleaseMember(argStr(d, "member"))
			case "lock-due":
				fmt.Fprintf(&out, "first lock ends by: %d\n", p.LockDue())
			case "fetch-offset":
				off, ok := p.FetchOffset()
				fmt.Fprintf(&out, "fetch offset: %d ok=%v\n", off, ok)
			case "move-start":
				p.MoveStart(argInt(t, d, "offset", 0))
			default:
				t.Fatalf("unknown command %q", d.Cmd)
			}
			if p.TakeFreed() {
				out.WriteString("records acquirable again: wake parked fetches\n")
			}
			fmt.Fprintf(&out, "spso=%d speo=%d", p.Start(), p.End())
			for _, s := range p.Spans() {
				fmt.Fprintf(&out, "\n  %d-%d %s", s.First, s.Last, s.State)
				if s.Count > 0 {
					fmt.Fprintf(&out, " x%d", s.Count)
				}
				if s.Member != "" {
					fmt.Fprintf(&out, " by %s", s.Member)
				}
			}
			return out.String() + "\n"
		})
	})
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func argStr(d *datadriven.TestData, key string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0]
		}
	}
	return ""
}

func argList(d *datadriven.TestData, key string) []string {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return a.Vals
		}
	}
	return nil
}

func argInt(t *testing.T, d *datadriven.TestData, key string, def int64) int64 {
	if s := argStr(d, key); s != "" {
		return mustInt(t, s)
	}
	return def
}

func mustInt(t *testing.T, s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}
