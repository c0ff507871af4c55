package api

// ShareFetch: v1-v2 (KIP-932; v2 adds the acquire mode of KIP-1206 and
// RENEW acknowledgements of KIP-1222). A member of a share group fetches
// from the leaders of the partitions it is assigned through a share
// session (epoch 0 opens it, each request carries the next epoch, -1
// closes it; SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH,
// SHARE_SESSION_LIMIT_REACHED at group.share.max.share.sessions), may
// acknowledge records it holds (AcknowledgeErrorCode per partition), and
// gets records it now holds for group.share.record.lock.duration.ms: the
// log's batches, sent with sendfile like Fetch's, and the acquired offset
// ranges with their delivery counts. Records past the MaxRecords limit are
// acquired up to the end of their batch (batch_optimized), or not
// (record_limit). Control batches are archived, never delivered. A share
// partition starts where its saved state says (coord/share.Store), else
// at the group config share.auto.offset.reset (latest, the default: the
// high watermark; earliest; by_duration:<ISO-8601>) when first fetched.
// share.isolation.level read_committed reads up to the last stable offset
// and archives the batches of aborted transactions unseen;
// read_uncommitted (the default) up to the high watermark.
//
// With nothing to acquire and MaxWaitMs > 0 the fetch waits (park) for new
// records, as Fetch does, or for records acquirable again: released by an
// acknowledgement, given back when a lock ends or a session closes, or
// room made under max.record.locks (Kafka's DelayedShareFetch).

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"kzero/coord/shards"
	"kzero/coord/share"
	"kzero/log"
	"kzero/net/server"
	"kzero/replica"
)

func init() { register(kmsg.ShareFetch.Int16(), 1, 2, (*Handler).shareFetch) }

type shareFetchOp struct {
	h       *Handler
	req     *server.Request
	r       *kmsg.ShareFetchRequest
	group   string
	member  string
	session []share.TP
	cfg     map[string]string  // the group's configs
	limits  share.Limits       // the broker's, as the group's configs override them
	acks    map[share.TP]int16 // the acknowledgements' results
	topics  []shareFetchTopic
	parts   []*replica.Partition // the partitions read, to wait on
	tps     []share.TP           // for each, its share partition
	seen    []int64              // for each, where its read stopped
}

func (h *Handler) shareFetch(req *server.Request) error {
	r := kmsg.NewPtrShareFetchRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	fail := func(code int16, msg string) error {
		resp := req.NewResponse()
		appendShareFetchResponse(resp, code, msg, int32(h.shares.Limits().LockDuration), nil)
		req.Respond(resp)
		return nil
	}
	if r.GroupID == nil || *r.GroupID == "" || r.MemberID == nil || *r.MemberID == "" {
		return fail(kerr.InvalidRequest.Code, "GroupId and MemberId must be set.")
	}
	if !h.authorized(req, opRead, resGroup, *r.GroupID) {
		return fail(kerr.GroupAuthorizationFailed.Code, "")
	}
	// Copies: the request's strings alias its frame buffer, and the
	// member id is kept on the records it acquires.
	f := &shareFetchOp{h: h, req: req, r: r, group: strings.Clone(*r.GroupID), member: strings.Clone(*r.MemberID), acks: map[share.TP]int16{}}
	f.cfg = h.cluster.Image().GroupConfigs(f.group)
	f.limits = shareLimits(h.shares.Limits(), f.cfg)
	var listed, forgotten []share.TP
	hasAcks := false
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			listed = append(listed, share.TP{Topic: t.TopicID, Partition: p.Partition})
			hasAcks = hasAcks || len(p.AcknowledgementBatches) > 0
		}
	}
	for _, t := range r.ForgottenTopicsData {
		for _, p := range t.Partitions {
			forgotten = append(forgotten, share.TP{Topic: t.TopicID, Partition: p})
		}
	}
	switch r.ShareSessionEpoch {
	case 0:
		if hasAcks {
			return fail(kerr.InvalidRequest.Code, "Acknowledge data present on initial fetch request")
		}
		if st := h.shares.Store(); st != nil {
			h.internalTopic(share.StateTopic, st.TopicSpec) // where the state is saved: created on first use
		}
		if _, err := h.shares.OpenSession(f.group, f.member, listed); err != nil {
			return fail(errCode(err), "")
		}
		f.session = listed
	case -1:
		if !h.shares.HasSession(f.group, f.member) {
			return fail(kerr.ShareSessionNotFound.Code, "")
		}
		f.acknowledge()
		_ = h.shares.CloseSession(f.group, f.member)
		f.respondAcks()
		return nil
	default:
		parts, err := h.shares.UpdateSession(f.group, f.member, r.ShareSessionEpoch, listed, forgotten)
		if err != nil {
			return fail(errCode(err), "")
		}
		f.session = parts
		f.acknowledge()
	}
	if r.Version >= 2 && r.IsRenewAck {
		f.respondAcks() // renewals only: nothing is fetched
		return nil
	}
	if acquired := f.read(); acquired || r.MaxWaitMillis <= 0 || len(f.parts) == 0 {
		f.respond()
		return nil
	}
	f.release()
	f.park()
	return nil
}

