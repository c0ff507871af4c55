package control

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"kzero/coord/metadata"
)

// TestRandomEvents drives a Controller with random sequences of broker
// heartbeats (some wanting fencing or shutdown), silences that expire
// sessions, restarts with new incarnations, ISR changes, elections,
// reassignments, unclean-election config flips and ticks, applies every
// group the way the raft loop would, and checks after each step:
//
//   - a leader is in its ISR and is an active broker, the ISR is never
//     empty, ISR members are replicas (checkInvariants);
//   - never two leaders: a partition's leader epoch names one leader only,
//     and a leader change always bumps the leader epoch;
//   - epochs only grow: partition epochs, leader epochs, broker epochs;
//     every ISR change bumps the partition epoch, a replica leaving the
//     assignment the leader epoch;
//   - every group the controller decides applies (each decision is made on
//     the newest image, so none may be refused by Builder.Check).
func TestRandomEvents(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 20
	}
	for seed := range uint64(seeds) {
		if err := randomRun(seed, 300); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

type tpKey struct {
	topic string
	p     int32
}

func randomRun(seed uint64, steps int) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	cfg := Config{SessionTimeout: 9 * time.Second, AutoLeaderRebalance: rng.IntN(2) == 0, ImbalanceCheckInterval: 5 * time.Second}
	if rng.IntN(2) == 0 {
		cfg.ImbalancePercentage = 10
	}
	if rng.IntN(2) == 0 {
		minISR := 1 + rng.IntN(3)
		cfg.ELR, cfg.MinInsync = true, func(*metadata.Image, *metadata.Topic) int { return minISR }
	}
	cl := newCluster(cfg)
	now := epoch0
	const brokers = 5
	incarnations := map[int32]int{}
	silent := map[int32]bool{} // brokers that do not heartbeat
	leaderOf := map[tpKey]map[int32]int32{}
	lastPart := map[tpKey]metadata.Partition{}
	lastEpoch := map[int32]int64{}

	register := func(id int32) error {
		incarnations[id]++
		groups, reply := cl.c.Register(cl.img, now, Registration{Broker: id,
			Incarnation: cl.incarnation(fmt.Sprintf("%d.%d", id, incarnations[id])), Rack: fmt.Sprintf("r%d", id%3),
			UncleanShutdown: rng.IntN(2) == 0})
		if reply.Err != nil {
			incarnations[id]-- // refused: the old session is alive
			return nil
		}
		return mustApply(cl, groups)
	}
	for id := int32(1); id <= brokers; id++ {
		if err := register(id); err != nil {
			return err
		}
	}
	heartbeat := func(id int32, wantFence, wantShutdown bool) error {
		b, ok := cl.img.Broker(id)
		if !ok {
			return nil
		}
		groups, reply := cl.c.Heartbeat(cl.img, now, Heartbeat{Broker: id, Epoch: b.Epoch, Offset: cl.img.Offset(),
			WantFence: wantFence, WantShutdown: wantShutdown})
		if reply.Err != nil {
			return fmt.Errorf("heartbeat of broker %d epoch %d: %v", id, b.Epoch, reply.Err)
		}
		return mustApply(cl, groups)
	}
	for id := int32(1); id <= brokers; id++ {
		if err := heartbeat(id, false, false); err != nil {
			return err
		}
	}
	for i := range 3 {
		if _, err := cl.createTopic(fmt.Sprintf("t%d", i), 1+rng.IntN(4), 1+rng.IntN(3), nil, rng); err != nil {
			return fmt.Errorf("create: %v", err)
		}
	}

	for step := range steps {
		now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		var err error
		switch k := rng.IntN(20); {
		case k < 6: // the brokers that are not silent heartbeat
			for id := int32(1); id <= brokers && err == nil; id++ {
				if !silent[id] {
					err = heartbeat(id, false, false)
				}
			}
		case k < 7:
			id := 1 + int32(rng.IntN(brokers))
			silent[id] = !silent[id]
		case k < 8:
			err = heartbeat(1+int32(rng.IntN(brokers)), rng.IntN(3) == 0, rng.IntN(2) == 0)
		case k < 9: // a restart: a new incarnation
			err = register(1 + int32(rng.IntN(brokers)))
		case k < 13: // a leader changes its ISR
			err = randomISRChange(cl, rng)
		case k < 14:
			typ := Preferred
			if rng.IntN(2) == 0 {
				typ = Unclean
			}
			groups, _, e := cl.c.ElectLeaders(cl.img, typ, nil)
			if e != nil {
				return fmt.Errorf("elect: %v", e)
			}
			err = mustApply(cl, groups)
		case k < 15:
			err = randomReassignment(cl, rng)
		case k < 16:
			v := "false"
			if rng.IntN(2) == 0 {
				v = "true"
			}
			topic := fmt.Sprintf("t%d", rng.IntN(3))
			err = mustApply(cl, [][]metadata.Record{{&metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, Name: topic,
				Key: UncleanLeaderElectionConfig, Value: v}}})
		case k < 17:
			if rng.IntN(10) == 0 {
				groups, _ := cl.c.Unregister(cl.img, now, 1+int32(rng.IntN(brokers)))
				err = mustApply(cl, groups)
			}
		default:
			err = mustApply(cl, cl.c.Tick(cl.img, now))
		}
		if err != nil {
			return fmt.Errorf("step %d: %v", step, err)
		}
		if err := checkInvariants(cl.img, cl.c.cfg.ELR); err != nil {
			return fmt.Errorf("step %d: %v\n%s", step, err, cl.state())
		}
		for _, b := range cl.img.Brokers() {
			if b.Epoch < lastEpoch[b.ID] {
				return fmt.Errorf("step %d: broker %d epoch went from %d to %d", step, b.ID, lastEpoch[b.ID], b.Epoch)
			}
			lastEpoch[b.ID] = b.Epoch
		}
		for _, tp := range cl.img.Topics() {
			for _, p := range tp.Partitions {
				k := tpKey{tp.Name, p.Partition}
				prev, seen := lastPart[k]
				if seen && (p.PartitionEpoch < prev.PartitionEpoch || p.LeaderEpoch < prev.LeaderEpoch) {
					return fmt.Errorf("step %d: %s-%d epochs went back: %+v -> %+v", step, tp.Name, p.Partition, prev, p)
				}
				if seen && p.Leader != prev.Leader && p.LeaderEpoch == prev.LeaderEpoch {
					return fmt.Errorf("step %d: %s-%d leader changed without a new leader epoch", step, tp.Name, p.Partition)
				}
				if seen && !containsAll(p.Replicas, prev.Replicas) && p.LeaderEpoch == prev.LeaderEpoch {
					return fmt.Errorf("step %d: %s-%d replicas %v left without a new leader epoch", step, tp.Name, p.Partition, without(prev.Replicas, p.Replicas))
				}
				if seen && !slices.Equal(p.ISR, prev.ISR) && p.PartitionEpoch == prev.PartitionEpoch {
					return fmt.Errorf("step %d: %s-%d ISR changed without a new partition epoch", step, tp.Name, p.Partition)
				}
				lastPart[k] = p
				if p.Leader == metadata.NoLeader {
					continue
				}
				if leaderOf[k] == nil {
					leaderOf[k] = map[int32]int32{}
				}
				if l, ok := leaderOf[k][p.LeaderEpoch]; ok && l != p.Leader {
					return fmt.Errorf("step %d: %s-%d leader epoch %d has two leaders, %d and %d", step, tp.Name, p.Partition, p.LeaderEpoch, l, p.Leader)
				}
				leaderOf[k][p.LeaderEpoch] = p.Leader
			}
		}
	}
	return nil
}

