package log

import (
	"fmt"
	"hash/maphash"
	"math/bits"
)

// OffsetMap maps record keys to the offset of their latest record, for one
// cleaning pass: the cleaner fills it from a log's dirty part, then keeps a
// record only when no later record of its key is in the map. Like Kafka's
// SkimpyOffsetMap it stores no keys, only a 128-bit hash of each, in a fixed
// memory budget (log.cleaner.dedupe.buffer.size) allocated once: a slot is
// 24 bytes, the table uses open addressing with linear probing, and it
// accepts entries up to a load factor, past which the cleaner stops mapping
// and cleans only up to the offset it reached.
//
// Two keys share an entry only if both 64-bit halves of their hashes
// collide, whose chance over millions of keys is below 2^-80: the same bet
// Kafka makes with MD5.
//
// An OffsetMap belongs to one goroutine. Put and Get allocate nothing.
type OffsetMap struct {
	slots      []mapSlot
	seedA      maphash.Seed
	seedB      maphash.Seed
	entries    int
	maxEntries int
	latest     int64 // the largest offset recorded, -1 when none
}

// mapSlot is one table entry; off holds offset+1 so a zeroed slot is empty.
type mapSlot struct {
	hashA, hashB uint64
	off          int64
}

const mapSlotSize = 24

// NewOffsetMap returns a map using at most memory bytes, filled up to
// loadFactor (Kafka's log.cleaner.io.buffer.load.factor, 0.9) of its slots.
func NewOffsetMap(memory int64, loadFactor float64) (*OffsetMap, error) {
	n := memory / mapSlotSize
	if n < 2 {
		return nil, fmt.Errorf("offset map of %d bytes holds no entries", memory)
	}
	if loadFactor <= 0 || loadFactor > 1 {
		return nil, fmt.Errorf("offset map load factor %v outside (0, 1]", loadFactor)
	}
	m := &OffsetMap{
		slots: make([]mapSlot, n),
		seedA: maphash.MakeSeed(),
		seedB: maphash.MakeSeed(),
	}
	// Keep one slot free at least, so a probe always ends.
	m.maxEntries = max(1, min(int(float64(n)*loadFactor), int(n)-1))
	m.latest = -1
	return m, nil
}

// Len is the number of keys in the map.
func (m *OffsetMap) Len() int { return m.entries }

// Capacity is the number of keys the map accepts.
func (m *OffsetMap) Capacity() int { return m.maxEntries }

// Free is the number of further keys the map accepts.
func (m *OffsetMap) Free() int { return m.maxEntries - m.entries }

// LatestOffset is the largest offset recorded by Put or UpdateLatest, -1
// when none.
func (m *OffsetMap) LatestOffset() int64 { return m.latest }

// UpdateLatest records that the map covers the log up to offset.
func (m *OffsetMap) UpdateLatest(offset int64) { m.latest = max(m.latest, offset) }

// Clear empties the map, keeping its memory.
func (m *OffsetMap) Clear() {
	if m.entries > 0 {
		clear(m.slots)
	}
	m.entries = 0
	m.latest = -1
}

// Put records offset as the latest offset of key. It reports false, and
// changes nothing, when key is new and the map is full.
func (m *OffsetMap) Put(key []byte, offset int64) bool {
	a, b := m.hash(key)
	i := m.home(a)
	for {
		s := &m.slots[i]
		if s.off == 0 {
			if m.entries >= m.maxEntries {
				return false
			}
			*s = mapSlot{hashA: a, hashB: b, off: offset + 1}
			m.entries++
			break
		}
		if s.hashA == a && s.hashB == b {
			s.off = offset + 1
			break
		}
		if i++; i == len(m.slots) {
			i = 0
		}
	}
	m.latest = max(m.latest, offset)
	return true
}

// Get returns the latest offset recorded for key, or -1.
func (m *OffsetMap) Get(key []byte) int64 {
	a, b := m.hash(key)
	i := m.home(a)
	for {
		s := &m.slots[i]
		if s.off == 0 {
			return -1
		}
		if s.hashA == a && s.hashB == b {
			return s.off - 1
		}
		if i++; i == len(m.slots) {
			i = 0
		}
	}
}

func (m *OffsetMap) hash(key []byte) (uint64, uint64) {
	return maphash.Bytes(m.seedA, key), maphash.Bytes(m.seedB, key)
}

// home maps a hash onto the table without a division.
func (m *OffsetMap) home(h uint64) int {
	hi, _ := bits.Mul64(h, uint64(len(m.slots)))
	return int(hi)
}