// park waits for records to acquire, as Kafka's DelayedShareFetch: new
// ones (the replica purgatory wakes it when a high watermark moves) or
// records acquirable again on the share partitions read (released,
// rejected or accepted making room under max.record.locks, or given back
// when a lock ends: coord/share wakes it through Manager.Wait), until
// MaxWaitMs. Whichever comes first reads again and answers.
func (f *shareFetchOp) park() {
	parts, seen := slices.Clone(f.parts), slices.Clone(f.seen)
	keys := make([]share.Key, len(f.tps))
	for i, tp := range f.tps {
		keys[i] = share.Key{Group: f.group, Topic: tp.Topic, Partition: tp.Partition}
	}
	var cancel func()
	ready := make(chan struct{})
	again := func() {
		<-ready
		cancel()
		f.read()
		f.respond()
	}
	w := replica.Wait(parts, 1, time.Duration(f.r.MaxWaitMillis)*time.Millisecond, again)
	cancel = f.h.shares.Wait(keys, w.Fire)
	close(ready)
	// What changed between the read and the registrations: a HW move, or
	// records acquirable again (their wake went out before the waiter
	// was there).
	for i, p := range parts {
		if p.HighWatermark() > seen[i] || f.h.shares.Acquirable(keys[i], p.ReadBound(false, f.committed())) {
			w.Fire()
			return
		}
	}
}

// committed reports whether the group reads committed records only
// (share.isolation.level).
func (f *shareFetchOp) committed() bool { return f.cfg["share.isolation.level"] == "read_committed" }

// acknowledge applies the request's acknowledgements.
func (f *shareFetchOp) acknowledge() {
	for _, t := range f.r.Topics {
		for _, p := range t.Partitions {
			if len(p.AcknowledgementBatches) == 0 {
				continue
			}
			batches := make([]ackBatch, len(p.AcknowledgementBatches))
			for i, b := range p.AcknowledgementBatches {
				batches[i] = ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
			}
			tp := share.TP{Topic: t.TopicID, Partition: p.Partition}
			f.acks[tp] = f.h.shareAcknowledge(f.req, f.group, f.member, tp, batches, renewEnabled(f.cfg))
		}
	}
}

// renewEnabled reports whether a group's members may RENEW their
// acquisition locks: its share.renew.acknowledge.enable, true unless set
// false (a boolean as Kafka parses one).
func renewEnabled(cfg map[string]string) bool {
	return !strings.EqualFold(strings.TrimSpace(cfg["share.renew.acknowledge.enable"]), "false")
}

// ackBatch is one acknowledgement batch of a request.
type ackBatch struct {
	first, last int64
	types       []int8
}

