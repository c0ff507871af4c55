package bench

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// Goal is a target a workload's figure should meet, from kzero's
// performance goals; the report checks each against the results and lists
// those missed among the known gaps.
type Goal struct {
	Workload string `json:"workload"`
	Metric   string `json:"metric"` // a report metric's name, such as "produce MiB/s"
	// VsPeer: the subject is at least this many times better than Peer in
	// the same run (median of the pair ratios).
	VsPeer  float64 `json:"vs_peer,omitempty"`
	Peer    string  `json:"peer,omitempty"`
	AtMost  float64 `json:"at_most,omitempty"`  // the subject's median is at most this
	AtLeast float64 `json:"at_least,omitempty"` // the subject's median is at least this
	// OfLimit: the subject's median throughput is at least this share
	// (0 to 1) of the machine's limit for it in the same run: the lower
	// of loopback TCP and the warm append for produce, of loopback TCP
	// and sendfile for consume.
	OfLimit float64 `json:"of_limit,omitempty"`
	Source  string  `json:"source"` // where the goal comes from
}

// defaultGoals are kzero's goals, from PERFORMANCE-GOALS.md.
//
//go:embed goals.json
var defaultGoals []byte

// ParseGoals reads a JSON array of goals.
func ParseGoals(data []byte) ([]Goal, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var gs []Goal
	if err := dec.Decode(&gs); err != nil {
		return nil, fmt.Errorf("goals: %w", err)
	}
	for i, g := range gs {
		_, ok := reportMetric(g.Metric)
		n := 0
		for _, v := range []float64{g.VsPeer, g.AtMost, g.AtLeast, g.OfLimit} {
			if v != 0 {
				n++
			}
		}
		switch {
		case g.Workload == "" || !ok:
			return nil, fmt.Errorf("goal %d: workload %q, metric %q: want a workload and one of the report's metrics", i+1, g.Workload, g.Metric)
		case n != 1:
			return nil, fmt.Errorf("goal %d: want exactly one of vs_peer, at_most, at_least, of_limit", i+1)
		case g.OfLimit != 0 && (g.OfLimit < 0 || g.OfLimit > 1 || g.Metric != "produce MiB/s" && g.Metric != "consume MiB/s"):
			return nil, fmt.Errorf("goal %d: of_limit is a share from 0 to 1 of produce or consume MiB/s", i+1)
		case g.VsPeer != 0 && (g.Peer == "" || g.VsPeer < 0):
			return nil, fmt.Errorf("goal %d: vs_peer needs a peer and a positive ratio", i+1)
		case g.AtMost < 0 || g.AtLeast < 0:
			return nil, fmt.Errorf("goal %d: bounds cannot be negative", i+1)
		}
	}
	return gs, nil
}

// LoadGoals reads a goals file; an empty path gives kzero's own goals.
func LoadGoals(path string) ([]Goal, error) {
	data := defaultGoals
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, err
		}
	}
	return ParseGoals(data)
}

// goalCheck is a goal checked against the results.
type goalCheck struct {
	Goal
	Want     string // the goal, in words
	Measured string // what the results show; "" when they cannot tell
	Met      bool
}

func (a *analysis) checkGoals(goals []Goal) []goalCheck {
	var out []goalCheck
	for _, g := range goals {
		m, _ := reportMetric(g.Metric)
		c := goalCheck{Goal: g}
		switch {
		case g.VsPeer != 0:
			// A lower-is-better figure reads as a fraction of the peer's.
			lower := m.Better == "lower"
			switch {
			case !lower:
				c.Want = fmt.Sprintf("≥ %s× %s", exact(g.VsPeer), g.Peer)
			case g.VsPeer == 1:
				c.Want = fmt.Sprintf("≤ %s's", g.Peer)
			default:
				c.Want = fmt.Sprintf("≤ 1/%s of %s's", exact(g.VsPeer), g.Peer)
			}
			if cmp, ok := a.comparison(g.Workload, g.Metric); ok && a.peer() == g.Peer {
				adv := advantage(cmp)
				c.Measured = fmt.Sprintf("%s× (%d pairs)", sig3(adv), cmp.Pairs)
				if lower {
					c.Measured = fmt.Sprintf("%s× %s's (%d pairs)", sig3(cmp.Ratio), g.Peer, cmp.Pairs)
				}
				c.Met = adv >= g.VsPeer
			}
		case g.OfLimit != 0:
			c.Want = fmt.Sprintf("≥ %s%% of the limit", exact(100*g.OfLimit))
			if sh, ok := a.share(g.Workload, a.subject(), g.Metric); ok {
				_, which, _ := a.limitFor(g.Metric)
				c.Measured = fmt.Sprintf("%s%% of %s", sig3(100*sh), which)
				c.Met = sh >= g.OfLimit
			}
		default:
			s := a.spread(g.Workload, a.subject(), m)
			if g.AtMost != 0 {
				c.Want = "≤ " + exact(g.AtMost)
			} else {
				c.Want = "≥ " + exact(g.AtLeast)
			}
			if s.N > 0 {
				c.Measured = figure(s)
				c.Met = g.AtMost != 0 && s.Median <= g.AtMost || g.AtLeast != 0 && s.Median >= g.AtLeast
			}
		}
		out = append(out, c)
	}
	return out
}

// figure writes a spread as its median and, over more than one
// repetition, its range.
func figure(s Spread) string {
	if s.N <= 1 || s.Min == s.Max {
		return sig3(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", sig3(s.Median), sig3(s.Min), sig3(s.Max))
}

// exact writes a goal's figure as it was given.
func exact(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
