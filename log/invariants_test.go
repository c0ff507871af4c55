package log

import (
	"strings"
	"testing"
)

// The invariant checks catch what they are written for (whether or not
// this build runs them).
func TestInvariantChecksFire(t *testing.T) {
	seg := func(base, next int64) *Segment {
		s := &Segment{base: base}
		s.next.Store(next)
		return s
	}
	for _, tc := range []struct {
		name string
		segs []*Segment
		want string
	}{
		{"bases out of order", []*Segment{seg(10, 20), seg(5, 30)}, "follows"},
		{"overlap", []*Segment{seg(0, 11), seg(10, 20)}, "past the next segment's base"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, tc.want) {
					t.Fatalf("panic %q, want one saying %q", r, tc.want)
				}
			}()
			checkSegmentList(tc.segs)
		})
	}
	checkSegmentList([]*Segment{seg(0, 10), seg(10, 10), seg(15, 20)}) // gaps are fine (compaction)
}