// shareAcknowledge applies a member's acknowledgements of one partition
// and returns the partition's acknowledge error code. The batches apply
// in order; the first that fails stops the rest (Kafka's
// INVALID_RECORD_STATE for records the member does not hold). A RENEW
// when the group's share.renew.acknowledge.enable is false (renew) fails
// the partition with INVALID_RECORD_STATE, as Kafka refuses it, and
// none of its batches apply.
func (h *Handler) shareAcknowledge(req *server.Request, group, member string, tp share.TP, batches []ackBatch, renew bool) int16 {
	name, ok := h.topicName(tp.Topic)
	if !ok {
		return kerr.UnknownTopicID.Code
	}
	if !h.authorized(req, opRead, resTopic, name) {
		return kerr.TopicAuthorizationFailed.Code
	}
	part, err := h.replicas.Get(log.TopicPartition{Topic: name, Partition: tp.Partition})
	if err != nil {
		return errCode(err)
	}
	if !part.IsLeader() {
		return kerr.NotLeaderForPartition.Code
	}
	key := share.Key{Group: group, Topic: tp.Topic, Partition: tp.Partition}
	e, sp := h.shares.Peek(key)
	if e == nil {
		return kerr.InvalidRecordState.Code
	}
	defer e.Unlock()
	now := time.Now().UnixMilli()
	sp.Expire(now)
	for i := 1; i < len(batches); i++ {
		if batches[i].first <= batches[i-1].last {
			return kerr.InvalidRequest.Code // batches must ascend without overlap
		}
	}
	if !renew && slices.ContainsFunc(batches, func(b ackBatch) bool { return slices.Contains(b.types, share.AckRenew) }) {
		return kerr.InvalidRecordState.Code
	}
	// Released records, or room made under max.record.locks, wake the
	// share fetches parked on the partition when it is unlocked.
	var code int16
	for _, b := range batches {
		if err := sp.Acknowledge(now, member, b.first, b.last, b.types); err != nil {
			code = errCode(err)
			break
		}
	}
	// What the batches before a failed one changed is saved too.
	if err := h.shares.Save(key, e); err != nil {
		h.logger.Warn("cannot save share partition state", "group", group, "partition", tp.Partition, "err", err)
		switch {
		case code != 0:
		case share.Fenced(err):
			// The share partition is read again at the next fetch:
			// what this member acquired before is gone, and an
			// acknowledgement of it must not be retried against the
			// records delivered anew (NOT_COORDINATOR would be).
			code = kerr.NotLeaderForPartition.Code
		default:
			code = errCode(shards.GroupError(err))
		}
	}
	return code
}

