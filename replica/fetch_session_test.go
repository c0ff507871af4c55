package replica

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func sessionRequest(s *fetchSession, items []fetchItem) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(18)
	s.build(req, items, 1<<20)
	return req
}

func named(req *kmsg.FetchRequest) (sent, forgotten []string) {
	for _, t := range req.Topics {
		for range t.Partitions {
			sent = append(sent, t.Topic)
		}
	}
	for _, t := range req.ForgottenTopics {
		for range t.Partitions {
			forgotten = append(forgotten, t.Topic)
		}
	}
	return sent, forgotten
}

// The fetcher's session: the first request names every partition and
// opens the session; later ones name only partitions whose position moved
// and forget those no longer fetched; a reset sends everything again.
func TestFollowerFetchSession(t *testing.T) {
	m := newManager(t)
	a, b := lead(t, m, "a", 1), lead(t, m, "b", 1)
	a.TopicID, b.TopicID = [16]byte{1}, [16]byte{2}
	items := []fetchItem{{p: a, s: fetchState{epoch: 3}}, {p: b, s: fetchState{epoch: 3}}}
	var s fetchSession

	req := sessionRequest(&s, items)
	if sent, _ := named(req); req.SessionID != 0 || req.SessionEpoch != 0 || len(sent) != 2 {
		t.Fatalf("opening request: id %d epoch %d sent %v", req.SessionID, req.SessionEpoch, sent)
	}
	if p := req.Topics[0].Partitions[0]; p.HighWatermark != a.HighWatermark() || p.FetchOffset != a.Log().LogEndOffset() || p.CurrentLeaderEpoch != 3 {
		t.Fatalf("partition fields %+v", p)
	}
	s.answered(77)

	req = sessionRequest(&s, items)
	if sent, gone := named(req); req.SessionID != 77 || req.SessionEpoch != 1 || len(sent) != 0 || len(gone) != 0 {
		t.Fatalf("nothing moved: id %d epoch %d sent %v forgotten %v", req.SessionID, req.SessionEpoch, sent, gone)
	}
	s.answered(77)

	if _, err := b.Append(batch(t, 2), 1); err != nil {
		t.Fatal(err)
	}
	req = sessionRequest(&s, items[1:]) // a stops being fetched; b grew
	if sent, gone := named(req); req.SessionEpoch != 2 || len(sent) != 1 || sent[0] != "b" || len(gone) != 1 || gone[0] != "a" {
		t.Fatalf("a forgotten: epoch %d sent %v forgotten %v", req.SessionEpoch, sent, gone)
	}
	s.answered(77)
	req = sessionRequest(&s, items)
	if sent, _ := named(req); len(sent) != 1 || sent[0] != "a" {
		t.Fatalf("a came back: sent %v", sent)
	}
	s.answered(77)

	s.reset()
	req = sessionRequest(&s, items)
	if sent, _ := named(req); req.SessionID != 77 || req.SessionEpoch != 0 || len(sent) != 2 {
		t.Fatalf("after reset: id %d epoch %d sent %v", req.SessionID, req.SessionEpoch, sent)
	}
}