// mustApply applies groups decided on the current image: every one must
// apply.
func mustApply(cl *cluster, groups [][]metadata.Record) error {
	for i, rej := range cl.apply(groups) {
		if rej != nil {
			return fmt.Errorf("group %d %s refused: %s: %s", i, cl.formatGroups(groups[i:i+1]), errName(rej), rej)
		}
	}
	return nil
}

// randomISRChange has a partition's leader shrink or grow its ISR to a
// random set of replicas holding itself, with the member epochs it knows.
func randomISRChange(cl *cluster, rng *rand.Rand) error {
	ts := cl.img.Topics()
	t := ts[rng.IntN(len(ts))]
	p := t.Partitions[rng.IntN(len(t.Partitions))]
	if p.Leader == metadata.NoLeader {
		return nil
	}
	lb, _ := cl.img.Broker(p.Leader)
	isr := []ISRMember{{Broker: p.Leader, Epoch: lb.Epoch}}
	for _, r := range p.Replicas {
		if r != p.Leader && rng.IntN(2) == 0 {
			epoch := int64(-1)
			if b, ok := cl.img.Broker(r); ok {
				epoch = b.Epoch
			}
			isr = append(isr, ISRMember{Broker: r, Epoch: epoch})
		}
	}
	groups, reply := cl.c.AlterPartition(cl.img, AlterPartition{Broker: p.Leader, BrokerEpoch: lb.Epoch,
		Topics: []AlterPartitionTopic{{TopicID: t.ID, Partitions: []ISRChange{{Partition: p.Partition, LeaderEpoch: p.LeaderEpoch,
			PartitionEpoch: p.PartitionEpoch, NewISR: isr, LeaderRecovery: metadata.Recovered}}}}})
	if reply.Err != nil {
		return fmt.Errorf("alter partition: %v", reply.Err)
	}
	return mustApply(cl, groups)
}

func randomReassignment(cl *cluster, rng *rand.Rand) error {
	ts := cl.img.Topics()
	t := ts[rng.IntN(len(ts))]
	p := int32(rng.IntN(len(t.Partitions)))
	r := Reassignment{Topic: t.Name, Partition: p}
	if rng.IntN(4) > 0 {
		bs := cl.img.Brokers()
		perm := rng.Perm(len(bs))
		for _, i := range perm[:1+rng.IntN(min(3, len(bs)))] {
			r.Replicas = append(r.Replicas, bs[i].ID)
		}
	}
	groups, _ := cl.c.AlterReassignments(cl.img, []Reassignment{r})
	return mustApply(cl, groups)
}
