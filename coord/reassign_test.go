package coord

import (
	"slices"
	"testing"

	"kzero/coord/control"
)

func ongoing(t *testing.T, c *Controller) []control.Ongoing {
	return c.ListPartitionReassignments(ctx(t), nil)
}

// A reassignment goes through its states: started (the new replica
// adding, the leaving one removing, both in the replicas), visible to
// ListPartitionReassignments, and completed by the ISR change that puts the
// new replica in the ISR (the leader's AlterPartition, once replication
// copied the data). Another is cancelled back to its replicas.
func TestReassignment(t *testing.T) {
	c := withBrokers(t, 3, nil)
	mustCreate(t, c, TopicSpec{Name: "r", NumPartitions: -1, ReplicationFactor: -1,
		Assignments: map[int32][]int32{0: {1, 2}, 1: {1, 2}}})
	setPartition(t, c, "r", 0, 1, 1, 2)
	setPartition(t, c, "r", 1, 1, 1, 2)

	res := c.AlterPartitionReassignments(ctx(t), []ReassignTopic{
		{Topic: "r", Partitions: []ReassignPartition{{Partition: 0, Replicas: []int32{2, 3}}, {Partition: 1, Replicas: []int32{3, 1}}}},
		{Topic: "nope", Partitions: []ReassignPartition{{Partition: 0, Replicas: []int32{1}}}},
		{Topic: "r", Partitions: []ReassignPartition{{Partition: 9, Replicas: []int32{1}}}},
	}, false)
	want := []string{"r-0: NONE", "r-1: NONE", "nope-0: UNKNOWN_TOPIC_OR_PARTITION", "r-9: UNKNOWN_TOPIC_OR_PARTITION"}
	if got := errs(res); !slices.Equal(got, want) || len(res) != 3 {
		t.Fatalf("alter: %v, want %v", got, want)
	}
	p := partition(c, "r", 0)
	if !slices.Equal(p.Replicas, []int32{2, 3, 1}) || !slices.Equal(p.AddingReplicas, []int32{3}) || !slices.Equal(p.RemovingReplicas, []int32{1}) {
		t.Fatalf("r-0 reassigning: %+v", p)
	}
	list := ongoing(t, c)
	if len(list) != 2 || list[0].Partition != 0 || !slices.Equal(list[0].AddingReplicas, []int32{3}) ||
		!slices.Equal(list[1].RemovingReplicas, []int32{2}) {
		t.Fatalf("ongoing: %+v", list)
	}
	if l := c.ListPartitionReassignments(ctx(t), []control.TopicPartitions{{Topic: "r", Partitions: []int32{1, 5}}, {Topic: "nope", Partitions: []int32{0}}}); len(l) != 1 || l[0].Partition != 1 {
		t.Fatalf("ongoing r-1: %+v", l)
	}

	// 3 caught up: the leader (1) adds it to the ISR, which completes the
	// reassignment: 1 leaves the replicas and its leadership.
	img := c.Image()
	b1, _ := img.Broker(1)
	b3, _ := img.Broker(3)
	tp := img.Topic("r")
	groups, reply := control.New(c.controlConfig()).AlterPartition(img, control.AlterPartition{Broker: 1, BrokerEpoch: b1.Epoch,
		Topics: []control.AlterPartitionTopic{{TopicID: tp.ID, Partitions: []control.ISRChange{{Partition: 0, LeaderEpoch: p.LeaderEpoch,
			PartitionEpoch: p.PartitionEpoch, NewISR: []control.ISRMember{{Broker: 1, Epoch: b1.Epoch}, {Broker: 2, Epoch: -1}, {Broker: 3, Epoch: b3.Epoch}}}}}}})
	if reply.Err != nil || len(groups) != 1 {
		t.Fatalf("alter partition: %v, %d groups", reply.Err, len(groups))
	}
	mustApply(t, c, groups[0])
	if p := partition(c, "r", 0); !slices.Equal(p.Replicas, []int32{2, 3}) || p.Reassigning() || p.Leader != 2 || !slices.Equal(p.ISR, []int32{2, 3}) {
		t.Fatalf("r-0 after the reassignment: %+v", p)
	}

	// r-1 is cancelled: back to [1,2], 3 gone from the assignment.
	res = c.AlterPartitionReassignments(ctx(t), []ReassignTopic{{Topic: "r", Partitions: []ReassignPartition{{Partition: 1}}}}, false)
	if got := errs(res); !slices.Equal(got, []string{"r-1: NONE"}) {
		t.Fatalf("cancel: %v", got)
	}
	if p := partition(c, "r", 1); !slices.Equal(p.Replicas, []int32{1, 2}) || p.Reassigning() || p.Leader != 1 {
		t.Fatalf("r-1 after the cancellation: %+v", p)
	}
	if l := ongoing(t, c); len(l) != 0 {
		t.Fatalf("still ongoing: %+v", l)
	}

	// Nothing to cancel; bad targets; a replication factor kept on request.
	res = c.AlterPartitionReassignments(ctx(t), []ReassignTopic{{Topic: "r", Partitions: []ReassignPartition{
		{Partition: 1}, {Partition: 0, Replicas: []int32{2, 9}}, {Partition: 0, Replicas: []int32{}}, {Partition: 0, Replicas: []int32{1, 2, 3}},
	}}}, true)
	want = []string{"r-1: NO_REASSIGNMENT_IN_PROGRESS", "r-0: INVALID_REPLICA_ASSIGNMENT", "r-0: INVALID_REPLICA_ASSIGNMENT", "r-0: INVALID_REPLICATION_FACTOR"}
	if got := errs(res); !slices.Equal(got, want) {
		t.Fatalf("refused: %v, want %v", got, want)
	}
	if m := res[0].Partitions[3].Message; m != "The replication factor is changed from 2 to 3" {
		t.Fatalf("message %q", m)
	}
	// The same target without the guard grows the replication factor.
	res = c.AlterPartitionReassignments(ctx(t), []ReassignTopic{{Topic: "r", Partitions: []ReassignPartition{{Partition: 0, Replicas: []int32{1, 2, 3}}}}}, false)
	if got := errs(res); !slices.Equal(got, []string{"r-0: NONE"}) {
		t.Fatalf("grow: %v", got)
	}
	if p := partition(c, "r", 0); !slices.Equal(p.AddingReplicas, []int32{1}) || len(p.RemovingReplicas) != 0 {
		t.Fatalf("r-0 growing: %+v", p)
	}
}
