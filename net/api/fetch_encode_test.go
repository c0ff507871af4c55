package api

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"kzero/log"
	"kzero/net/wire"
	"kzero/record"
)

// testLog is a log holding a few batches, to cut file ranges from.
func testLog(t testing.TB) *log.Log {
	cfg := log.DefaultConfig()
	cfg.SegmentIndexBytes = 1 << 16
	l, err := log.Open(t.TempDir(), cfg, log.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for i := 0; i < 8; i++ {
		var b record.Builder
		b.Reset(record.BatchHeader{LastOffsetDelta: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: time.Now().UnixMilli()})
		for j := 0; j <= i; j++ {
			b.Add(&record.Record{OffsetDelta: int32(j), Key: []byte("k"), Value: bytes.Repeat([]byte{byte(i)}, 10*i)})
		}
		rec, _ := b.AppendTo(nil)
		if _, err := l.Append(rec, log.OriginClient, 0); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// flatten writes a response's parts as a client would receive them.
func flatten(t testing.TB, r *wire.Response) []byte {
	var out []byte
	for i := 0; i < r.Parts(); i++ {
		b, fr := r.Part(i)
		if fr == nil {
			out = append(out, b...)
			continue
		}
		buf := make([]byte, fr.Len)
		if _, err := unix.Pread(fr.File.Fd(), buf, fr.Pos); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf...)
	}
	return out
}

// checkFetchEncoding encodes topics at version v with the hand-made encoder
// and decodes the bytes with kmsg: every field must come back.
func checkFetchEncoding(t testing.TB, l *log.Log, v int16, rng *rand.Rand) {
	var topics []fetchTopic
	var want [][]byte // records per partition, in order
	for ti := rng.IntN(4); ti >= 0; ti-- {
		ft := fetchTopic{name: fmt.Sprintf("topic-%d", rng.IntN(100)), id: [16]byte{byte(rng.IntN(256)), 1}}
		for pi := rng.IntN(4); pi >= 0; pi-- {
			fp := fetchPartition{
				partition: rng.Int32(), err: int16(rng.IntN(120)), hw: rng.Int64(), lso: rng.Int64(),
				logStart: rng.Int64(), committed: rng.IntN(2) == 0,
			}
			if fp.committed {
				for a := rng.IntN(3); a > 0; a-- {
					fp.aborted = append(fp.aborted, log.AbortedTxn{ProducerID: rng.Int64(), FirstOffset: rng.Int64()})
				}
			}
			var recs []byte
			if rng.IntN(3) > 0 {
				r, err := l.Read(rng.Int64N(l.LogEndOffset()), 1+rng.IntN(2000), l.LogEndOffset(), rng.IntN(2) == 0)
				if err != nil {
					t.Fatal(err)
				}
				if !r.Empty() {
					recs = make([]byte, r.Len)
					unix.Pread(r.Segment.Fd(), recs, r.Pos)
				}
				fp.records = r
			}
			want = append(want, recs)
			ft.parts = append(ft.parts, fp)
		}
		topics = append(topics, ft)
	}
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
	frame := flatten(t, resp)
	if int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
		t.Fatalf("v%d: frame size %d for %d bytes", v, binary.BigEndian.Uint32(frame), len(frame)-4)
	}
	body := frame[8:]
	if h.ResponseFlexible() {
		body = body[1:]
	}
	got := kmsg.NewPtrFetchResponse()
	got.Version = v
	if err := got.ReadFrom(body); err != nil {
		t.Fatalf("v%d: kmsg cannot decode: %v", v, err)
	}
	if len(got.Topics) != len(topics) {
		t.Fatalf("v%d: %d topics, want %d", v, len(got.Topics), len(topics))
	}
	k := 0
	for i, gt := range got.Topics {
		ft := topics[i]
		if (v >= 13 && gt.TopicID != ft.id) || (v < 13 && gt.Topic != ft.name) {
			t.Fatalf("v%d topic %d: %q %x", v, i, gt.Topic, gt.TopicID)
		}
		for j, gp := range gt.Partitions {
			fp := ft.parts[j]
			ok := gp.Partition == fp.partition && gp.ErrorCode == fp.err && gp.HighWatermark == fp.hw &&
				gp.LastStableOffset == fp.lso && (v < 5 || gp.LogStartOffset == fp.logStart) &&
				bytes.Equal(gp.RecordBatches, want[k]) && (gp.AbortedTransactions == nil) == !fp.committed &&
				len(gp.AbortedTransactions) == len(fp.aborted)
			for a := range gp.AbortedTransactions {
				ok = ok && gp.AbortedTransactions[a].ProducerID == fp.aborted[a].ProducerID &&
					gp.AbortedTransactions[a].FirstOffset == fp.aborted[a].FirstOffset
			}
			if v >= 11 {
				ok = ok && gp.PreferredReadReplica == -1
			}
			if !ok {
				t.Fatalf("v%d topic %d partition %d: got %+v, want %+v with %d record bytes", v, i, j, gp, fp, len(want[k]))
			}
			k++
		}
	}
}

func TestFetchResponseEncoding(t *testing.T) {
	l := testLog(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for v := int16(4); v <= 18; v++ {
		for i := 0; i < 50; i++ {
			checkFetchEncoding(t, l, v, rng)
		}
	}
}

func FuzzFetchResponseEncoding(f *testing.F) {
	f.Add(uint64(1), uint64(2), int16(12))
	f.Add(uint64(3), uint64(4), int16(4))
	f.Fuzz(func(t *testing.T, a, b uint64, v int16) {
		if v < 4 || v > 18 {
			return
		}
		checkFetchEncoding(t, testLog(t), v, rand.New(rand.NewPCG(a, b)))
	})
}
