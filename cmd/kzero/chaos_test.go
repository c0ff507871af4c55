package main

// The long-running durability check (issue 15, `make chaos`): kzero
// processes with replication-factor-3 topics and min.insync.replicas=2,
// idempotent acks=all producers and tailing consumers writing down
// everything they were told, while a seeded loop kills -9, freezes and
// restarts random nodes (the quorum's leader too). At the end every node is
// healed, the cluster settles, every partition is read from its start, and
// the checker (chaos_checker_test.go) counts what was lost, duplicated,
// reordered, vanished or acknowledged at the wrong offset. Outside the
// default run: KZERO_CHAOS=1 turns it on, CHAOS_* variables shape it (see
// chaosOptionsFromEnv).

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// chaosOptions shape a run; every one has a CHAOS_ variable.
type chaosOptions struct {
	duration   time.Duration // CHAOS_DURATION: how long faults and producers run (5m)
	seed       uint64        // CHAOS_SEED: the fault schedule's seed (the clock's)
	brokers    int           // CHAOS_BROKERS: nodes, each broker and voter (3; 5)
	topics     int           // CHAOS_TOPICS (2)
	partitions int           // CHAOS_PARTITIONS: per topic (3)
	rf         int           // CHAOS_RF: replication factor (3)
	minISR     int           // CHAOS_MIN_ISR: min.insync.replicas of the topics (2)
	producers  int           // CHAOS_PRODUCERS (4)
	rate       int           // CHAOS_RATE: records per second per producer (250)
	valueBytes int           // CHAOS_VALUE_BYTES (100)
	buffered   int           // CHAOS_BUFFERED: records a producer holds unanswered at most (1000)
	maxDown    int           // CHAOS_MAX_DOWN: nodes killed or frozen at once (1; 2)
	overrides  []string      // CHAOS_OVERRIDES: k=v,k=v for every node, after the run's own
	keep       bool          // CHAOS_KEEP=1: keep the run's directory even when it passes
	dir        string        // CHAOS_DIR: where the run's directory goes (the system's temp dir)
}

// chaosNodeOverrides: a killed node is fenced after 3 s rather than
// Kafka's 9 s, so a run of minutes sees many failovers.
var chaosNodeOverrides = []string{"broker.session.timeout.ms=3000"}

func chaosOptionsFromEnv() (chaosOptions, error) {
	o := chaosOptions{duration: 5 * time.Minute, seed: uint64(time.Now().UnixNano()), brokers: 3, topics: 2,
		partitions: 3, rf: 3, minISR: 2, producers: 4, rate: 250, valueBytes: 100, buffered: 1000, maxDown: 1,
		overrides: chaosNodeOverrides, dir: os.TempDir()}
	var errs []string
	num := func(name string, dst *int, lo int) {
		if s := os.Getenv(name); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil || v < lo {
				errs = append(errs, fmt.Sprintf("%s=%q: want an integer of at least %d", name, s, lo))
				return
			}
			*dst = v
		}
	}
	if s := os.Getenv("CHAOS_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Sprintf("CHAOS_DURATION=%q: want a duration such as 30m", s))
		}
		o.duration = d
	}
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Sprintf("CHAOS_SEED=%q: want an unsigned integer", s))
		}
		o.seed = v
	}
	num("CHAOS_BROKERS", &o.brokers, 1)
	num("CHAOS_TOPICS", &o.topics, 1)
	num("CHAOS_PARTITIONS", &o.partitions, 1)
	num("CHAOS_RF", &o.rf, 1)
	num("CHAOS_MIN_ISR", &o.minISR, 1)
	num("CHAOS_PRODUCERS", &o.producers, 1)
	num("CHAOS_RATE", &o.rate, 1)
	num("CHAOS_VALUE_BYTES", &o.valueBytes, 0)
	num("CHAOS_BUFFERED", &o.buffered, 1)
	num("CHAOS_MAX_DOWN", &o.maxDown, 0)
	if s := os.Getenv("CHAOS_OVERRIDES"); s != "" {
		o.overrides = append(slices.Clone(o.overrides), strings.Split(s, ",")...)
	}
	o.keep = os.Getenv("CHAOS_KEEP") == "1"
	if s := os.Getenv("CHAOS_DIR"); s != "" {
		o.dir = s
	}
	if o.rf > o.brokers {
		errs = append(errs, fmt.Sprintf("CHAOS_RF=%d above CHAOS_BROKERS=%d", o.rf, o.brokers))
	}
	if o.maxDown >= o.brokers {
		errs = append(errs, fmt.Sprintf("CHAOS_MAX_DOWN=%d leaves no node of %d up", o.maxDown, o.brokers))
	}
	if o.producers >= 1<<16-1 {
		errs = append(errs, "CHAOS_PRODUCERS: at most 65534")
	}
	if len(errs) > 0 {
		return o, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return o, nil
}

