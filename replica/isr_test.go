package replica

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestISRScripts runs the ISR/HW state machine's scripts (testdata/isr_*.txt).
//
//	leader self=1 replicas=1,2,3 isr=1,2,3 leo=10 hw=4 now=0 lag=100
//	fetch id=2 offset=10 now=5
//	append leo=15 now=6
//	tick now=200
//	metadata replicas=1,2,3 isr=1,2 epoch=1 now=210 [ineligible=3]
//	alter-failed
//
// Each prints the HW (with "moved" when the step moved it), the committed
// and asked-for ISR, and the ISR change the step asks for.
func TestISRScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if !strings.Contains(path, "isr_") {
			return
		}
		var s *isrState
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			args := map[string]string{}
			for _, a := range d.CmdArgs {
				args[a.Key] = strings.Join(a.Vals, ",")
			}
			num := func(k string) int64 {
				v, ok := args[k]
				if !ok {
					d.Fatalf(t, "%s: missing %s=", d.Cmd, k)
				}
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					d.Fatalf(t, "%s: %s=%q: %v", d.Cmd, k, v, err)
				}
				return n
			}
			ids := func(k string) []int32 {
				var out []int32
				for _, f := range strings.Split(args[k], ",") {
					if f == "" {
						continue
					}
					n, err := strconv.Atoi(f)
					if err != nil {
						d.Fatalf(t, "%s: %s: %v", d.Cmd, k, err)
					}
					out = append(out, int32(n))
				}
				return out
			}
			minISR := 1 // min-isr=N, sticky from the leader command on
			if v, ok := args["min-isr"]; ok {
				minISR, _ = strconv.Atoi(v)
			} else if s != nil {
				minISR = s.minISR
			}
			var moved bool
			var alter []int32
			out := ""
			switch d.Cmd {
			case "leader":
				s = newISRState(int32(num("self")), ids("replicas"), ids("isr"), nil, 0, minISR, num("leo"), num("hw"), num("now"), num("lag"))
			case "fetch":
				var ok bool
				moved, alter, ok = s.fetched(int32(num("id")), num("offset"), num("now"))
				if !ok {
					out += "not a replica\n"
				}
			case "append":
				moved = s.appended(num("leo"), num("now"))
			case "tick":
				alter, moved = s.tick(num("now"))
			case "metadata":
				moved = s.setMetadata(ids("replicas"), ids("isr"), int32(num("epoch")), ids("ineligible"), minISR, num("now"))
			case "alter-failed":
				s.alterFailed()
			default:
				d.Fatalf(t, "unknown command %s", d.Cmd)
			}
			out += fmt.Sprintf("hw=%d", s.hw)
			if moved {
				out += " (moved)"
			}
			out += fmt.Sprintf(" leo=%d isr=%v", s.leo, s.isr)
			if s.pending != nil {
				out += fmt.Sprintf(" pending=%v", s.pending)
			}
			if alter != nil {
				out += fmt.Sprintf("\nalter-partition isr=%v", alter)
			}
			return out + "\n"
		})
	})
}
