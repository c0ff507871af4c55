package bench

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// performance.md.tmpl is PERFORMANCE.md's text; the data it is filled
// with comes from a results folder only, so the page is never typed by
// hand and a fixture folder renders the same page every time.
//
//go:embed performance.md.tmpl
var performanceTemplate string

var performanceTmpl = template.Must(template.New("PERFORMANCE.md").Funcs(template.FuncMap{
	"row":  tableRow,
	"list": func(cells ...string) []string { return cells },
}).Parse(performanceTemplate))

// tableRow writes cells as a row of a Markdown table.
func tableRow(cells []string) string {
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return "| " + strings.Join(esc, " | ") + " |"
}

// page is what performance.md.tmpl is filled with: text already formatted.
type page struct {
	Source    string // the results folder, as given
	PlotsDir  string // the plots folder, relative to the page
	Subject   string
	Peer      string // "" without a comparison
	Date      string // the day the results were measured
	Machine   []string
	Commands  []string
	Make      string // the make line that gives the same run
	Reps      int
	Scale     string     // "" at full scale
	PageCache string     // the memory state the runs began in, in words
	Workloads [][]string // name, kind, what
	Headlines [][]string // workload, metric, subject, peer, ratio
	Limits    [][]string // limit, what, chunk, median, range, reps
	Results   [][]string // workload, metric, subject, peer, ratio, subject %, peer %
	Goals     [][]string // workload, metric, goal, measured, met
	// Load is each latency run with the machine's load over it, and
	// LoadVerdicts whether the pairs agree on the lower tail.
	Load         [][]string
	LoadVerdicts []string
	CPUs         int
	Plots        []plot
	Profiles     []profileSection
	Gaps         []string
}

// profileSection is what the CPU profiles of one workload show.
type profileSection struct {
	Path     string // "produce" or "fetch"
	Workload string
	Files    []string
	Summary  string
	Flat     *profileTop
	Cum      *profileTop
	Err      string
}

// limitWhat says what each limit measures, for the page.
var limitWhat = map[string]string{
	LimitLoopback:   "one loopback TCP connection, write() and read()",
	LimitSendfile:   "sendfile() from a page-cached file to a loopback socket",
	LimitAppend:     "write() appended to a file in a warm page cache, no fsync",
	LimitAppendCold: "the same into memory the page cache had not just used (on a VM, first touch faults on the host)",
}

// headlineMetric is the figure that sums up a workload of each kind.
var headlineMetric = map[Kind]string{
	KindProduce: "produce MiB/s",
	KindConsume: "consume MiB/s",
	KindLatency: "p99 ms",
	KindMixed:   "produce MiB/s",
}

// profiledPaths are the paths whose profiles the page shows: the workload
// preferred for each, else the first of its kind with CPU profiles.
var profiledPaths = []struct {
	path      string
	preferred string
	kind      Kind
}{
	{"produce", "produce-1k-max", KindProduce},
	{"fetch", "consume-1gib-catchup", KindConsume},
}

// renderPerformance writes PERFORMANCE.md for the analysis; plotsDir is
// where the plots are, relative to the page.
func (a *analysis) renderPerformance(ctx context.Context, w io.Writer, source, plotsDir string, plots []plot, goals []Goal) error {
	p := page{Source: source, PlotsDir: plotsDir, Subject: a.subject(), Peer: a.peer(), Reps: a.reps(), Plots: plots}
	if sc := a.scale(); sc != 1 {
		p.Scale = strconv.FormatFloat(sc, 'f', -1, 64)
	}
	p.PageCache = pageCacheState(a.f.Results)
	p.Date = a.f.Results[0].Start.UTC().Format(time.DateOnly)
	if m := a.f.Machine(); m != nil {
		p.Machine = machineFacts(*m)
	}
	for _, s := range []*Step{a.f.LimitsStep, a.f.Run} {
		if s != nil {
			p.Commands = append(p.Commands, strings.Join(s.Command, " "))
		}
	}
	p.Make = fmt.Sprintf("make bench-suite bench-report BENCH_REPS=%d BENCH_SCALE=%s", p.Reps, strconv.FormatFloat(a.scale(), 'f', -1, 64))
	p.Workloads = a.workloadRows()
	p.Headlines = a.headlineRows()
	p.Limits = a.limitRows()
	p.Results = a.resultRows()
	if p.Load = a.loadRows(); len(p.Load) > 0 {
		p.LoadVerdicts = a.loadVerdicts()
		if m := a.f.Machine(); m != nil {
			p.CPUs = m.CPUs
		}
	}
	checks := a.checkGoals(goals)
	for _, c := range checks {
		met := "**no**"
		switch {
		case c.Measured == "":
			met, c.Measured = "not measured", "–"
		case c.Met:
			met = "yes"
		}
		p.Goals = append(p.Goals, []string{c.Workload, c.Metric, c.Want, c.Measured, met})
	}
	p.Profiles = a.profileSections(ctx)
	p.Gaps = a.gaps(checks, p.Profiles)
	return performanceTmpl.Execute(w, p)
}

