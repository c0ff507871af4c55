package api

// Fetch: v0-v18; v0-v3 (message sets, down-converted in
// 01_fetch_legacy.go) only with legacy.protocol.versions.enable. Fetch
// sessions (KIP-227) from v7, topic ids from v13; v18 (Kafka 4.1) adds only a tagged field for followers (their high
// watermark, KIP-1166), so a client request reads as v17.
// MaxBytes, per-partition MaxBytes and KIP-74 (the first batch of the
// first non-empty partition is returned whole even past the limits).
// read_committed stops at the last stable offset and lists the aborted
// transactions in range.
//
// A fetch with less than MinBytes available and MaxWaitMs > 0 waits in the
// replica purgatory, holding no goroutine, and is answered when enough
// bytes become readable or the wait expires.
//
// A follower's fetch (a replica id, v14 and before, or ReplicaState, v15+)
// reads up to the leader's log end, not the HW, and its fetch offset is the
// follower's log end offset, which moves the ISR state (replica.Partition.
// ReadForFollower); it waits for appends rather than HW moves, except that
// a v18 follower says which HW it knows (KIP-1166): a HW above it is news
// that answers the fetch at once, parked or not, so followers (and the
// consumers reading from them, KIP-392) learn a HW move without waiting
// out replica.fetch.wait.max.ms.
//
// A consumer with a consumer_byte_rate reads at most what its quota
// allows in one window (Kafka's getMaxValueInQuotaWindow). Over that
// quota or its request_percentage, the answer is empty with
// throttle_time_ms set (the larger of the two) and the connection is
// muted for that long (throttle.go); a full fetch answered so opens no
// session.

import (
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/net/server"
	"kzero/replica"
)

func init() { register(kmsg.Fetch.Int16(), 0, 18, (*Handler).fetch).since4(4) }

// fetchTarget is one partition to read.
type fetchTarget struct {
	topic        string
	id           [16]byte
	partition    int32
	offset       int64
	maxBytes     int32
	currentEpoch int32
	replicaHW    int64             // the HW a v18 follower knows; MaxInt64 when unsaid
	session      *sessionPartition // nil for a sessionless fetch
}

// fetchOp is one fetch request being served. It is pooled with its
// slices (fetchOps) and its request is decoded into them
// (request_decode.go), so that a fetch allocates nothing in steady state.
type fetchOp struct {
	h       *Handler
	req     *server.Request
	r       *kmsg.FetchRequest // &request
	request kmsg.FetchRequest
	session *fetchSession
	full    bool // every partition goes in the response
	targets []fetchTarget
	topics  []fetchTopic
	// The partitions found, to wait on, with the offset each read could
	// go up to and the HW the follower knows of each (followers only): a
	// parked fetch's waiter owns them until it fires and reads again.
	parts  []*replica.Partition
	seen   []int64
	known  []int64
	tix    []int32 // the target each of parts is
	hwNews bool    // a follower's partition has a HW above what it knows
	// redirected: a partition is answered with a preferred read replica
	// (KIP-392); Kafka answers such a fetch at once.
	redirected bool
	replica    int32 // the follower fetching; -1 for a consumer
	// deniedFollower: a fetch with a replica id from a principal without
	// CLUSTER_ACTION, refused partition by partition.
	deniedFollower bool
	// maxBytes is the most the answer carries: the request's max bytes
	// capped, as in Kafka, at fetch.max.bytes for a consumer (and at what
	// its consumer_byte_rate lets one fetch read, fetchCap) or at
	// replica.fetch.response.max.bytes for a follower.
	maxBytes int64
	// charge is the handler time charged to the request quota, taken
	// when the fetch parks (charged), so that the response carries its
	// throttle as Kafka's does; an answer given at once takes it then.
	charge  int64
	charged bool
	answer  func() // answerParked, bound once for the fetchOp's life in the pool
	// waiter is what the fetch parks with (replica.Parked.Waiter): kept
	// with the fetchOp in the pool, it is reused by its next park.
	waiter replica.Waiter
}

var fetchOps = sync.Pool{New: func() any {
	f := new(fetchOp)
	f.r = &f.request
	return f
}}

