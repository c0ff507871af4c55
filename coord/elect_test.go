package coord

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/control"
	"kzero/coord/metadata"
)

// withBrokers opens a single voter (broker 1) and registers brokers 2..n,
// active, beside it. They are no voters, so nothing heartbeats for them: a
// session of an hour keeps the active controller from fencing them while a
// test runs.
func withBrokers(t *testing.T, n int32, set func(*Config)) *Controller {
	t.Helper()
	cfg := testConfig(t.TempDir())
	cfg.BrokerSessionTimeout = time.Hour
	if set != nil {
		set(&cfg)
	}
	c := open(t, cfg)
	var group []metadata.Record
	for id := int32(2); id <= n; id++ {
		group = append(group, &metadata.RegisterBroker{ID: id, Incarnation: metadata.NewUUID(), Epoch: -1,
			Listeners: []metadata.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092 + id}}})
	}
	mustApply(t, c, group)
	return c
}

// mustApply proposes records as one group, which must apply.
func mustApply(t *testing.T, c *Controller, group []metadata.Record) {
	t.Helper()
	res, err := c.propose(ctx(t), [][]metadata.Record{group})
	if err != nil || res[0] != nil {
		t.Fatalf("propose %v: %v %v", group, err, res)
	}
}

// setPartition changes a partition as a PartitionChange from its current
// epoch: what the leader's ISR changes and the controller's elections do.
func setPartition(t *testing.T, c *Controller, topic string, p int32, leader int32, isr ...int32) {
	t.Helper()
	tp := c.Image().Topic(topic)
	mustApply(t, c, []metadata.Record{&metadata.PartitionChange{TopicID: tp.ID, Partition: p,
		PartitionEpoch: tp.Partitions[p].PartitionEpoch + 1, Leader: leader, ISR: isr, LeaderRecovery: metadata.RecoveryNoChange}})
}

func partition(c *Controller, topic string, p int32) metadata.Partition {
	return c.Image().Topic(topic).Partitions[p]
}

func fence(t *testing.T, c *Controller, id int32) {
	t.Helper()
	b, _ := c.Image().Broker(id)
	mustApply(t, c, []metadata.Record{&metadata.BrokerChange{ID: id, Epoch: b.Epoch, Fence: metadata.Fence}})
}

// errs flattens results to "topic-partition: error" lines.
func errs(res []TopicResults) []string {
	var out []string
	for _, t := range res {
		for _, p := range t.Partitions {
			name := "NONE"
			if p.Err != nil {
				name = codeName(p.Err)
			}
			out = append(out, t.Topic+"-"+string(rune('0'+p.Partition))+": "+name)
		}
	}
	return out
}

func TestElectLeaders(t *testing.T) {
	c := withBrokers(t, 3, nil)
	mustCreate(t, c, TopicSpec{Name: "e", NumPartitions: -1, ReplicationFactor: -1,
		Assignments: map[int32][]int32{0: {2, 1, 3}, 1: {1, 2, 3}}},
		TopicSpec{Name: "solo", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {2}}})
	// e-0 led by its second replica, the preferred one in the ISR; e-1 led
	// by a broker whose preferred replica is not in the ISR.
	setPartition(t, c, "e", 0, 1, 1, 2, 3)
	setPartition(t, c, "e", 1, 2, 2)
	before := partition(c, "e", 0)

	res, err := c.ElectLeaders(ctx(t), control.Preferred, []control.TopicPartitions{
		{Topic: "e", Partitions: []int32{0, 1, 7}}, {Topic: "nope", Partitions: []int32{0}}, {Topic: "solo", Partitions: []int32{0}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"e-0: NONE", "e-1: PREFERRED_LEADER_NOT_AVAILABLE", "e-7: UNKNOWN_TOPIC_OR_PARTITION",
		"nope-0: UNKNOWN_TOPIC_OR_PARTITION", "solo-0: ELECTION_NOT_NEEDED"}
	if got := errs(res); !slices.Equal(got, want) || len(res) != 3 || res[1].Topic != "nope" {
		t.Fatalf("preferred: %v, want %v", got, want)
	}
	p := partition(c, "e", 0)
	if p.Leader != 2 || p.LeaderEpoch != before.LeaderEpoch+1 || p.PartitionEpoch != before.PartitionEpoch+1 {
		t.Fatalf("e-0 after the election: %+v (before %+v)", p, before)
	}

	// Every partition: only those that needed an election, every topic.
	mustCreate(t, c, TopicSpec{Name: "quiet", NumPartitions: 1, ReplicationFactor: 1})
	res, err = c.ElectLeaders(ctx(t), control.Preferred, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := errs(res); len(res) != 3 || res[0].Topic != "e" || res[1].Topic != "quiet" || res[2].Topic != "solo" ||
		!slices.Equal(got, []string{"e-1: PREFERRED_LEADER_NOT_AVAILABLE"}) {
		t.Fatalf("all partitions: %+v", res)
	}

	// Unclean: e-1's only ISR member is fenced, it has no leader; the first
	// active replica leads, from outside the ISR, and recovers. solo-0 has
	// no active replica at all.
	fence(t, c, 2)
	setPartition(t, c, "e", 1, metadata.NoLeader)
	setPartition(t, c, "solo", 0, metadata.NoLeader)
	res, err = c.ElectLeaders(ctx(t), control.Unclean, []control.TopicPartitions{{Topic: "e", Partitions: []int32{1, 0}}, {Topic: "solo", Partitions: []int32{0}}})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"e-1: NONE", "e-0: ELECTION_NOT_NEEDED", "solo-0: ELIGIBLE_LEADERS_NOT_AVAILABLE"}
	if got := errs(res); !slices.Equal(got, want) {
		t.Fatalf("unclean: %v, want %v", got, want)
	}
	if p := partition(c, "e", 1); p.Leader != 1 || !slices.Equal(p.ISR, []int32{1}) || p.LeaderRecovery != metadata.Recovering {
		t.Fatalf("e-1 after the unclean election: %+v", p)
	}

	if _, err := c.ElectLeaders(ctx(t), 7, nil); err != kerr.InvalidRequest {
		t.Fatalf("election type 7: %v", err)
	}
}

// A decision made on an image that moved on before its entry applied is
// refused (INVALID_UPDATE_VERSION) and made again on the newer image.
func TestSettleDecidesAgain(t *testing.T) {
	c := withBrokers(t, 2, nil)
	mustCreate(t, c, TopicSpec{Name: "s", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {2, 1}}})
	setPartition(t, c, "s", 0, 1, 1, 2)
	ctl := control.New(c.controlConfig())
	tps := []control.TopicPartitions{{Topic: "s", Partitions: []int32{0}}}
	groups, results, _ := ctl.ElectLeaders(c.Image(), control.Preferred, tps)
	setPartition(t, c, "s", 0, 1, 1, 2) // the partition epoch moves on
	decided := 0
	c.settle(ctx(t), groups, results, func(img *metadata.Image, idx []int) ([][]metadata.Record, []control.PartitionResult) {
		decided++
		g, r, _ := ctl.ElectLeaders(img, control.Preferred, tps)
		return g, r
	})
	if decided != 1 || results[0].Err != nil || partition(c, "s", 0).Leader != 2 {
		t.Fatalf("decided again %d times, result %+v, partition %+v", decided, results[0], partition(c, "s", 0))
	}
}