// machineFacts are the machine's facts as the lines of a list.
func machineFacts(m Machine) []string {
	var out []string
	add := func(label, v string) {
		if v != "" {
			out = append(out, label+": "+v)
		}
	}
	add("CPU", m.CPUModel)
	if m.CPUs > 0 {
		add("CPUs the suite may use (nproc)", strconv.Itoa(m.CPUs))
	}
	if m.MemoryBytes > 0 {
		add("Memory", strconv.FormatFloat(float64(m.MemoryBytes)/(1<<30), 'f', 1, 64)+" GiB")
	}
	add("Kernel", m.Kernel)
	add("Go", strings.TrimSpace(m.GoVersion+" "+m.Arch))
	return out
}

func (a *analysis) workloadRows() [][]string {
	var rows [][]string
	for _, name := range a.workloads {
		what := ""
		if w, ok := a.spec(name); ok {
			what = workloadShape(w)
		}
		rows = append(rows, []string{name, string(a.kinds[name]), what})
	}
	return rows
}

// pageCacheState says in words which memory state the runs began in
// (Result.PageCache).
func pageCacheState(results []Result) string {
	warm := 0
	for _, r := range results {
		if r.PageCache == PageCacheWarm {
			warm++
		}
	}
	switch warm {
	case 0:
		return "as the machine was (not warmed: appends may land in memory the host must fault in)"
	case len(results):
		return "warm: before each run the suite wrote and deleted a file, so that appends land in recycled page-cache pages (`--warm`)"
	}
	return fmt.Sprintf("warm for %d of the %d runs (`--warm`), as the machine was for the others", warm, len(results))
}