// done returns f to the pool once it is answered.
func (f *fetchOp) done() {
	// The records were sent (the response owns their ranges) or released;
	// clear to capacity: a session's trim leaves topics and partitions
	// past the lengths.
	f.topics = f.topics[:cap(f.topics)]
	for i := range f.topics {
		clear(f.topics[i].parts[:cap(f.topics[i].parts)])
		f.topics[i].parts = f.topics[i].parts[:0]
	}
	f.topics = f.topics[:0]
	clear(f.targets)
	clear(f.parts)
	f.targets, f.parts, f.seen, f.known, f.tix = f.targets[:0], f.parts[:0], f.seen[:0], f.known[:0], f.tix[:0]
	// The request's strings alias its buffer: drop them (the partitions
	// hold no pointers; their slices stay for the next request).
	for i := range f.request.Topics {
		f.request.Topics[i].Topic = ""
	}
	for i := range f.request.ForgottenTopics {
		f.request.ForgottenTopics[i].Topic = ""
	}
	f.request = kmsg.FetchRequest{Topics: f.request.Topics[:0], ForgottenTopics: f.request.ForgottenTopics[:0]}
	f.h, f.req, f.session, f.full, f.hwNews, f.redirected = nil, nil, nil, false, false, false
	f.charge, f.charged = 0, false
	fetchOps.Put(f)
}

// fetchReplicaID is the broker fetching as a follower, -1 for a consumer.
func fetchReplicaID(r *kmsg.FetchRequest) int32 {
	if r.Version >= 15 {
		return r.ReplicaState.ID
	}
	return r.ReplicaID
}

func (h *Handler) fetch(req *server.Request) error {
	f := fetchOps.Get().(*fetchOp)
	r := f.r
	if !readFetchRequest(req.Body, req.Header.APIVersion, r) {
		if err := decode(req, r); err != nil {
			f.done()
			return err
		}
	}
	f.h, f.req, f.replica = h, req, fetchReplicaID(r)
	if f.replica >= 0 {
		// Followers are exempt from the request quota (Kafka's
		// sendResponseExemptThrottle).
		h.takeCharge(req)
	}
	// A follower's fetch needs CLUSTER_ACTION (CVE-2018-1288); without
	// it, as in Kafka, every partition answers TOPIC_AUTHORIZATION_FAILED.
	f.deniedFollower = f.replica >= 0 && !h.authorized(req, opClusterAct, resCluster, clusterName)
	var code int16
	f.session, f.full, code = h.sessions.sessionFor(r)
	if code != 0 {
		var d time.Duration
		if f.replica < 0 {
			// A session error is throttled like any consumer fetch, and a
			// throttled one gets the plain throttled answer: no error,
			// session 0, no partitions (Kafka's SessionErrorContext keeps
			// FetchContext.getThrottledResponse).
			if d = f.quotaThrottle(); d > 0 {
				code = 0
			}
		}
		resp := req.NewResponse()
		e := enc{b: resp.B, flexible: r.Version >= 12}
		e.i32(throttleMillis(d))
		e.i16(code)
		e.i32(0)
		e.arrayLen(0)
		e.noTags()
		resp.B = e.b
		req.Respond(resp)
		f.done()
		return nil
	}
	f.maxBytes = int64(r.MaxBytes)
	if f.maxBytes <= 0 {
		f.maxBytes = math.MaxInt32
	}
	if f.replica < 0 {
		f.maxBytes = min(f.maxBytes, int64(h.cfg.FetchMaxBytes))
		if c := h.fetchCap(req); c >= 0 {
			f.maxBytes = min(f.maxBytes, c) // one fetch cannot overshoot the quota (throttle.go)
		}
	} else {
		f.maxBytes = min(f.maxBytes, int64(h.cfg.ReplicaFetchResponseMaxBytes))
	}
	// Kafka caps the min bytes at the max bytes, so a fetch the caps cut
	// is answered rather than parked until it times out.
	minBytes := min(int64(r.MinBytes), f.maxBytes)
	f.collectTargets()
	bytes, errored := f.read()
	if bytes < minBytes && r.MaxWaitMillis > 0 && !errored && len(f.parts) > 0 && !f.hwNews && !f.redirected {
		// What was read may be less than what is there, cut by the
		// fetch's max bytes: as Kafka's DelayedFetch (tried at once
		// before the fetch waits), the fetch has its min bytes when the
		// bytes available are enough.
		bytes = max(bytes, f.available())
	}
	if bytes >= minBytes || r.MaxWaitMillis <= 0 || errored || len(f.parts) == 0 || f.hwNews || f.redirected {
		f.respond()
		return nil
	}
	f.release()
	// The handler's time is charged with the answer, its wait is not.
	f.charge, f.charged = h.takeCharge(req)
	// From here the waiter owns what was read, and f: once it fires (not
	// before it is registered on every partition), it reads again into f
	// and answers.
	// A fetch that converts message formats (v0-v3) is not answered on
	// the goroutine of the produce that satisfies it.
	parked := replica.Parked{Parts: f.parts, Seen: f.seen, KnownHW: f.known, Follower: f.replica >= 0, Committed: r.IsolationLevel == 1,
		Inline: Inline(kmsg.Fetch.Int16(), r.Version), Waiter: &f.waiter}
	replica.Park(parked, minBytes-bytes, time.Duration(r.MaxWaitMillis)*time.Millisecond, f.answerFunc())
	return nil
}

