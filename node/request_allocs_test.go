package node

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/record"
)

// rawConn sends pre-encoded requests and reads responses into one reused
// buffer: it allocates nothing per request, so the allocations a test
// counts around it are the broker's.
type rawConn struct {
	c   net.Conn
	buf []byte
}

func (r *rawConn) roundTrip(t testing.TB, req []byte) []byte {
	if _, err := r.c.Write(req); err != nil {
		t.Fatal(err)
	}
	return r.read(t)
}

// read reads one response.
func (r *rawConn) read(t testing.TB) []byte {
	resp, err := r.readErr()
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readErr is read for any goroutine: it returns what fails.
func (r *rawConn) readErr() ([]byte, error) {
	if _, err := io.ReadFull(r.c, r.buf[:4]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(r.buf[:4]))
	if n > len(r.buf) {
		return nil, fmt.Errorf("response of %d bytes", n)
	}
	if _, err := io.ReadFull(r.c, r.buf[:n]); err != nil {
		return nil, err
	}
	return r.buf[:n], nil
}

func encodeRequest(m kmsg.Request, corr int32) []byte {
	var dst []byte
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(m.Key()))
	dst = binary.BigEndian.AppendUint16(dst, uint16(m.GetVersion()))
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	dst = binary.BigEndian.AppendUint16(dst, 1)
	dst = append(dst, 'c')
	if m.IsFlexible() {
		dst = append(dst, 0)
	}
	dst = m.AppendTo(dst)
	binary.BigEndian.PutUint32(dst, uint32(len(dst)-4))
	return dst
}

