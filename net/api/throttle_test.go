package api

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/net/wire"
)

// TestFetchResponseSize: the size a consumer's fetch counts against its
// quota is what Kafka counts, 4 bytes of correlation id and the body, for
// every version appendFetchResponse writes; an incremental response counts
// only the partitions it will carry.
func TestFetchResponseSize(t *testing.T) {
	l := testLog(t)
	for v := int16(4); v <= 18; v++ {
		for seed := range uint64(50) {
			for _, incremental := range []bool{false, true} {
				// Each use takes its own file ranges: the encoder hands
				// them to the response, which releases them.
				counted := randomFetchTopics(t, l, seed)
				want := fetchResponseSize(v, counted, incremental)
				releaseTopics(counted)
				sent := randomFetchTopics(t, l, seed)
				if incremental {
					sent = keepChanged(sent)
				}
				if got := encodedFetchSize(t, v, sent); got != want {
					t.Fatalf("v%d seed %d incremental=%v: counted %d, the response is %d", v, seed, incremental, want, got)
				}
			}
		}
	}
}

// randomFetchTopics makes the same topics for the same seed.
func randomFetchTopics(t *testing.T, l *log.Log, seed uint64) []fetchTopic {
	rng := rand.New(rand.NewPCG(seed, 2))
	var topics []fetchTopic
	for ti := rng.IntN(4); ti >= 0; ti-- {
		ft := fetchTopic{name: fmt.Sprintf("topic-%d", rng.IntN(1000)), id: [16]byte{1}}
		for pi := rng.IntN(4); pi >= 0; pi-- {
			fp := fetchPartition{partition: rng.Int32(), err: int16(rng.IntN(2)), hw: rng.Int64N(5), lso: 3, logStart: 1,
				committed: rng.IntN(2) == 0, session: &sessionPartition{sent: rng.IntN(2) == 0, hw: rng.Int64N(5), lso: 3, logStart: 1}}
			if fp.committed {
				for a := rng.IntN(3); a > 0; a-- {
					fp.aborted = append(fp.aborted, log.AbortedTxn{ProducerID: rng.Int64(), FirstOffset: rng.Int64()})
				}
			}
			if rng.IntN(2) == 0 {
				r, err := l.Read(rng.Int64N(l.LogEndOffset()), 1+rng.IntN(2000), l.LogEndOffset(), true)
				if err != nil {
					t.Fatal(err)
				}
				fp.records = r
			}
			ft.parts = append(ft.parts, fp)
		}
		topics = append(topics, ft)
	}
	return topics
}

func releaseTopics(topics []fetchTopic) {
	for i := range topics {
		for j := range topics[i].parts {
			topics[i].parts[j].records.Release()
		}
	}
}

// keepChanged is the topics with only the partitions changed reports;
// the others' file ranges are released.
func keepChanged(topics []fetchTopic) []fetchTopic {
	var out []fetchTopic
	for _, t := range topics {
		var parts []fetchPartition
		for _, p := range t.parts {
			if p.changed() {
				parts = append(parts, p)
			} else {
				p.records.Release()
			}
		}
		if len(parts) > 0 {
			out = append(out, fetchTopic{name: t.name, id: t.id, parts: parts})
		}
	}
	return out
}

// encodedFetchSize encodes topics at v and returns 4 plus the body's
// length: the frame less its size, and less the response header's tag
// byte when flexible (Kafka's FetchResponse.sizeOf leaves it out).
func encodedFetchSize(t *testing.T, v int16, topics []fetchTopic) int64 {
	t.Helper()
	h := wire.RequestHeader{APIKey: 1, APIVersion: v, CorrelationID: 7}
	if rh, ok := wire.RequestHeaderVersion(1, v); ok {
		h.Version = rh
	}
	resp := wire.NewResponse(&h)
	defer resp.Release()
	appendFetchResponse(resp, v, 0, 0, 0, topics)
	if err := resp.Seal(); err != nil {
		t.Fatal(err)
	}
	n := resp.Size()
	if h.ResponseFlexible() {
		n--
	}
	return n
}

// TestFullFetchOpensSessionWhenAnswered: a full fetch asking for a
// session (epoch 0) gets one with no id and out of the cache; only add,
// when the fetch is answered unthrottled, gives it an id and caches it
// (a throttled one answers session 0 and leaves nothing behind). A full
// fetch naming a session closes it at once, throttled or not, as Kafka's
// newContext does.
func TestFullFetchOpensSessionWhenAnswered(t *testing.T) {
	var c fetchSessions
	r := kmsg.NewPtrFetchRequest()
	r.Version, r.SessionEpoch = 12, 0
	r.Topics = []kmsg.FetchRequestTopic{{Topic: "t", Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0}}}}
	s, full, code := c.sessionFor(r)
	if s == nil || !full || code != 0 || s.id != 0 || len(s.parts) != 1 || c.len() != 0 {
		t.Fatalf("epoch 0: session %v full %v code %d, %d cached", s, full, code, c.len())
	}
	if !c.add(s) || s.id == 0 || c.len() != 1 || c.get(s.id) != s {
		t.Fatalf("add: id %d, %d cached", s.id, c.len())
	}
	r.SessionID = s.id
	if again, _, _ := c.sessionFor(r); again == s || again.id != 0 || c.len() != 0 {
		t.Fatalf("a full fetch naming session %d: %d cached", s.id, c.len())
	}
}
