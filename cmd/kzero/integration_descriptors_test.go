package main

// Descriptor budgets: a broker under a low RLIMIT_NOFILE opens more
// partitions than it has descriptors for three files each (indexes hold no
// descriptor once mapped, sealed segment files sit in a bounded cache), and
// a partition that cannot open answers KAFKA_STORAGE_ERROR instead of
// failing silently. TestScaleTenThousandPartitions is the target,
// outside the default run (KZERO_SCALE=1, `make scale`).

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
)

// startUnderLimit runs kzero with RLIMIT_NOFILE (soft and hard) at nofile
// from its first instruction: a shell sets the limit and execs it.
func startUnderLimit(t *testing.T, nofile int, args ...string) *process {
	t.Helper()
	script := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, nofile)
	p := startCommand(t, exec.Command("/bin/sh", append([]string{"-c", script, kzeroBinary(t)}, args...)...))
	if got := procLimit(t, p.Cmd.Process.Pid); got != nofile {
		t.Fatalf("broker runs with a descriptor limit of %d, want %d", got, nofile)
	}
	return p
}

// createTopicSlow is createTopic with a timeout long enough for thousands
// of partitions on a loaded machine.
func createTopicSlow(t *testing.T, ctx context.Context, cl *kgo.Client, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(600_000)
	resp, err := adm.CreateTopic(ctx, partitions, 1, configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
}

// procLimit reads a process's hard limit of open files.
func procLimit(t *testing.T, pid int) int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) >= 5 && strings.HasPrefix(sc.Text(), "Max open files") {
			n, _ := strconv.Atoi(fields[4])
			return n
		}
	}
	t.Fatal("no open files limit in /proc/pid/limits")
	return 0
}

// procFDs counts a process's open descriptors.
func procFDs(pid int) int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(ents)
}

