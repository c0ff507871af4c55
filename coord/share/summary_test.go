package share

import "testing"

// summaryOf counts the offsets from the start offset whose delivery is
// complete (KIP-1226's delivery-complete count): acknowledged and
// archived, not available, and nothing below the start offset.
func TestSummaryCountsCompleteDeliveries(t *testing.T) {
	snap := Snapshot{StateEpoch: 3, LeaderEpoch: 7, StartOffset: 10, Batches: []StateBatch{
		{First: 8, Last: 11, State: stateAcknowledged, Count: 1}, // 10-11 count
		{First: 12, Last: 14, State: stateAvailable, Count: 1},
		{First: 15, Last: 15, State: stateArchived, Count: 5},
		{First: 16, Last: 19, State: stateAcknowledged, Count: 2},
	}}
	got := summaryOf(&snap)
	want := Summary{StateEpoch: 3, LeaderEpoch: 7, StartOffset: 10, DeliveryComplete: 2 + 1 + 4}
	if got != want {
		t.Fatalf("summary %+v, want %+v", got, want)
	}
	if got := summaryOf(&Snapshot{StateEpoch: 4, StartOffset: -1}); got.StartOffset != -1 || got.StateEpoch != 4 || got.DeliveryComplete != 0 {
		t.Fatalf("summary of a state initialized without a start offset: %+v", got)
	}
}
