package coord

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestUnregisterBroker(t *testing.T) {
	c := withBrokers(t, 3, nil)
	mustCreate(t, c, TopicSpec{Name: "u", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {3, 1}}})
	setPartition(t, c, "u", 0, 3, 1, 3)

	if r := c.UnregisterBroker(ctx(t), 3); r.Err != nil {
		t.Fatalf("unregister 3: %v %s", r.Err, r.Message)
	}
	if _, ok := c.Image().Broker(3); ok {
		t.Fatal("broker 3 still registered")
	}
	// It left the ISR and its leadership first.
	if p := partition(c, "u", 0); p.Leader != 1 || !slices.Equal(p.ISR, []int32{1}) {
		t.Fatalf("u-0 after broker 3 left: %+v", p)
	}
	for _, id := range []int32{3, 42} {
		r := c.UnregisterBroker(ctx(t), id)
		if r.Err != kerr.BrokerIDNotRegistered || r.Message == "" {
			t.Fatalf("unregister %d: %v %q", id, r.Err, r.Message)
		}
	}
}
