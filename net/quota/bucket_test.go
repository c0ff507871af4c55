package quota

import (
	"testing"
	"time"

	"kzero/coord/metadata"
)

// TestBucket: a full bucket of quota*samples*window tokens; taking more
// puts it below zero and the debt is the time to refill to zero; it
// refills at the quota and never above the burst.
func TestBucket(t *testing.T) {
	cfg := Config{Samples: 11, Window: time.Second}
	b := NewBucket(2, cfg, 0) // 22 tokens
	steps := []struct {
		at   int64
		take float64
		debt time.Duration
	}{
		{0, 20, 0},
		{0, 6, 2 * time.Second}, // -4 at 2/s
		{sec, 0, time.Second},   // -2
		{2 * sec, 0, 0},         // 0
		{100 * sec, 22, 0},      // refilled to 22, not 196
		{100 * sec, 1, 500 * time.Millisecond},
	}
	for i, s := range steps {
		if got := b.Take(2, cfg, s.take, s.at); got != s.debt {
			t.Fatalf("step %d: debt %v, want %v", i, got, s.debt)
		}
	}
}

// TestMutations: a client within its burst is not exceeded; past it, it
// is, for the time the debt takes to repay; a client without a quota
// never is.
func TestMutations(t *testing.T) {
	m := NewMutations(Config{Samples: 2, Window: time.Second})
	m.Update(imageWith(t, metadata.QuotaEntity{User: metadata.DefaultName()}, "controller_mutation_rate", 5))
	c := Client{User: "u", ClientID: "c"}
	if d := m.Record(c, 10, 0); d != 0 {
		t.Fatalf("within the burst: %v", d)
	}
	if _, over := m.Exceeded(c, 0); over {
		t.Fatal("exceeded at zero tokens")
	}
	if d := m.Record(c, 5, 0); d != time.Second {
		t.Fatalf("past the burst: %v", d)
	}
	if d, over := m.Exceeded(c, sec/2); !over || d != 500*time.Millisecond {
		t.Fatalf("half a second later: %v %v", d, over)
	}
	if _, over := m.Exceeded(Client{User: "", ClientID: "x"}, 0); over {
		t.Fatal("a client without a quota exceeded")
	}
}
