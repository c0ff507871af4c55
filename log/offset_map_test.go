package log

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestOffsetMap(t *testing.T) {
	m, err := NewOffsetMap(100*mapSlotSize, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if m.Capacity() != 90 || m.Len() != 0 || m.LatestOffset() != -1 {
		t.Fatalf("new map: capacity %d len %d latest %d", m.Capacity(), m.Len(), m.LatestOffset())
	}
	if got := m.Get([]byte("a")); got != -1 {
		t.Fatalf("get of a missing key: %d", got)
	}
	m.Put([]byte("a"), 5)
	m.Put([]byte("b"), 0)
	m.Put([]byte("a"), 9)
	m.Put([]byte(""), 3) // an empty key is a key
	if m.Get([]byte("a")) != 9 || m.Get([]byte("b")) != 0 || m.Get([]byte("")) != 3 || m.Len() != 3 {
		t.Fatalf("a %d b %d empty %d len %d", m.Get([]byte("a")), m.Get([]byte("b")), m.Get([]byte("")), m.Len())
	}
	if m.LatestOffset() != 9 {
		t.Fatalf("latest %d", m.LatestOffset())
	}
	// Fill to capacity: new keys are refused, known ones still update.
	for i := 0; m.Free() > 0; i++ {
		if !m.Put([]byte(fmt.Sprint("k", i)), int64(100+i)) {
			t.Fatalf("put %d refused with %d free", i, m.Free())
		}
	}
	if m.Put([]byte("new"), 1000) {
		t.Fatal("put into a full map")
	}
	if m.Get([]byte("new")) != -1 || !m.Put([]byte("a"), 1001) || m.Get([]byte("a")) != 1001 {
		t.Fatal("full map: update of a known key")
	}
	m.Clear()
	if m.Len() != 0 || m.Get([]byte("a")) != -1 || m.LatestOffset() != -1 || m.Free() != 90 {
		t.Fatalf("after clear: len %d a %d", m.Len(), m.Get([]byte("a")))
	}
	if _, err := NewOffsetMap(mapSlotSize, 0.9); err == nil {
		t.Fatal("a map without room")
	}
	if _, err := NewOffsetMap(1<<20, 1.5); err == nil {
		t.Fatal("load factor above 1")
	}
}

// The map agrees with a Go map on random keys with many collisions of
// their home slots.
func TestOffsetMapAgainstMap(t *testing.T) {
	m, _ := NewOffsetMap(4096*mapSlotSize, 1)
	want := map[string]int64{}
	rng := rand.New(rand.NewPCG(1, 2))
	for off := int64(0); off < 20000; off++ {
		k := fmt.Sprint(rng.IntN(4000))
		if !m.Put([]byte(k), off) {
			t.Fatalf("put %d refused", off)
		}
		want[k] = off
	}
	if m.Len() != len(want) {
		t.Fatalf("len %d, want %d", m.Len(), len(want))
	}
	for k, off := range want {
		if got := m.Get([]byte(k)); got != off {
			t.Fatalf("key %s: %d, want %d", k, got, off)
		}
	}
	for i := 4000; i < 5000; i++ {
		if got := m.Get([]byte(fmt.Sprint(i))); got != -1 {
			t.Fatalf("absent key %d found at %d", i, got)
		}
	}
}

func TestOffsetMapAllocs(t *testing.T) {
	m, _ := NewOffsetMap(1<<16, 0.9)
	key := []byte("some-key-of-moderate-length")
	if n := testing.AllocsPerRun(1000, func() {
		m.Put(key, 42)
		if m.Get(key) != 42 {
			t.Fatal("get")
		}
	}); n != 0 {
		t.Fatalf("%v allocations per put and get", n)
	}
}

func BenchmarkOffsetMap(b *testing.B) {
	m, _ := NewOffsetMap(128<<20, 0.9)
	keys := make([][]byte, 1<<20)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key-%012d", i))
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		k := keys[i&(len(keys)-1)]
		m.Put(k, int64(i))
		m.Get(k)
	}
}