// read acquires records of every partition of the session and fills
// f.topics; it reports whether it acquired any.
func (f *shareFetchOp) read() (acquired bool) {
	remaining := int64(f.r.MaxBytes)
	if remaining <= 0 {
		remaining = 1<<31 - 1
	}
	maxRecords := int(f.r.MaxRecords)
	if maxRecords <= 0 {
		maxRecords = 500
	}
	strict := f.r.Version >= 2 && f.r.ShareAcquireMode == 1
	partMax := map[share.TP]int32{}
	for _, t := range f.r.Topics {
		for _, p := range t.Partitions {
			partMax[share.TP{Topic: t.TopicID, Partition: p.Partition}] = p.PartitionMaxBytes
		}
	}
	f.topics, f.parts, f.tps, f.seen = f.topics[:0], f.parts[:0], f.tps[:0], f.seen[:0]
	inResponse := map[share.TP]bool{}
	add := func(tp share.TP, p shareFetchPartition) {
		inResponse[tp] = true
		if n := len(f.topics); n == 0 || f.topics[n-1].id != tp.Topic {
			f.topics = append(f.topics, shareFetchTopic{id: tp.Topic})
		}
		t := &f.topics[len(f.topics)-1]
		p.partition, p.ackErr = tp.Partition, f.acks[tp]
		t.parts = append(t.parts, p)
	}
	for _, tp := range f.session {
		p := shareFetchPartition{leaderID: -1, leaderEpoch: -1}
		name, ok := f.h.topicName(tp.Topic)
		if !ok {
			p.err = kerr.UnknownTopicID.Code
			add(tp, p)
			continue
		}
		if !f.h.authorized(f.req, opRead, resTopic, name) {
			p.err = kerr.TopicAuthorizationFailed.Code
			add(tp, p)
			continue
		}
		part, err := f.h.replicas.Get(log.TopicPartition{Topic: name, Partition: tp.Partition})
		if err == nil && !part.IsLeader() {
			err = kerr.NotLeaderForPartition
		}
		if err != nil {
			p.err = errCode(err)
			add(tp, p)
			continue
		}
		maxBytes := remaining
		if m, ok := partMax[tp]; ok && m > 0 {
			maxBytes = min(maxBytes, int64(m))
		}
		if f.acks[tp] == kerr.NotLeaderForPartition.Code {
			// Its acknowledgement was fenced (share.Fenced: the state
			// was initialized again, by AlterShareGroupOffsets): the
			// share partition is read again at the member's next
			// fetch, not in this one, as Kafka's share partition
			// manager builds a fenced share partition anew in the
			// background. The member's other acknowledgements of what
			// it acquired before, on their way meanwhile, then find
			// those records available and are refused, instead of
			// accepting the same offsets delivered to it anew (which
			// its acknowledgement of the new delivery would then find
			// done: INVALID_RECORD_STATE for the whole batch).
			continue
		}
		var end int64
		p.records, p.acquired, end, err = f.acquire(part, tp, int(max(maxBytes, 0)), maxRecords, strict)
		if err != nil {
			p.err = errCode(err)
			add(tp, p)
			continue
		}
		f.parts, f.tps, f.seen = append(f.parts, part), append(f.tps, tp), append(f.seen, end)
		if len(p.acquired) > 0 {
			acquired = true
			remaining -= p.records.Len
			maxRecords -= acquiredCount(p.acquired)
			add(tp, p)
			if maxRecords <= 0 {
				break
			}
			continue
		}
		if _, ok := f.acks[tp]; ok {
			add(tp, p)
		}
	}
	// Acknowledged partitions no longer in the session still get their
	// result.
	for tp := range f.acks {
		if !inResponse[tp] {
			add(tp, shareFetchPartition{leaderID: -1, leaderEpoch: -1})
		}
	}
	return acquired
}

func acquiredCount(as []share.Acquired) int {
	n := 0
	for _, a := range as {
		n += int(a.Last - a.First + 1)
	}
	return n
}

// batchHeader is what a share fetch reads of a batch's header.
type batchHeader struct {
	base, next    int64 // offsets [base, next)
	pos, size     int64 // in the segment file
	producerID    int64
	control       bool
	transactional bool
	aborted       bool // read_committed: a batch of an aborted transaction
}

// readHeaders lists the whole batches of a file range, reading their
// headers from the segment file (the record bytes themselves are sent
// with sendfile, never read).
func readHeaders(r log.FileRange, out []batchHeader) ([]batchHeader, error) {
	var h [51]byte
	pos, end := r.Pos, r.Pos+r.Len
	for end-pos >= int64(len(h)) {
		n, err := unix.Pread(r.Segment.Fd(), h[:], pos)
		if err != nil {
			return out, err
		}
		if n < len(h) {
			break
		}
		size := 12 + int64(int32(binary.BigEndian.Uint32(h[8:12])))
		if size < int64(len(h)) || pos+size > end {
			break // a partial batch at the end of the range
		}
		base := int64(binary.BigEndian.Uint64(h[0:8]))
		attrs := binary.BigEndian.Uint16(h[21:23])
		last := base + int64(int32(binary.BigEndian.Uint32(h[23:27])))
		out = append(out, batchHeader{base: base, next: last + 1, pos: pos, size: size, producerID: int64(binary.BigEndian.Uint64(h[43:51])),
			control: attrs&0x20 != 0, transactional: attrs&0x10 != 0})
		pos += size
	}
	return out, nil
}