// procRSS reads a process's resident set in KiB.
func procRSS(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// 1,000 partitions under a limit of 1,200 descriptors (three files a
// partition would need 3,000): every partition opens, takes records and
// serves them back, also after a restart under the same limit; a topic of
// many small segments is read through the sealed-file cache.
func TestThousandPartitionsUnderDescriptorLimit(t *testing.T) {
	const partitions, perPartition, nofile = 1000, 2, 1200
	dir := t.TempDir()
	// 1 KiB segments: the wide partitions' two records fit one, the rolled
	// topic spreads over many sealed segments, read through a cache of 16.
	args := binaryArgs(dir, "log.index.size.max.bytes=65536", "num.network.threads=2", "log.segment.open.files.max=16",
		"log.segment.bytes=1024")
	p := startUnderLimit(t, nofile, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	createTopicSlow(t, ctx, cl, "wide", partitions, nil)
	createTopicSlow(t, ctx, cl, "rolled", 1, nil)

	var rs []*kgo.Record
	for i := range perPartition {
		for part := range int32(partitions) {
			rs = append(rs, &kgo.Record{Topic: "wide", Partition: part, Value: fmt.Appendf(nil, "%d/%d", part, i)})
		}
	}
	const rolled = 200 // about 100 bytes a batch: many 1 KiB segments
	for i := range rolled {
		rs = append(rs, &kgo.Record{Topic: "rolled", Value: fmt.Appendf(nil, "r%03d-%s", i, strings.Repeat("x", 40))})
	}
	for _, r := range rs { // one batch per record: rolled gets many segments
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("after producing: broker holds %d descriptors under a limit of %d", procFDs(p.Cmd.Process.Pid), nofile)

	check := func(addr string) {
		t.Helper()
		cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("wide", "rolled"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		defer cons.Close()
		next := map[string][]int64{"wide": make([]int64, partitions), "rolled": make([]int64, 1)}
		for _, r := range kzerotest.ConsumeN(t, ctx, cons, partitions*perPartition+rolled) {
			want := fmt.Sprintf("%d/%d", r.Partition, next[r.Topic][r.Partition])
			if r.Topic == "rolled" {
				want = fmt.Sprintf("r%03d-%s", r.Offset, strings.Repeat("x", 40))
			}
			if string(r.Value) != want || r.Offset != next[r.Topic][r.Partition] {
				t.Fatalf("%s/%d offset %d holds %q, want offset %d %q", r.Topic, r.Partition, r.Offset, r.Value, next[r.Topic][r.Partition], want)
			}
			next[r.Topic][r.Partition]++
		}
	}
	check(p.Addr)
	p.Stop(t)

	p = startUnderLimit(t, nofile, args...)
	check(p.Addr)
	t.Logf("after a restart: broker holds %d descriptors under a limit of %d", procFDs(p.Cmd.Process.Pid), nofile)
	p.Stop(t)
}

// Under a limit too low for every partition, those that cannot open are
// never a silent success: CreateTopics answers KAFKA_STORAGE_ERROR,
// Metadata marks them KAFKA_STORAGE_ERROR, Produce to one is refused with
// it, and the broker logs them; partitions that did open keep working.
func TestPartitionsThatCannotOpenAreVisible(t *testing.T) {
	const partitions, nofile = 600, 300
	dir := t.TempDir()
	p := startUnderLimit(t, nofile, binaryArgs(dir, "log.index.size.max.bytes=65536", "num.network.threads=1")...)
	conn := kzerotest.Dial(t, p.Addr) // before the descriptors run out

	create := kmsg.NewPtrCreateTopicsRequest()
	create.SetVersion(7)
	create.TimeoutMillis = 60_000
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "crowded", partitions, 1
	create.Topics = append(create.Topics, ct)
	resp, err := conn.Request(create)
	if err != nil {
		t.Fatal(err)
	}
	rt := resp.(*kmsg.CreateTopicsResponse).Topics[0]
	if rt.ErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("CreateTopics of %d partitions under %d descriptors: error %d, want KAFKA_STORAGE_ERROR", partitions, nofile, rt.ErrorCode)
	}
	if rt.ErrorMessage == nil || !strings.Contains(*rt.ErrorMessage, "failed to open") {
		t.Fatalf("CreateTopics error message %v does not say partitions failed to open", rt.ErrorMessage)
	}

	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	mt := kmsg.NewMetadataRequestTopic()
	name := "crowded"
	mt.Topic = &name
	md.Topics = append(md.Topics, mt)
	mresp, err := conn.Request(md)
	if err != nil {
		t.Fatal(err)
	}
	var online, offline []int32
	for _, mp := range mresp.(*kmsg.MetadataResponse).Topics[0].Partitions {
		switch mp.ErrorCode {
		case 0:
			online = append(online, mp.Partition)
		case kerr.KafkaStorageError.Code:
			offline = append(offline, mp.Partition)
		default:
			t.Fatalf("partition %d: metadata error %d", mp.Partition, mp.ErrorCode)
		}
	}
	if len(online) == 0 || len(offline) == 0 {
		t.Fatalf("%d partitions online, %d offline; want some of each under %d descriptors", len(online), len(offline), nofile)
	}
	t.Logf("%d of %d partitions opened under %d descriptors; %d offline", len(online), partitions, nofile, len(offline))

	batch := kzerotest.EncodeBatch(time.Now().UnixMilli(), []byte("v"))
	if pr := kzerotest.ProduceOnce(t, conn, "crowded", offline[0], batch); pr.ErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("produce to offline partition %d: error %d, want KAFKA_STORAGE_ERROR", offline[0], pr.ErrorCode)
	}
	if pr := kzerotest.ProduceOnce(t, conn, "crowded", online[0], batch); pr.ErrorCode != 0 {
		t.Fatalf("produce to online partition %d: error %d", online[0], pr.ErrorCode)
	}
	if fp, recs := kzerotest.FetchOnce(t, conn, "crowded", online[0], 0, 0); fp.ErrorCode != 0 || len(recs) != 1 {
		t.Fatalf("fetch from online partition %d: error %d, %d records", online[0], fp.ErrorCode, len(recs))
	}
	if s := p.Stderr.String(); !strings.Contains(s, "cannot open partition") {
		t.Fatalf("no log line about partitions that failed to open; stderr:\n%s", s)
	}
}

// The target: 10,000 partitions and 2,000 client connections under
// a descriptor limit of 20,000, each connection producing to and fetching
// from its share of the partitions, then a restart under the same limit
// that serves every partition again. KZERO_SCALE=1 runs it (`make scale`).
func TestScaleTenThousandPartitions(t *testing.T) {
	if os.Getenv("KZERO_SCALE") == "" {
		t.Skip("set KZERO_SCALE=1 to run the 10,000-partition scale test (make scale)")
	}
	const partitions, conns, rounds, nofile = 10000, 2000, 3, 20000
	dir := t.TempDir()
	args := binaryArgs(dir, "log.index.size.max.bytes=65536")
	p := startUnderLimit(t, nofile, args...)
	pid := p.Cmd.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	begin := time.Now()
	createTopicSlow(t, ctx, cl, "scale", partitions, nil)
	t.Logf("created %d partitions in %v; broker holds %d descriptors", partitions, time.Since(begin).Round(time.Millisecond), procFDs(pid))

	raws := make([]*kzerotest.Conn, conns)
	for i := range raws {
		raws[i] = kzerotest.Dial(t, p.Addr)
	}
	t.Logf("%d connections open; broker holds %d descriptors", conns, procFDs(pid))
	run := func(raws []*kzerotest.Conn, round int, produce bool) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, len(raws))
		for i, conn := range raws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for part := int32(i); part < partitions; part += conns {
					val := fmt.Sprintf("p%d-r%d", part, round)
					off := int64(round)
					if produce {
						pr, err := conn.Produce("scale", part, kzerotest.EncodeBatch(time.Now().UnixMilli(), []byte(val)))
						if err == nil {
							err = kerr.ErrorForCode(pr.ErrorCode)
						}
						if err != nil {
							errs <- fmt.Errorf("produce %d: %w", part, err)
							return
						}
						off = pr.BaseOffset
					}
					fp, recs, err := conn.Fetch("scale", part, off, 0)
					if err == nil {
						err = kerr.ErrorForCode(fp.ErrorCode)
					}
					if err == nil && (len(recs) == 0 || string(recs[0].Value) != val || recs[0].Offset != off) {
						err = fmt.Errorf("offset %d: %d records, want %q", off, len(recs), val)
					}
					if err != nil {
						errs <- fmt.Errorf("fetch %d: %w", part, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	for round := range rounds {
		begin := time.Now()
		run(raws, round, true)
		t.Logf("round %d: %d produce+fetch pairs over %d connections in %v; broker holds %d descriptors, RSS %d MiB",
			round, partitions, conns, time.Since(begin).Round(time.Millisecond), procFDs(pid), procRSS(pid)>>10)
	}
	for _, r := range raws {
		r.NetConn().Close()
	}
	cl.Close()
	begin = time.Now()
	p.StopWithin(t, 10*time.Minute) // every log is flushed and closed
	t.Logf("stopped in %v", time.Since(begin).Round(time.Millisecond))

	begin = time.Now()
	p = startUnderLimit(t, nofile, args...)
	pid = p.Cmd.Process.Pid
	t.Logf("restarted with %d partitions in %v; broker holds %d descriptors", partitions, time.Since(begin).Round(time.Millisecond), procFDs(pid))
	raws = make([]*kzerotest.Conn, conns)
	for i := range raws {
		raws[i] = kzerotest.Dial(t, p.Addr)
	}
	begin = time.Now()
	run(raws, 0, false)
	t.Logf("after restart: fetched offset 0 of every partition over %d connections in %v; broker holds %d descriptors, RSS %d MiB",
		conns, time.Since(begin).Round(time.Millisecond), procFDs(pid), procRSS(pid)>>10)
	p.StopWithin(t, 10*time.Minute)
}