// answerFunc is answerParked as a func value, made once per fetchOp (the
// pool's New cannot: answerParked leads back to the pool).
func (f *fetchOp) answerFunc() func() {
	if f.answer == nil {
		f.answer = f.answerParked
	}
	return f.answer
}

// parkedFault, unset but in tests, runs before a parked fetch reads
// again: the seam through which they make its answer panic.
var parkedFault atomic.Pointer[func()]

// answerParked reads again and answers a parked fetch, on the goroutine
// that fired its waiter: often a producer's event loop (Parked.Inline).
// A panic there fails this fetch, closing its connection, as a panic in
// Serve would (server.Conn.serve), rather than the produce that fired it,
// whose records are appended: an error there would have the producer send
// them again. Once the answer began, the request may be completed and
// recycled, so only its connection is closed.
func (f *fetchOp) answerParked() {
	req, conn, logger := f.req, f.req.Conn(), f.h.logger
	answering := false
	defer func() {
		if p := recover(); p != nil {
			logger.Error("parked fetch panic", "conn", conn.ID(), "remote", conn.RemoteAddr(),
				"panic", p, "stack", string(debug.Stack()))
			err := fmt.Errorf("parked fetch panic: %v", p)
			if answering {
				conn.Close(err)
			} else {
				req.Fail(err)
			}
		}
	}()
	if fault := parkedFault.Load(); fault != nil {
		(*fault)()
	}
	f.read()
	answering = true
	f.respond()
}

// replicaHW is the HW a follower says it knows for a partition (Fetch
// v18, KIP-1166), MaxInt64 when it says nothing.
func replicaHW(r *kmsg.FetchRequest, p *kmsg.FetchRequestTopicPartition) int64 {
	if r.Version < 18 {
		return math.MaxInt64
	}
	return p.HighWatermark
}

// collectTargets lists the partitions to read: the request's, or the
// session's after the request updated it.
func (f *fetchOp) collectTargets() {
	if s := f.session; s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, sp := range s.parts {
			f.targets = append(f.targets, fetchTarget{topic: sp.key.topic, id: sp.key.id, partition: sp.key.partition,
				offset: sp.fetchOffset, maxBytes: sp.maxBytes, currentEpoch: sp.currentEpoch, replicaHW: sp.replicaHW, session: sp})
		}
		return
	}
	for _, t := range f.r.Topics {
		for _, p := range t.Partitions {
			f.targets = append(f.targets, fetchTarget{topic: t.Topic, id: t.TopicID, partition: p.Partition,
				offset: p.FetchOffset, maxBytes: p.PartitionMaxBytes, currentEpoch: p.CurrentLeaderEpoch, replicaHW: replicaHW(f.r, &p)})
		}
	}
}