// acquire reads a partition from its share partition's fetch offset and
// acquires records of the whole batches read for the member. It returns
// the batches holding the acquired records as a file range, the ranges
// acquired, and where the read could go up to.
func (f *shareFetchOp) acquire(part *replica.Partition, tp share.TP, maxBytes, maxRecords int, strict bool) (log.FileRange, []share.Acquired, int64, error) {
	committed := f.committed()
	e, sp, err := f.h.shares.Lock(share.Key{Group: f.group, Topic: tp.Topic, Partition: tp.Partition}, part.LeaderEpoch(), f.limits,
		func() int64 { return shareResetOffset(part, f.cfg["share.auto.offset.reset"]) })
	if err != nil {
		return log.FileRange{}, nil, part.HighWatermark(), err
	}
	defer e.Unlock()
	now := time.Now().UnixMilli()
	sp.Expire(now)
	if ls := part.LogStartOffset(); ls > sp.Start() {
		sp.MoveStart(ls)
	}
	off, ok := sp.FetchOffset()
	hw := part.ReadBound(false, committed)
	if !ok || off >= hw {
		return log.FileRange{}, nil, hw, nil
	}
	res, err := part.Read(off, maxBytes, committed, true, -1, false, nil)
	if err != nil {
		return log.FileRange{}, nil, hw, err
	}
	if res.Range.Empty() {
		return log.FileRange{}, nil, res.End, nil
	}
	batches, err := readHeaders(res.Range, nil)
	if err != nil || len(batches) == 0 {
		res.Range.Release()
		return log.FileRange{}, nil, res.End, err
	}
	if committed {
		markAborted(batches, res.Aborted)
	}
	to := batches[len(batches)-1].next
	find := func(o int64) *batchHeader {
		i, _ := slices.BinarySearchFunc(batches, o, func(b batchHeader, o int64) int {
			switch {
			case b.next <= o:
				return -1
			case b.base > o:
				return 1
			}
			return 0
		})
		if i < len(batches) && batches[i].base <= o && o < batches[i].next {
			return &batches[i]
		}
		return nil
	}
	skip := func(o int64) bool {
		b := find(o)
		return b != nil && (b.control || b.aborted)
	}
	batchEnd := func(o int64) int64 {
		if b := find(o); b != nil {
			return b.next
		}
		return o + 1
	}
	got := sp.Acquire(now, f.member, off, to, maxRecords, strict, skip, batchEnd)
	if len(got) == 0 {
		res.Range.Release()
		return log.FileRange{}, nil, res.End, nil
	}
	// Send only the batches from the first acquired record to the last.
	first, last := find(got[0].First), find(got[len(got)-1].Last)
	r := res.Range
	if first != nil && last != nil {
		r.Pos, r.Len = first.pos, last.pos+last.size-first.pos
	}
	return r, got, res.End, nil
}

// release drops the file ranges read and not sent.
func (f *shareFetchOp) release() {
	for i := range f.topics {
		for j := range f.topics[i].parts {
			f.topics[i].parts[j].records.Release()
			f.topics[i].parts[j].records = log.FileRange{}
		}
	}
}

func (f *shareFetchOp) respond() {
	resp := f.req.NewResponse()
	appendShareFetchResponse(resp, 0, "", int32(f.limits.LockDuration), f.topics)
	f.req.Respond(resp)
}

