package share

import (
	"testing"
	"time"
)

// A consumer whose heartbeat took a partition away forgets it in its next
// ShareFetch and acknowledges, in that same request, what it read of it:
// forgetting must leave the member's records acquired for those
// acknowledgements (as Kafka's ShareSession.update does), not give them
// back first (which refused them with INVALID_RECORD_STATE and
// redelivered them to another member).
func TestForgetKeepsRecordsForTheirAcks(t *testing.T) {
	m := NewManager(Config{}, nil)
	tp := TP{Topic: [16]byte{1}, Partition: 0}
	k := Key{Group: "g", Topic: tp.Topic, Partition: tp.Partition}
	s, err := m.OpenSession("g", "m1", []TP{tp})
	if err != nil {
		t.Fatal(err)
	}
	e, p, err := m.Lock(k, 0, m.Limits(), func() int64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Acquire(time.Now().UnixMilli(), "m1", 0, 10, 100, true, nil, nil); len(got) != 1 || got[0].First != 0 || got[0].Last != 9 {
		t.Fatalf("acquired %+v", got)
	}
	e.Unlock()

	if _, err := m.UpdateSession("g", "m1", s.epoch, nil, []TP{tp}); err != nil {
		t.Fatal(err)
	}
	e, p, err = m.Lock(k, 0, m.Limits(), func() int64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	defer e.Unlock()
	if err := p.Acknowledge(time.Now().UnixMilli(), "m1", 0, 9, []int8{1}); err != nil {
		t.Fatalf("acknowledging records of a forgotten partition: %v", err)
	}
	if p.Start() != 10 {
		t.Fatalf("share-partition start %d after accepting 0-9, want 10", p.Start())
	}
}
