package main

// Split process roles as processes, from the example configs in
// config/split-roles (ports, dirs and admin listeners overridden): three
// controller-only nodes and two broker-only nodes; a topic replicated on
// the brokers; kzctl's quorum view with the brokers as observers; a broker
// killed with SIGKILL fenced; the quorum leader killed with SIGKILL and
// metadata changes going on.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest/await"
	"kzero/tools"
)

// The example configs load as they are.
func TestExampleConfigs(t *testing.T) {
	files, err := filepath.Glob("../../config/*/*.properties")
	if err != nil || len(files) < 8 {
		t.Fatalf("example configs: %v %v", files, err)
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		props, _, err := parseProperties(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := loadConfig(props, nil, quiet); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

var controllerReadyLine = regexp.MustCompile(`^kzero controller ready on (127\.0\.0\.1:\d+)$`)

func TestSplitRolesProcesses(t *testing.T) {
	ports, err := freeLoopbackPorts(3)
	if err != nil {
		t.Fatal(err)
	}
	var voters, bootstrap []string
	for i, p := range ports {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		voters = append(voters, fmt.Sprintf("%d@%s", i+1, addr))
		bootstrap = append(bootstrap, addr)
	}
	common := func(file string) []string {
		return []string{"--config", "../../config/split-roles/" + file,
			"--override", "log.dirs=" + t.TempDir(), "--override", "admin.listener=127.0.0.1:0",
			"--override", "broker.session.timeout.ms=2000"}
	}
	procs := make([]*process, 5)
	var wg sync.WaitGroup
	for i := range 3 {
		args := append(common(fmt.Sprintf("controller%d.properties", i+1)),
			"--override", "listeners=CONTROLLER://"+bootstrap[i],
			"--override", "controller.quorum.voters="+strings.Join(voters, ","))
		procs[i] = launch(t, args...)
		wg.Go(func() {
			select {
			case line := <-procs[i].First():
				if m := controllerReadyLine.FindStringSubmatch(line); m == nil || m[1] != bootstrap[i] {
					t.Errorf("controller %d: first line %q; stderr:\n%s", i+1, line, procs[i].Stderr)
				}
			case <-procs[i].Done():
				t.Errorf("controller %d exited: %v\n%s", i+1, procs[i].Err, procs[i].Stderr)
			case <-time.After(60 * time.Second):
				t.Errorf("controller %d not ready; stderr:\n%s", i+1, procs[i].Stderr)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	var seeds []string
	for i := 3; i < 5; i++ {
		procs[i] = launch(t, append(common(fmt.Sprintf("broker%d.properties", i+1)),
			"--override", "listeners=PLAINTEXT://127.0.0.1:0",
			"--override", "controller.quorum.bootstrap.servers="+bootstrap[i-3])...) // one controller each
		wg.Go(func() {
			if err := procs[i].WaitReady(60 * time.Second); err != nil {
				t.Errorf("broker %d: %v", i+1, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, p := range procs[3:] {
		seeds = append(seeds, p.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("split"), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if res, err := adm.CreateTopic(ctx, 2, 2, nil, "split"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// kzctl cluster quorum: three voters, the two brokers observers.
	var q struct {
		LeaderID  int32 `json:"leader_id"`
		Voters    []struct{ ID int32 }
		Observers []struct {
			ID  int32
			Lag int64
		}
	}
	var qerr error
	if !await.PollCtx(ctx, func() bool {
		var out bytes.Buffer
		err := tools.ClusterQuorum(ctx, &tools.Env{Brokers: seeds, Out: &out, Format: tools.JSON})
		qerr = err
		if err == nil {
			if err := json.Unmarshal(out.Bytes(), &q); err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
		}
		var voterIDs, observerIDs []int32
		for _, v := range q.Voters {
			voterIDs = append(voterIDs, v.ID)
		}
		for _, o := range q.Observers {
			observerIDs = append(observerIDs, o.ID)
		}
		return err == nil && slices.Equal(voterIDs, []int32{1, 2, 3}) && slices.Equal(observerIDs, []int32{4, 5}) && q.LeaderID >= 1 && q.LeaderID <= 3
	}) {
		t.Fatalf("cluster quorum: %v %+v", qerr, q)
	}

	// A broker-only node killed stops heartbeating (its raft traffic): it
	// is fenced after broker.session.timeout.ms and its leaderships move.
	procs[4].Kill()
	var md kadm.Metadata
	if !await.PollCtx(ctx, func() bool {
		md, qerr = adm.Metadata(ctx, "split")
		return qerr == nil && slices.Equal(md.Brokers.NodeIDs(), []int32{4}) && !slices.ContainsFunc(md.Topics["split"].Partitions.Sorted(),
			func(p kadm.PartitionDetail) bool { return p.Leader != 4 })
	}) {
		t.Fatalf("broker 5 never fenced: %v %+v", qerr, md)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// The quorum leader is killed: the other two elect one, and metadata
	// changes go on.
	procs[q.LeaderID-1].Kill()
	var res kadm.CreateTopicResponse
	if !await.PollCtx(ctx, func() bool {
		res, qerr = adm.CreateTopic(ctx, 1, 1, nil, "after-kill")
		return qerr == nil && res.Err == nil
	}) {
		t.Fatalf("create after the leader was killed: %v %v", qerr, res.Err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "after-kill", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
