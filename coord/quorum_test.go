package coord

import (
	"reflect"
	"testing"
	"time"
)

// FuzzDecodeQuorum: a relayed quorum view (bytes from another node)
// decodes or is refused, never panics, and what decodes encodes to a view
// that decodes the same.
func FuzzDecodeQuorum(f *testing.F) {
	now := time.UnixMilli(1_700_000_000_000).UTC()
	f.Add(encodeQuorum(&Quorum{Leader: 1, Epoch: 3, HighWatermark: 42, IsLeader: true,
		Voters:    []QuorumVoter{{ID: 1, Addr: "127.0.0.1:9093", LogEndOffset: 42, LastFetch: now, LastCaughtUp: now}},
		Observers: []QuorumVoter{{ID: 4, LogEndOffset: 40}}}))
	f.Add([]byte(`{"Leader":1,"Voters":[{"ID":-5}]}`))
	f.Add([]byte(`{"Observers":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := decodeQuorum(b)
		if err != nil {
			return
		}
		again, err := decodeQuorum(encodeQuorum(&q))
		if err != nil || !reflect.DeepEqual(q, again) {
			t.Fatalf("round trip: %+v, %+v, %v", q, again, err)
		}
	})
}
