package coord

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"kzero/kzerotest/await"
)

// until polls cond (state that changes on other goroutines) until it
// holds, failing the test after ctx's bound.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	await.True(t, 30*time.Second, cond, what)
}

// A broker-only node is a learner: a controller-only voter adds it when it
// connects, it catches up by snapshot and registers as a broker (the
// voter does not), restarts from its own log and catches up again past
// the voter's compaction, and UnregisterBroker removes it from the quorum.
func TestLearnerJoinsAndCatchesUp(t *testing.T) {
	n := &memNet{nodes: map[int32]*Controller{}, hold: -1, readIdx: make(chan struct{}, 1)}
	vcfg := testConfig(t.TempDir())
	vcfg.Role, vcfg.TickInterval = ControllerOnly, 20*time.Millisecond
	vcfg.SnapshotEvery, vcfg.SnapshotKeep = 4, -1 // a learner that was away gets a snapshot
	vcfg.Transport = memTransport{n, 1}
	voter := open(t, vcfg)
	n.mu.Lock()
	n.nodes[1] = voter
	n.mu.Unlock()
	if _, ok := voter.Image().Broker(1); ok || voter.Image().ClusterID() == "" {
		t.Fatalf("controller-only voter: broker registered %v, cluster %q", ok, voter.Image().ClusterID())
	}

	ldir := t.TempDir()
	startLearner := func() *Controller {
		t.Helper()
		cfg := testConfig(ldir)
		cfg.NodeID, cfg.Role, cfg.Bootstrap, cfg.TickInterval = 2, BrokerOnly, false, 20*time.Millisecond
		cfg.Transport = memTransport{n, 2}
		l, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		n.mu.Lock()
		n.nodes[2] = l
		n.mu.Unlock()
		voter.AddLearner(2) // what raftnet's OnLearner does when it connects
		if err := l.Register(); err != nil {
			t.Fatal(err)
		}
		return l
	}
	learner := startLearner()
	if got := voter.Learners(); !slices.Equal(got, []int32{2}) {
		t.Fatalf("learners %v", got)
	}
	if learner.SnapshotsReceived() == 0 || learner.Image().ClusterID() != voter.Image().ClusterID() {
		t.Fatalf("the new learner: %d snapshots, cluster %q", learner.SnapshotsReceived(), learner.Image().ClusterID())
	}
	if b, ok := voter.Image().Broker(2); !ok || b.Fenced {
		t.Fatalf("learner's broker registration: %+v", b)
	}
	// The voter's view: one voter, the learner an observer that caught up.
	until(t, "the learner shows as a caught-up observer", func() bool {
		q := voter.Quorum()
		return len(q.Voters) == 1 && len(q.Observers) == 1 && q.Observers[0].ID == 2 &&
			q.Observers[0].LogEndOffset == q.HighWatermark
	})
	// Its own proposals go through the leader.
	mustCreate(t, learner, TopicSpec{Name: "from-learner", NumPartitions: 1, ReplicationFactor: 1})

	// Away while the voter moves on and compacts; back, it replays its
	// own log and catches up by snapshot.
	learner.Close()
	n.mu.Lock()
	delete(n.nodes, 2)
	n.mu.Unlock()
	for i := range 10 {
		mustCreate(t, voter, TopicSpec{Name: fmt.Sprintf("away-%d", i), NumPartitions: -1, ReplicationFactor: -1,
			Assignments: map[int32][]int32{0: {2}}})
	}
	learner = startLearner()
	until(t, "the restarted learner catches up", func() bool { return learner.Image().Topic("away-9") != nil })
	if learner.SnapshotsReceived() == 0 {
		t.Fatal("the restarted learner caught up without a snapshot")
	}

	if res := voter.UnregisterBroker(ctx(t), 2); res.Err != nil {
		t.Fatalf("unregister: %v", res.Err)
	}
	until(t, "the unregistered learner leaves the quorum", func() bool { return len(voter.Learners()) == 0 })
}