// A produce (acks=1) and a fetch that finds data at once allocate nothing
// while they are read, served and answered, in steady state: the request
// and response structs, their slices and the fetch's bookkeeping are
// pooled, the request is decoded into them (net/api/request_decode.go),
// and sendfile's offset is not taken by address from the stack. A produce
// of large compressed batches, appended off the event loop, and a fetch
// that parks allocate nothing either: the goroutine that completes their
// answer writes it (net/server writeDirect), with no hand-off to the loop.
func TestRequestAllocs(t *testing.T) {
	const compressedRecords = 32
	if racePoolDrops {
		t.Skip("the race detector's sync.Pool drops pooled values on purpose")
	}
	c := startCluster(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, adm := c.client(0)
	if res, err := adm.CreateTopic(ctx, 1, 1, nil, "allocs"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	c.waitTopic(ctx, 0, "allocs")
	conn, err := net.Dial("tcp", c.nodes[0].Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rc := &rawConn{c: conn, buf: make([]byte, 1<<20)}

	batch := benchBatch(t, 16, 1024)
	pr := kmsg.NewPtrProduceRequest()
	pr.SetVersion(11)
	pr.Acks, pr.TimeoutMillis = 1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "allocs"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = batch
	pt.Partitions = append(pt.Partitions, pp)
	pr.Topics = append(pr.Topics, pt)
	produce := encodeRequest(pr, 1)

	fr := kmsg.NewPtrFetchRequest()
	fr.SetVersion(12)
	fr.MaxWaitMillis, fr.MinBytes, fr.MaxBytes = 0, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "allocs"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 64 << 10
	fp.CurrentLeaderEpoch = -1
	ft.Partitions = append(ft.Partitions, fp)
	fr.Topics = append(fr.Topics, ft)
	fetch := encodeRequest(fr, 2)

	// A produce of more compressed bytes than net/api's
	// offLoopCompressedBytes is validated and appended off the event loop.
	var lz4 record.Builder
	lz4.Reset(record.BatchHeader{Codec: record.CodecLZ4, BaseTimestamp: time.Now().UnixMilli(), LastOffsetDelta: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1})
	for i := range compressedRecords {
		v := make([]byte, 1024)
		rand.Read(v) // incompressible: 32 KiB compressed
		lz4.Add(&record.Record{OffsetDelta: int32(i), Value: v})
	}
	compressed, err := lz4.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	pr.Topics[0].Partitions[0].Records = compressed
	produceCompressed := encodeRequest(pr, 4)
	pr.Topics[0].Partitions[0].Records = batch

	const warm, n = 200, 1000
	for range warm {
		rc.roundTrip(t, produce)
		rc.roundTrip(t, fetch)
		rc.roundTrip(t, produceCompressed)
	}
	for _, c := range []struct {
		name string
		req  []byte
		want int // per request
	}{
		{"produce", produce, 0},
		{"fetch", fetch, 0},
		// Appended off the loop, and answered from there (writeDirect).
		{"compressed produce", produceCompressed, 0},
	} {
		allocs := servedAllocs(func() {
			for range n {
				rc.roundTrip(t, c.req)
			}
		})
		var total int64
		for where, count := range allocs {
			total += count
			t.Logf("%s: %d allocations in %s", c.name, count, where)
		}
		t.Logf("%s: %.2f allocations per request", c.name, float64(total)/n)
		if total > int64(c.want*n+n/10) {
			t.Errorf("%s: %.2f allocations per request while serving it, want %d", c.name, float64(total)/n, c.want)
		}
	}

	// A fetch that finds nothing parks until a produce on another
	// connection satisfies it, and the produce answers it on its own
	// loop, writing the answer on the fetch's socket itself (writeDirect).
	// The waiter is the fetch's own, pooled with it (a generation per
	// wait, its timer reset).
	pconn, err := net.Dial("tcp", c.nodes[0].Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer pconn.Close()
	prc := &rawConn{c: pconn, buf: make([]byte, 1<<20)}
	const parked, parkedWarm = 300, 100
	fetches := make([][]byte, parkedWarm+parked)
	for i := range fetches {
		fr.MaxWaitMillis = 10000
		fr.Topics[0].Partitions[0].FetchOffset = (warm+n)*(16+compressedRecords) + int64(i)*16 // the log's end when it is sent
		fetches[i] = encodeRequest(fr, 3)
	}
	part, ok := c.nodes[0].Replicas().Partition(log.TopicPartition{Topic: "allocs"})
	if !ok {
		t.Fatal("allocs-0 is not local")
	}
	wake := func(i int) {
		if _, err := rc.c.Write(fetches[i]); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); part.Waiting() == 0; {
			if time.Now().After(deadline) {
				t.Fatalf("fetch %d did not park", i)
			}
			runtime.Gosched()
		}
		prc.roundTrip(t, produce)
		if resp := rc.read(t); len(resp) < 16<<10 {
			t.Fatalf("fetch %d was answered without the batch that woke it (%d bytes)", i, len(resp))
		}
	}
	for i := range parkedWarm {
		wake(i)
	}
	allocs := servedAllocs(func() {
		for i := range parked {
			wake(parkedWarm + i)
		}
	})
	var total int64
	for where, count := range allocs {
		total += count
		t.Logf("produce and the parked fetch it wakes: %d allocations in %s", count, where)
	}
	// The slack is the pools' refill after the profile's GCs emptied
	// them: about 100 allocations, however many rounds.
	t.Logf("%.2f allocations per produce and the parked fetch it wakes", float64(total)/parked)
	if total > parked/2 {
		t.Errorf("%.2f allocations per produce and the parked fetch it wakes, want 0", float64(total)/parked)
	}
}

// servedAllocs runs f with every allocation profiled and returns the
// allocations made while a request was read, served or answered (in
// net/server's frames: the connection's reads, api.Handler.Serve, the
// response's write),
// by the function that made them. Counting by stack rather
// than all the process's allocations (testing.AllocsPerRun) leaves out
// the node's background work and makes the count exact.
func servedAllocs(f func()) map[string]int64 {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	before := servedProfile()
	f()
	after := servedProfile()
	for k, v := range before {
		after[k] -= v
		if after[k] == 0 {
			delete(after, k)
		}
	}
	return after
}

func servedProfile() map[string]int64 {
	// The profile is as of the last completed GC cycle; the second makes
	// sure the allocations before this call are in it.
	runtime.GC()
	runtime.GC()
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	out := map[string]int64{}
	for _, r := range recs {
		frames := runtime.CallersFrames(r.Stack())
		var first string
		served := false
		for {
			fr, more := frames.Next()
			if first == "" && !strings.HasPrefix(fr.Function, "runtime.") {
				first = fr.Function
			}
			if strings.HasPrefix(fr.Function, "kzero/net/server.") {
				served = true
			}
			if !more {
				break
			}
		}
		if served {
			out[first] += r.AllocObjects
		}
	}
	return out
}