func (o chaosOptions) String() string {
	return fmt.Sprintf("CHAOS_DURATION=%v CHAOS_SEED=%d CHAOS_BROKERS=%d CHAOS_TOPICS=%d CHAOS_PARTITIONS=%d CHAOS_RF=%d CHAOS_MIN_ISR=%d "+
		"CHAOS_PRODUCERS=%d CHAOS_RATE=%d CHAOS_VALUE_BYTES=%d CHAOS_BUFFERED=%d CHAOS_MAX_DOWN=%d node overrides %v",
		o.duration, o.seed, o.brokers, o.topics, o.partitions, o.rf, o.minISR,
		o.producers, o.rate, o.valueBytes, o.buffered, o.maxDown, o.overrides)
}

func TestChaos(t *testing.T) {
	if os.Getenv("KZERO_CHAOS") == "" {
		t.Skip("set KZERO_CHAOS=1 to run the durability check under faults (make chaos)")
	}
	o, err := chaosOptionsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp(o.dir, "kzero-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // runs last: after the nodes are killed
		if t.Failed() || o.keep {
			t.Logf("run directory kept: %s (events.log, node*/kzero.log, node*/data)", root)
			return
		}
		os.RemoveAll(root)
	})
	events := newChaosEvents(t, filepath.Join(root, "events.log"))
	events.log("options: %v", o)
	events.log("run directory %s", root)
	kzeroBinary(t)

	c := startChaosCluster(t, root, o.brokers, o.overrides, events)
	events.log("%d nodes ready: %s", o.brokers, strings.Join(c.seeds(), " "))

	topics := chaosTopics{partitions: o.partitions}
	for i := range o.topics {
		topics.names = append(topics.names, fmt.Sprintf("chaos-%d", i))
	}
	setup, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	createChaosTopics(t, setup, c, topics, o)
	c.topics = topics.names
	s, ok := c.await(setup, topics.names, 1, c.led)
	if !ok {
		t.Fatalf("the run's partitions have no leaders: %v", s)
	}
	events.log("topics created: %v", s)

	// The workload: producers until the run's end, consumers until the
	// cluster has settled after it.
	l := newChaosLedger(topics, 2, events)
	runCtx, stopRun := context.WithTimeout(context.Background(), o.duration)
	consumeCtx, stopConsumers := context.WithCancel(context.Background())
	meterCtx, stopMeter := context.WithCancel(context.Background())
	abortCtx, abortProducers := context.WithCancel(context.Background())
	var producers, consumers, meters sync.WaitGroup
	t.Cleanup(func() { // a fatal run ends its clients before the nodes (cleanups run last first)
		abortProducers()
		stopRun()
		stopConsumers()
		stopMeter()
		producers.Wait()
		consumers.Wait()
		meters.Wait()
	})
	var errMu sync.Mutex
	var clientErrs []error
	keepErr := func(err error) {
		if err != nil {
			errMu.Lock()
			clientErrs = append(clientErrs, err)
			errMu.Unlock()
		}
	}
	for i, iso := range []kgo.IsolationLevel{kgo.ReadUncommitted(), kgo.ReadCommitted()} {
		consumers.Go(func() { keepErr(chaosConsumer(consumeCtx, i, c.seeds(), topics.names, iso, l, events)) })
	}
	for id := range o.producers {
		producers.Go(func() {
			keepErr(chaosProducer(runCtx, abortCtx, id, c.seeds(), l, o.rate, o.valueBytes, o.buffered, events))
		})
	}
	meters.Go(func() { meterChaos(meterCtx, l, events) })
	begin := time.Now()

	plan := defaultChaosPlan
	plan.maxDown = o.maxDown
	st := runFaults(runCtx, c, rand.New(rand.NewPCG(o.seed, 0x6b7a65726f)), plan)
	events.log("faults over, every node healed: %v", st)
	producers.Wait()
	produced := time.Since(begin)
	events.log("producers done: %d acknowledged, %d failed", l.acked.Load(), l.failed.Load())

	// Settled: every partition led (required for the final read), and in
	// sync again: at least min.insync.replicas (a finding if not), then
	// every replica (reported).
	wait := func(d time.Duration, inSync int, ok func(chaosState) bool) (chaosState, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return c.await(ctx, topics.names, inSync, ok)
	}
	if s, ok := wait(5*time.Minute, 1, c.led); !ok {
		t.Fatalf("the cluster did not settle after healing: %v", s)
	}
	isrOK := func(s chaosState) bool { return c.led(s) && s.below == 0 }
	minISR := min(o.minISR, o.rf)
	if s, ok := wait(time.Minute, minISR, isrOK); !ok {
		t.Errorf("a minute after healing, ISRs are still below min.insync.replicas=%d: %v", minISR, s)
	}
	s, _ = wait(30*time.Second, o.rf, isrOK)
	events.log("settled: %v", s)
	stopConsumers()
	consumers.Wait()
	stopMeter()
	meters.Wait()

	readCtx, cancelRead := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancelRead()
	if err := readFinal(readCtx, c.seeds(), l); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	r := checkChaos(l.mu.parts)
	summary := chaosSummary(l, &r, st, produced)
	l.mu.Unlock()
	events.log("summary\n%s", summary)
	for _, err := range clientErrs {
		t.Errorf("client: %v", err)
	}
	if r.Acked == 0 {
		t.Fatalf("nothing was acknowledged: the run measured nothing (see the produce errors above)")
	}
	if r.failed() {
		t.Fatalf("the cluster broke its promises (seed %d); see the summary above and the run directory", o.seed)
	}
}