// read fills f.topics from the replicas; it returns the bytes found and
// whether any partition failed.
func (f *fetchOp) read() (total int64, errored bool) {
	r := f.r
	committed := r.IsolationLevel == 1
	remaining := f.maxBytes
	f.topics = f.topics[:0]
	f.parts, f.seen, f.known, f.tix = f.parts[:0], f.seen[:0], f.known[:0], f.tix[:0]
	f.redirected = false
	for i := range f.targets {
		tg := &f.targets[i]
		if n := len(f.topics); n == 0 || f.topics[n-1].name != tg.topic || f.topics[n-1].id != tg.id {
			// Reuse the pooled topic's partition slice.
			f.topics = slices.Grow(f.topics, 1)[:n+1]
			f.topics[n] = fetchTopic{name: tg.topic, id: tg.id, parts: f.topics[n].parts[:0]}
		}
		ft := &f.topics[len(f.topics)-1]
		ft.parts = append(ft.parts, fetchPartition{partition: tg.partition, hw: -1, lso: -1, logStart: -1, committed: committed, session: tg.session})
		fp := &ft.parts[len(ft.parts)-1]
		if f.deniedFollower {
			fp.err = kerr.TopicAuthorizationFailed.Code
			errored = true
			continue
		}
		name, known := tg.topic, true
		if r.Version >= 13 {
			name, known = f.h.topicName(tg.id)
		}
		if !known {
			fp.err = kerr.UnknownTopicID.Code
			errored = true
			continue
		}
		if f.h.authz != nil && !f.h.authorized(f.req, opRead, resTopic, name) {
			fp.err = kerr.TopicAuthorizationFailed.Code
			errored = true
			continue
		}
		part, err := f.h.replicas.Get(log.TopicPartition{Topic: name, Partition: tg.partition})
		if err != nil {
			fp.err = errCode(err)
			errored = true
			continue
		}
		f.parts, f.seen, f.tix = append(f.parts, part), append(f.seen, math.MaxInt64), append(f.tix, int32(i))
		if f.replica >= 0 {
			f.known = append(f.known, tg.replicaHW)
		}
		limit := min(int64(tg.maxBytes), remaining)
		minOne := total == 0 && r.Version >= 3 // KIP-74; v0-v2 cut at the limit
		var res replica.ReadResult
		if f.replica >= 0 {
			res, err = part.ReadForFollower(f.replica, tg.offset, int(max(limit, 0)), minOne, tg.currentEpoch)
		} else {
			if r.Version >= 11 && f.h.cfg.RackAwareReads && r.Rack != "" && part.IsLeader() {
				if id := part.PreferredReadReplica(r.Rack, tg.offset); id >= 0 {
					// KIP-392: no records from here; the consumer goes
					// to the replica in its rack.
					fp.readFrom, fp.hasReadFrom = id, true
					f.redirected = true
					fp.hw, fp.lso, fp.logStart = part.HighWatermark(), part.LastStableOffset(), part.LogStartOffset()
					continue
				}
			}
			// v11+ consumers may read from a follower (KIP-392), up to its HW.
			res, err = part.Read(tg.offset, int(max(limit, 0)), committed, minOne, tg.currentEpoch, r.Version >= 11, nil)
		}
		if err != nil {
			fp.err = errCode(err)
			errored = true
			continue
		}
		fp.hw, fp.lso, fp.logStart = res.HighWatermark, res.LastStableOffset, res.LogStartOffset
		fp.aborted, fp.records = res.Aborted, res.Range
		if f.replica >= 0 && res.HighWatermark > tg.replicaHW {
			f.hwNews = true
		}
		f.seen[len(f.seen)-1] = res.End
		total += res.Range.Len
		remaining -= res.Range.Len
	}
	return total, errored
}

// available is what the partitions read hold from their fetch offsets up
// to what the read could reach, each counted up to its partition max
// bytes, as Kafka's DelayedFetch.tryComplete accumulates it; MaxInt64
// when a partition's bound lies in a later segment than its fetch offset
// (Kafka's DelayedFetch completes such a fetch at once).
func (f *fetchOp) available() int64 {
	var n int64
	for i, p := range f.parts {
		if f.seen[i] == math.MaxInt64 {
			continue // not read
		}
		tg := &f.targets[f.tix[i]]
		a := p.Available(tg.offset, f.seen[i])
		if a == math.MaxInt64 {
			return a
		}
		n += min(a, int64(max(tg.maxBytes, 0)))
	}
	return n
}

// release drops the file ranges read and not sent.
func (f *fetchOp) release() {
	for i := range f.topics {
		for j := range f.topics[i].parts {
			f.topics[i].parts[j].records.Release()
			f.topics[i].parts[j].records = log.FileRange{}
		}
	}
}