// respondAcks answers with the acknowledgements' results only.
func (f *shareFetchOp) respondAcks() {
	f.topics = f.topics[:0]
	for _, t := range f.r.Topics {
		for _, p := range t.Partitions {
			tp := share.TP{Topic: t.TopicID, Partition: p.Partition}
			code, ok := f.acks[tp]
			if !ok {
				continue
			}
			if n := len(f.topics); n == 0 || f.topics[n-1].id != tp.Topic {
				f.topics = append(f.topics, shareFetchTopic{id: tp.Topic})
			}
			t := &f.topics[len(f.topics)-1]
			t.parts = append(t.parts, shareFetchPartition{partition: tp.Partition, ackErr: code, leaderID: -1, leaderEpoch: -1})
		}
	}
	f.respond()
}

// markAborted marks the data batches of aborted transactions (a
// read_committed share group archives them, never delivered), as a
// read_committed consumer skips them: a producer's batches are aborted
// from the first offset of its aborted transaction to its marker.
func markAborted(batches []batchHeader, aborted []log.AbortedTxn) {
	if len(aborted) == 0 {
		return
	}
	aborted = slices.Clone(aborted)
	slices.SortFunc(aborted, func(a, b log.AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	open := map[int64]bool{}
	next := 0
	for i := range batches {
		b := &batches[i]
		for next < len(aborted) && aborted[next].FirstOffset < b.next {
			open[aborted[next].ProducerID] = true
			next++
		}
		switch {
		case b.control:
			delete(open, b.producerID) // its marker ends the transaction
		case b.transactional && open[b.producerID]:
			b.aborted = true
		}
	}
}

// shareResetOffset is where a new share partition starts, as
// share.auto.offset.reset says: latest (the default: the high watermark),
// earliest (the log start), or by_duration:<ISO-8601 duration> (the first
// record at or after now minus the duration; the high watermark if none).
func shareResetOffset(part *replica.Partition, reset string) int64 {
	switch {
	case reset == "earliest":
		return part.LogStartOffset()
	case strings.HasPrefix(reset, "by_duration:"):
		d, ok := parseISODuration(strings.TrimPrefix(reset, "by_duration:"))
		if !ok {
			break
		}
		pos, found, err := part.OffsetForTimestamp(time.Now().Add(-d).UnixMilli())
		if err == nil && found {
			return min(pos.Offset, part.HighWatermark())
		}
	}
	return part.HighWatermark()
}

// parseISODuration reads the ISO-8601 durations Java's Duration.parse
// takes: PnDTnHnMn.nS.
func parseISODuration(s string) (time.Duration, bool) {
	rest, ok := strings.CutPrefix(strings.ToUpper(s), "P")
	if !ok || rest == "" {
		return 0, false
	}
	var d time.Duration
	inTime := false
	for rest != "" {
		if rest[0] == 'T' {
			inTime, rest = true, rest[1:]
			continue
		}
		i := strings.IndexAny(rest, "DHMS")
		if i <= 0 {
			return 0, false
		}
		v, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || v < 0 {
			return 0, false
		}
		unit := map[byte]time.Duration{'D': 24 * time.Hour, 'H': time.Hour, 'M': time.Minute, 'S': time.Second}[rest[i]]
		if (rest[i] == 'D') == inTime {
			return 0, false
		}
		d += time.Duration(v * float64(unit))
		rest = rest[i+1:]
	}
	return d, true
}

// shareLimits are a group's share partition limits: the broker's, as the
// group configs share.record.lock.duration.ms, share.delivery.count.limit
// and share.partition.max.record.locks override them.
func shareLimits(l share.Limits, cfg map[string]string) share.Limits {
	get := func(key string, into func(int64)) {
		if v, err := strconv.ParseInt(cfg[key], 10, 64); err == nil && v > 0 {
			into(v)
		}
	}
	get("share.record.lock.duration.ms", func(v int64) { l.LockDuration = v })
	get("share.delivery.count.limit", func(v int64) { l.DeliveryLimit = int(v) })
	get("share.partition.max.record.locks", func(v int64) { l.MaxInFlight = int(v) })
	return l
}