// createChaosTopics creates the run's topics with their replication factor
// and min.insync.replicas.
func createChaosTopics(t *testing.T, ctx context.Context, c *chaosCluster, topics chaosTopics, o chaosOptions) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.seeds()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	minISR := strconv.Itoa(o.minISR)
	res, err := kadm.NewClient(cl).CreateTopics(ctx, int32(o.partitions), int16(o.rf),
		map[string]*string{"min.insync.replicas": &minISR}, topics.names...)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("create topics: %v", err)
	}
}

// meterChaos logs the clients' throughput every minute.
func meterChaos(ctx context.Context, l *chaosLedger, events *chaosEvents) {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	var acked, failed int64
	seen := make([]int64, len(l.seen))
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		a, f := l.acked.Load(), l.failed.Load()
		line := fmt.Sprintf("last minute: %d acknowledged, %d failed", a-acked, f-failed)
		acked, failed = a, f
		for i := range seen {
			s := l.seen[i].Load()
			line += fmt.Sprintf(", consumer %d saw %d", i, s-seen[i])
			seen[i] = s
		}
		events.log("%s", line)
	}
}

// chaosSummary is the checker's table with what explains it: the faults,
// the producers' errors, the longest stalls and the throughput. The
// ledger's lock is held.
func chaosSummary(l *chaosLedger, r *chaosReport, st chaosFaultStats, took time.Duration) string {
	var b strings.Builder
	b.WriteString(r.String())
	fmt.Fprintf(&b, "faults: %v\nthroughput: %.0f acknowledged records/s over the %v producers ran\n", st, float64(r.Acked)/took.Seconds(), took.Round(time.Second))
	var names []string
	for name := range l.mu.errs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(&b, "produce error %q: %d\n", name, l.mu.errs[name])
	}
	type stall struct {
		part string
		chaosGap
	}
	var stalls []stall
	for i, g := range l.mu.gaps {
		if g.d > 0 {
			stalls = append(stalls, stall{l.mu.parts[i].Name, g})
		}
	}
	slices.SortFunc(stalls, func(a, b stall) int { return cmp.Compare(b.d, a.d) })
	if len(stalls) > 0 {
		fmt.Fprintf(&b, "longest wait between two acknowledgements of a partition: median over partitions %v; longest:",
			stalls[len(stalls)/2].d.Round(time.Millisecond))
		for _, s := range stalls[:min(5, len(stalls))] {
			fmt.Fprintf(&b, " %s %v (ended %s);", s.part, s.d.Round(time.Millisecond), s.end.UTC().Format("15:04:05"))
		}
		b.WriteString("\n")
	}
	return b.String()
}