// workloadShape says what a workload does, in a line, as it was run.
func workloadShape(w Workload) string {
	parts := []string{fmt.Sprintf("%d B %s records", w.RecordBytes, w.Payload), fmt.Sprintf("%d partitions", w.Partitions)}
	if w.raw() {
		parts = append(parts, fmt.Sprintf("raw client, %s KiB batches", sig3(float64(w.BatchBytes)/1024)))
	}
	if w.Kind != KindConsume || w.Producers > 1 {
		pr := plural(w.Producers, "producer")
		if w.raw() {
			pr = plural(w.Producers, "producer connection") + fmt.Sprintf(" × %d in flight", w.InFlight)
		}
		parts = append(parts, pr)
	}
	if w.Kind != KindProduce {
		c := plural(w.Consumers, "consumer")
		if w.raw() {
			c = plural(w.Consumers, "consumer connection")
		}
		if w.Group {
			c += " in a group"
		}
		if w.ShareGroup {
			c += " in a share group"
		}
		parts = append(parts, c)
	}
	parts = append(parts, "acks="+w.Acks)
	if w.Idempotent {
		parts = append(parts, "idempotent")
	}
	if w.Compression != "none" {
		parts = append(parts, w.Compression)
	}
	if w.Linger != nil {
		parts = append(parts, "linger "+w.Linger.D().String())
	}
	if w.Rate > 0 {
		parts = append(parts, fmt.Sprintf("%s records/s", strconv.FormatFloat(w.Rate, 'f', -1, 64)))
	}
	if w.Duration > 0 {
		d := w.Duration.D().String()
		if w.Warmup > 0 {
			d += " (" + w.Warmup.D().String() + " warmup)"
		}
		parts = append(parts, d)
	}
	if w.Records > 0 {
		parts = append(parts, fmt.Sprintf("%d records (%s MiB)", w.Records, sig3(float64(w.Records)*float64(w.RecordBytes)/(1<<20))))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// cell is a metric of a workload on a target: median (range), or a dash.
func (a *analysis) cell(workload, target string, m Metric) string {
	if target == "" {
		return "–"
	}
	s := a.spread(workload, target, m)
	if s.N == 0 {
		return "–"
	}
	return figure(s)
}

// ratioCell is the subject-to-peer ratio of a workload's metric, marked
// when the subject is the better one.
func (a *analysis) ratioCell(workload, metric string) string {
	c, ok := a.comparison(workload, metric)
	if !ok {
		return "–"
	}
	s := sig3(c.Ratio)
	if advantage(c) > 1 {
		s = "**" + s + "**"
	}
	return s
}

func (a *analysis) headlineRows() [][]string {
	var rows [][]string
	for _, w := range a.workloads {
		name := headlineMetric[a.kinds[w]]
		m, ok := reportMetric(name)
		if !ok {
			continue
		}
		subj, peer := a.cell(w, a.subject(), m), a.cell(w, a.peer(), m)
		if subj == "–" && peer == "–" {
			continue
		}
		rows = append(rows, []string{w, name, subj, peer, a.ratioCell(w, name)})
	}
	return rows
}

func (a *analysis) limitRows() [][]string {
	var rows [][]string
	for _, l := range a.limits {
		rows = append(rows, []string{l.Limit, limitWhat[l.Limit], strconv.Itoa(l.ChunkBytes>>10) + " KiB",
			sig3(l.MiBps.Median), sig3(l.MiBps.Min) + "–" + sig3(l.MiBps.Max), strconv.Itoa(l.MiBps.N)})
	}
	return rows
}

func (a *analysis) resultRows() [][]string {
	var rows [][]string
	for _, w := range a.workloads {
		for _, m := range reportMetrics {
			subj := a.cell(w, a.subject(), m)
			peer := a.cell(w, a.peer(), m)
			if subj == "–" && peer == "–" {
				continue
			}
			rows = append(rows, []string{w, m.Name, subj, peer, a.ratioCell(w, m.Name),
				a.shareCell(w, a.subject(), m.Name), a.shareCell(w, a.peer(), m.Name)})
		}
	}
	return rows
}

func (a *analysis) shareCell(workload, target, metric string) string {
	if target == "" {
		return "–"
	}
	s, ok := a.share(workload, target, metric)
	if !ok {
		return "–"
	}
	_, lim, _ := a.limitFor(metric)
	return fmt.Sprintf("%s%% of %s", sig3(s*100), lim)
}

// profileSections reads the subject's CPU profiles of the produce and the
// fetch path.
func (a *analysis) profileSections(ctx context.Context) []profileSection {
	var out []profileSection
	for _, pp := range profiledPaths {
		wl := ""
		candidates := append([]string{pp.preferred}, a.workloads...)
		for _, c := range candidates {
			if (c == pp.preferred || a.kinds[c] == pp.kind) && len(a.f.cpuProfiles(c, a.subject())) > 0 {
				wl = c
				break
			}
		}
		if wl == "" {
			continue
		}
		s := profileSection{Path: pp.path, Workload: wl}
		files := a.f.cpuProfiles(wl, a.subject())
		for _, f := range files {
			s.Files = append(s.Files, path.Base(strings.ReplaceAll(f, "\\", "/")))
		}
		var err error
		if s.Flat, err = pprofTop(ctx, files, false, topNodes); err == nil {
			s.Cum, err = pprofTop(ctx, files, true, topNodes)
		}
		if err != nil {
			s.Err = err.Error()
		} else {
			s.Summary = profileSummary(s.Flat)
		}
		out = append(out, s)
	}
	return out
}

// frameFamilies group the functions of a profile into what they do, for
// the sentence that sums a profile up. A function belongs to the first
// family with a matching prefix.
var frameFamilies = []struct {
	name     string
	prefixes []string
}{
	{"system calls", []string{"syscall.", "internal/runtime/syscall", "golang.org/x/sys/unix.", "internal/poll."}},
	{"garbage collection and allocation", []string{"runtime.gc", "runtime.mallocgc", "runtime.scanobject", "runtime.markBits",
		"runtime.greyobject", "runtime.findObject", "runtime.(*mspan)", "runtime.(*mheap)", "runtime.memclr", "runtime.bgsweep",
		"runtime.sweepone", "runtime.(*gcWork)", "runtime.wbBuf", "runtime.bulkBarrier"}},
	{"scheduling", []string{"runtime.schedule", "runtime.findRunnable", "runtime.futex", "runtime.netpoll", "runtime.usleep",
		"runtime.notesleep", "runtime.stealWork", "runtime.runqgrab", "runtime.mcall", "runtime.park_m", "runtime.lock",
		"runtime.unlock", "runtime.procyield", "runtime.osyield", "runtime.nanotime", "runtime.epollwait"}},
	{"copying memory", []string{"runtime.memmove"}},
	{"checksums", []string{"hash/crc32.", "kzero/log.crc", "github.com/klauspost/crc32"}},
	{"compression", []string{"github.com/klauspost/compress", "github.com/pierrec/lz4", "compress/"}},
}

// noiseMargin is how far from parity a ratio must be before the gaps call
// the subject worse: on a shared machine a few percent is noise.
const noiseMargin = 0.05

// thinProfile is the CPU time below which a profile's ranking is noise:
// a hundred samples.
const thinProfile = time.Second

// profileSummary sums a flat listing up in a sentence: the hottest
// function, and the share of the listed samples each family of functions
// holds.
func profileSummary(t *profileTop) string {
	if len(t.Rows) == 0 {
		return "The profiles hold no samples."
	}
	shares := map[string]float64{}
	listed := 0.0
	for _, r := range t.Rows {
		pct, err := strconv.ParseFloat(strings.TrimSuffix(r.FlatPct, "%"), 64)
		if err != nil {
			continue
		}
		listed += pct
		for _, f := range frameFamilies {
			if slices.ContainsFunc(f.prefixes, func(p string) bool { return strings.HasPrefix(r.Func, p) }) {
				shares[f.name] += pct
				break
			}
		}
	}
	var parts []string
	for _, f := range frameFamilies {
		if v := shares[f.name]; v >= 0.5 {
			parts = append(parts, fmt.Sprintf("%s %s%%", f.name, sig3(v)))
		}
	}
	s := fmt.Sprintf("The hottest function is `%s` (%s of samples by itself). The %d functions listed hold %s%% of the samples",
		t.Rows[0].Func, t.Rows[0].FlatPct, len(t.Rows), sig3(listed))
	if len(parts) > 0 {
		s += "; among them " + strings.Join(parts, ", ")
	}
	return s + "."
}

// gaps are what the results fall short of, or cannot show: goals missed,
// runs that failed, figures that were not measured.
func (a *analysis) gaps(checks []goalCheck, profiles []profileSection) []string {
	var out []string
	for _, c := range checks {
		if c.Measured != "" && !c.Met {
			out = append(out, fmt.Sprintf("%s: %s is %s; the goal is %s (%s).", c.Workload, c.Metric, c.Measured, c.Want, c.Source))
		}
	}
	for _, c := range checks {
		if c.Measured == "" {
			out = append(out, fmt.Sprintf("%s: %s was not measured, so the goal %s is unchecked (%s).", c.Workload, c.Metric, c.Want, c.Source))
		}
	}
	if a.peer() != "" {
		var worse []string
		for _, w := range a.workloads {
			if c, ok := a.comparison(w, headlineMetric[a.kinds[w]]); ok && advantage(c) < 1-noiseMargin {
				worse = append(worse, fmt.Sprintf("%s (%s %s× %s's)", w, c.Metric, sig3(c.Ratio), a.peer()))
			}
		}
		if len(worse) > 0 {
			out = append(out, fmt.Sprintf("%s does worse than %s, by more than %d%%, on the headline figure of %s.", a.subject(), a.peer(), int(noiseMargin*100), strings.Join(worse, ", ")))
		}
	}
	for _, r := range a.failures() {
		out = append(out, fmt.Sprintf("%s on %s, repetition %d, failed: %s.", r.Workload, r.Target, r.Rep, strings.TrimSuffix(r.Error, ".")))
	}
	if a.peer() != "" {
		for _, w := range a.workloads {
			found := false
			for _, c := range a.compare {
				found = found || c.Workload == w
			}
			if !found {
				out = append(out, fmt.Sprintf("%s has no pair of runs that both succeeded, so no ratio against %s.", w, a.peer()))
			}
		}
	}
	if len(a.limits) == 0 {
		out = append(out, "The machine's limits were not measured (`kzctl bench limits --out` into the results folder), so no throughput is shown as a share of them.")
	}
	for _, s := range profiles {
		if s.Err != "" {
			out = append(out, fmt.Sprintf("The CPU profiles of %s could not be read: %s.", s.Workload, s.Err))
			continue
		}
		total, _, _ := strings.Cut(s.Flat.Total, " ")
		if d, err := time.ParseDuration(total); err == nil && d < thinProfile {
			out = append(out, fmt.Sprintf("The %s path's profiles hold %s of samples (%d at pprof's 100 Hz): too few to rank its functions with confidence; a longer run (a larger --scale) gives more.",
				s.Path, total, d/(10*time.Millisecond)))
		}
	}
	for _, pp := range profiledPaths {
		found := false
		for _, s := range profiles {
			found = found || s.Path == pp.path
		}
		if !found {
			out = append(out, fmt.Sprintf("No CPU profile of the %s path of %s: run with --pprof against a %s the suite starts.", pp.path, a.subject(), a.subject()))
		}
	}
	for _, t := range a.targets {
		measured := false
		for _, r := range a.f.Results {
			measured = measured || r.Target == t && r.Broker != nil
		}
		if !measured {
			out = append(out, fmt.Sprintf("%s's CPU time and memory are not measured: the suite did not start it as a process of its own (kfake runs inside the benchmark's process, sharing it with the clients).", t))
		}
	}
	if sc := a.scale(); sc < 1 {
		out = append(out, fmt.Sprintf("The runs were scaled to %s of the shipped workloads (shorter windows, fewer records), so a slow start or a late stall weighs more than it would at full length.",
			strconv.FormatFloat(sc, 'f', -1, 64)))
	}
	return out
}