func (f *fetchOp) respond() {
	if f.r.Version < 4 {
		f.respondLegacy()
		return
	}
	s := f.session
	if s != nil {
		// Held from the epoch check through the quota's size to the trim,
		// so that no other request of the session comes between them.
		s.mu.Lock()
	}
	var code int16
	if s != nil && !f.full && s.epoch != nextEpoch(f.r.SessionEpoch) {
		// Another request of the session came between this one's
		// session update and its answer (Kafka's "possible duplicate
		// request", checked when IncrementalFetchContext answers): nothing
		// is read for it, and the answer, throttled or not, is
		// INVALID_FETCH_SESSION_EPOCH with the session's id.
		code = kerr.InvalidFetchSessionEpoch.Code
		f.release()
		f.topics = f.topics[:0]
	}
	if d := f.quotaThrottle(); d > 0 {
		// Over a quota: an empty answer with the throttle time (Kafka's
		// getThrottledResponse). An incremental fetch keeps its session,
		// whose partitions were told nothing, so the next fetch reads the
		// same again; a full fetch that would open a session answers
		// session 0 and opens none.
		var id int32
		if s != nil {
			if !f.full {
				id = s.id
			}
			s.mu.Unlock()
		}
		f.release()
		resp := f.req.NewResponse()
		appendFetchResponse(resp, f.r.Version, throttleMillis(d), code, id, nil)
		f.req.Respond(resp)
		f.done()
		return
	}
	var id int32
	if s != nil {
		if s.id == 0 {
			// A full fetch's new session, answered now. The cache's lock
			// nests inside the session's; nothing takes them the other
			// way round.
			f.h.sessions.add(s)
		}
		id = s.id
		if code == 0 {
			f.trimToChanges()
		}
		s.mu.Unlock()
	}
	resp := f.req.NewResponse()
	appendFetchResponse(resp, f.r.Version, 0, code, id, f.topics)
	f.req.Respond(resp)
	f.done()
}

// quotaThrottle records a consumer's fetch against its quotas, as
// Kafka's handleFetchRequest does: its handler time against
// request_percentage, its response size against consumer_byte_rate
// (throttle.go). Over either, it returns the larger throttle time and
// mutes the connection for it; the fetch is answered empty, so its bytes
// are taken back (Kafka's unrecordQuotaSensor).
func (f *fetchOp) quotaThrottle() time.Duration {
	h := f.h
	if f.replica >= 0 {
		return 0
	}
	ns, charged := f.charge, f.charged
	if !charged {
		ns, charged = h.takeCharge(f.req)
	}
	f.charge, f.charged = 0, false
	m := h.quotas.fetch
	bytes := m.Enabled()
	if !charged && !bytes {
		return 0
	}
	c, now := h.quotaClient(f.req), time.Now().UnixNano()
	var reqD, bwD time.Duration
	if charged {
		reqD = h.requestThrottle(c, ns, now)
	}
	var size int64
	if bytes {
		size = f.quotaSize()
		bwD = m.Record(c, float64(size), now)
	}
	if reqD <= 0 && bwD <= 0 {
		return 0
	}
	if bytes {
		m.Unrecord(c, float64(size), now)
	}
	if bwD > reqD {
		throttle(m, f.req, bwD)
		return bwD
	}
	throttle(h.quotas.request, f.req, reqD)
	return reqD
}

// trimToChanges records what the session's partitions were told and, for
// an incremental response, drops the partitions with nothing new. Caller
// holds the session's lock.
func (f *fetchOp) trimToChanges() {
	k := 0
	for i := range f.topics {
		t := &f.topics[i]
		parts := t.parts[:0]
		for _, p := range t.parts {
			sp := p.session
			changed := !sp.sent || !p.records.Empty() || p.err != 0 || p.hw != sp.hw || p.lso != sp.lso || p.logStart != sp.logStart
			sp.sent, sp.hw, sp.lso, sp.logStart = true, p.hw, p.lso, p.logStart
			if f.full || changed {
				parts = append(parts, p)
			}
		}
		t.parts = parts
		if len(parts) > 0 {
			// Swapped, not copied: every topic keeps a partition slice of
			// its own for the pooled op's next use.
			f.topics[k], f.topics[i] = f.topics[i], f.topics[k]
			k++
		}
	}
	f.topics = f.topics[:k]
}
