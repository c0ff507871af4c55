package bench

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MachineLoad is how busy the whole machine was over a run's measured
// phase, from /proc/stat: on a shared machine a tail latency means little
// without it (issue 17). Steal is the time the hypervisor ran other guests
// on this one's CPUs; the run queue, the tasks runnable at each sample
// beyond the sampler itself, above the CPU count means something waited.
type MachineLoad struct {
	BusyPct     float64 `json:"busy_pct"`  // CPU time not idle (nor iowait), of all CPUs' time
	StealPct    float64 `json:"steal_pct"` // CPU time stolen by the hypervisor, of all CPUs' time
	RunQueueAvg float64 `json:"run_queue_avg"`
	RunQueueMax int     `json:"run_queue_max"`
	Samples     int     `json:"samples"`
}

// loadInterval is how often the sampler reads /proc/stat.
const loadInterval = 100 * time.Millisecond

// procStat is what the sampler reads of /proc/stat: the aggregate "cpu"
// line's jiffies and procs_running.
type procStat struct {
	total, idle, steal uint64
	running            int
}

// parseProcStat reads the aggregate cpu line (user nice system idle iowait
// irq softirq steal ...) and procs_running of /proc/stat.
func parseProcStat(b []byte) (procStat, error) {
	var s procStat
	var haveCPU, haveRunning bool
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "cpu":
			if len(f) < 9 {
				return s, fmt.Errorf("cpu line with %d fields, want at least 9", len(f))
			}
			for i, v := range f[1:] {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return s, fmt.Errorf("cpu field %d %q: %w", i+1, v, err)
				}
				if i >= 8 {
					break // guest time is counted in user already
				}
				s.total += n
				switch i {
				case 3, 4: // idle, iowait
					s.idle += n
				case 7:
					s.steal = n
				}
			}
			haveCPU = true
		case "procs_running":
			if len(f) != 2 {
				return s, fmt.Errorf("procs_running line %q", strings.TrimSpace(line))
			}
			n, err := strconv.Atoi(f[1])
			if err != nil || n < 0 {
				return s, fmt.Errorf("procs_running %q", f[1])
			}
			s.running = n
			haveRunning = true
		}
	}
	if !haveCPU || !haveRunning {
		return s, errors.New("no cpu or procs_running line")
	}
	return s, nil
}

// loadSampler reads /proc/stat every loadInterval until stopped.
type loadSampler struct {
	path  string
	stop  chan struct{}
	done  sync.WaitGroup
	first procStat
	last  procStat
	sum   int
	max   int
	n     int
	err   error
}

// startLoad begins sampling the machine's load; nil when /proc/stat
// cannot be read (not Linux): the run goes on without it.
func startLoad(path string) *loadSampler {
	s := &loadSampler{path: path, stop: make(chan struct{})}
	first, err := s.read()
	if err != nil {
		return nil
	}
	s.first, s.last = first, first
	s.done.Go(func() {
		t := time.NewTicker(loadInterval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				if st, err := s.read(); err == nil {
					s.add(st)
				}
			}
		}
	})
	return s
}

func (s *loadSampler) read() (procStat, error) {
	b, err := os.ReadFile(s.path)
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(b)
}

func (s *loadSampler) add(st procStat) {
	q := max(st.running-1, 0) // the sampler itself is running as it reads
	s.last = st
	s.sum += q
	s.max = max(s.max, q)
	s.n++
}

// end stops sampling and returns the load over the sampled span.
func (s *loadSampler) end() *MachineLoad {
	if s == nil {
		return nil
	}
	close(s.stop)
	s.done.Wait()
	if st, err := s.read(); err == nil {
		s.add(st)
	}
	return s.load()
}

func (s *loadSampler) load() *MachineLoad {
	l := &MachineLoad{RunQueueMax: s.max, Samples: s.n}
	if s.n > 0 {
		l.RunQueueAvg = float64(s.sum) / float64(s.n)
	}
	if total := s.last.total - s.first.total; s.last.total > s.first.total {
		idle := s.last.idle - s.first.idle
		l.BusyPct = 100 * float64(total-min(idle, total)) / float64(total)
		l.StealPct = 100 * float64(s.last.steal-min(s.first.steal, s.last.steal)) / float64(total)
	}
	return l
}

// describeLoad is a run's load in a few words, for tables.
func describeLoad(l *MachineLoad) (steal, runq string) {
	if l == nil {
		return "-", "-"
	}
	return num(l.StealPct, 1), fmt.Sprintf("%.1f (max %d)", l.RunQueueAvg, l.RunQueueMax)
}

// loadRows lists every run with a latency figure and the machine's load
// over it: workload, target, rep, p99, p99.9, busy %, steal %, run queue.
// None when no run recorded its load (results from before it was).
func (a *analysis) loadRows() [][]string {
	var rows [][]string
	for _, r := range a.f.Results {
		if r.Error != "" || r.Latency == nil || r.Load == nil {
			continue
		}
		steal, runq := describeLoad(r.Load)
		rows = append(rows, []string{r.Workload, r.Target, strconv.Itoa(r.Rep), num(r.Latency.P99, 2), num(r.Latency.P999, 2),
			num(r.Load.BusyPct, 0), steal, runq})
	}
	return rows
}

// loadVerdicts says, for each latency workload run on both targets,
// whether its pairs (runs back to back) agree on which broker has the
// lower tail: a figure that flips from pair to pair was decided by the
// machine's load, not by the brokers.
func (a *analysis) loadVerdicts() []string {
	if a.peer() == "" {
		return nil
	}
	var out []string
	for _, w := range a.workloads {
		byRep := map[int][2]*Percentiles{}
		for _, r := range a.f.Results {
			if r.Workload != w || r.Error != "" || r.Latency == nil {
				continue
			}
			p := byRep[r.Rep]
			switch r.Target {
			case a.subject():
				p[0] = r.Latency
			case a.peer():
				p[1] = r.Latency
			}
			byRep[r.Rep] = p
		}
		for _, q := range []struct {
			name string
			get  func(*Percentiles) float64
		}{{"p99", func(p *Percentiles) float64 { return p.P99 }}, {"p99.9", func(p *Percentiles) float64 { return p.P999 }}} {
			pairs, lower := 0, 0
			for _, p := range byRep {
				if p[0] == nil || p[1] == nil {
					continue
				}
				pairs++
				if q.get(p[0]) < q.get(p[1]) {
					lower++
				}
			}
			if pairs == 0 {
				continue
			}
			agree := "the pairs agree"
			if lower != 0 && lower != pairs {
				agree = "the pairs do not agree: the machine's load decided, not the brokers"
			}
			out = append(out, fmt.Sprintf("%s: %s's %s was the lower in %d of %d pairs (%s).", w, a.subject(), q.name, lower, pairs, agree))
		}
	}
	return out
}
