package share

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Acknowledgement types of ShareFetch and ShareAcknowledge (KIP-932, and
// RENEW of KIP-1222).
const (
	AckGap     int8 = 0 // no record at the offset (compaction, a control batch): archived
	AckAccept  int8 = 1 // processed: acknowledged
	AckRelease int8 = 2 // give it back: available again, for any member
	AckReject  int8 = 3 // unprocessable: archived
	AckRenew   int8 = 4 // still working on it: the lock starts again
)

// recordState is a record's state in a share partition (Kafka's
// RecordState).
type recordState uint8

const (
	available    recordState = iota // may be acquired
	acquired                        // locked by one member until acknowledged or its lock ends
	acknowledged                    // accepted: done
	archived                        // rejected, a gap, or past the delivery count limit: done
)

// inflight is one record between the share-partition start and end
// offsets.
type inflight struct {
	state    recordState
	count    uint16 // deliveries so far
	member   string // the member holding it (acquired only)
	deadline int64  // ms, when its acquisition lock ends (acquired only)
}

// Limits are the broker's share-partition settings.
type Limits struct {
	LockDuration  int64 // ms, group.share.record.lock.duration.ms
	DeliveryLimit int   // group.share.delivery.count.limit
	MaxInFlight   int   // group.share.partition.max.record.locks
}

// Partition is the state of one share partition (a share group's view of
// one topic partition): the share-partition start offset (SPSO), below
// which every record is done, and the records from it up to the
// share-partition end offset (SPEO), each available, acquired by a member
// with a lock deadline, acknowledged or archived, with its delivery count.
// Records at or past the SPEO have never been delivered.
//
// Partition is a pure state machine: no I/O and no clock, every input
// carries the time in ms. Its owner serializes calls.
type Partition struct {
	start  int64      // SPSO
	window []inflight // the records [start, start+len(window)); the SPEO is their end
	limits Limits
	// due: no acquisition lock ends before it (0: none held). A lower
	// bound: a record acknowledged early leaves it behind until Expire.
	due int64
	// freed: records became acquirable (given back, or room made under
	// MaxInFlight) since TakeFreed last said so; a parked share fetch may
	// now acquire them.
	freed bool
}

// NewPartition returns the state of a share partition that starts at
// offset start (where share.auto.offset.reset put it).
func NewPartition(start int64, limits Limits) *Partition {
	return &Partition{start: start, limits: limits}
}

// Start is the share-partition start offset.
func (p *Partition) Start() int64 { return p.start }

// End is the share-partition end offset: the first offset never acquired.
func (p *Partition) End() int64 { return p.start + int64(len(p.window)) }

// Acquired is a range of records handed to a member, all with the same
// delivery count.
type Acquired struct {
	First, Last int64
	Count       int16
}

// Expire ends the acquisition locks due by now: such a record is
// available again, or archived when its delivery count reached the limit.
// It returns the next lock deadline (0 none) and how many locks ended.
func (p *Partition) Expire(now int64) (next int64, ended int) {
	for i := range p.window {
		r := &p.window[i]
		if r.state != acquired {
			continue
		}
		if r.deadline <= now {
			p.giveBack(r)
			ended++
			continue
		}
		if next == 0 || r.deadline < next {
			next = r.deadline
		}
	}
	p.due = next
	p.advance()
	return next, ended
}

// LockDue is when the first acquisition lock may end: no lock ends
// before it (0: no record is acquired). Its owner runs Expire then.
func (p *Partition) LockDue() int64 { return p.due }

// lock sets r's acquisition lock to end at deadline.
func (p *Partition) lock(r *inflight, deadline int64) {
	r.deadline = deadline
	if p.due == 0 || deadline < p.due {
		p.due = deadline
	}
}

// TakeFreed reports whether records became acquirable since it last did:
// records given back (an acknowledgement's RELEASE, an ended lock or
// session), or room made under MaxInFlight. Parked share fetches of the
// partition are to be woken then.
func (p *Partition) TakeFreed() bool {
	f := p.freed
	p.freed = false
	return f
}

// giveBack makes an acquired record available, or archives it past the
// delivery count limit.
func (p *Partition) giveBack(r *inflight) {
	r.member, r.deadline = "", 0
	if int(r.count) >= p.limits.DeliveryLimit {
		r.state = archived
		return
	}
	r.state = available
	p.freed = true
}

// advance moves the SPSO past the records done. Moving it frees room
// when the window was full.
func (p *Partition) advance() {
	full := len(p.window) >= p.limits.MaxInFlight
	n := 0
	for n < len(p.window) && (p.window[n].state == acknowledged || p.window[n].state == archived) {
		n++
	}
	if n == 0 {
		return
	}
	p.start += int64(n)
	clear(p.window[:n])
	p.window = p.window[n:]
	if len(p.window) == 0 {
		p.window = p.window[:0:0] // let the old array go
	}
	if full && len(p.window) < p.limits.MaxInFlight {
		p.freed = true
	}
}

// MoveStart moves the SPSO up to offset (the log start moved past it, or
// an operator reset the offset forward): records below it are gone.
func (p *Partition) MoveStart(offset int64) {
	if offset <= p.start {
		return
	}
	drop := offset - p.start
	if drop >= int64(len(p.window)) {
		p.window = nil
	} else {
		p.window = p.window[drop:]
	}
	p.start = offset
}

// FetchOffset is where a fetch for this share partition reads from: the
// first available record, else the SPEO; ok is false when nothing can be
// acquired (every in-flight record is held and the window is full).
func (p *Partition) FetchOffset() (offset int64, ok bool) {
	for i := range p.window {
		if p.window[i].state == available {
			return p.start + int64(i), true
		}
	}
	return p.End(), len(p.window) < p.limits.MaxInFlight
}

// Acquire locks records for member at now: the available ones in
// [from, to), and new ones from the SPEO up to to while the window holds
// fewer than MaxInFlight records, skipping the offsets skip reports
// (control records, aborted transactions: archived at once). It acquires
// at most maxRecords, rounded up to the end of the batch holding the
// last one unless strict (batchEnd gives the end of the batch holding an
// offset; nil: records stand alone). It returns the ranges acquired.
// member is kept on the records: it must not alias a reused buffer.
func (p *Partition) Acquire(now int64, member string, from, to int64, maxRecords int, strict bool, skip func(offset int64) bool, batchEnd func(offset int64) int64) []Acquired {
	var out []Acquired
	n := 0
	last := int64(-1)  // the last offset taken
	limit := int64(-1) // once maxRecords is reached: the end of the batch holding last
	take := func(off int64, r *inflight) {
		last = off
		r.state, r.member = acquired, member
		p.lock(r, now+p.limits.LockDuration)
		if r.count < 1<<15-1 {
			r.count++
		}
		c := int16(r.count)
		if k := len(out) - 1; k >= 0 && out[k].Last == off-1 && out[k].Count == c {
			out[k].Last = off
		} else {
			out = append(out, Acquired{First: off, Last: off, Count: c})
		}
		n++
	}
	full := func(off int64) bool {
		if maxRecords <= 0 || n < maxRecords {
			return false
		}
		if strict || batchEnd == nil {
			return true
		}
		if limit < 0 {
			limit = batchEnd(last)
		}
		return off >= limit
	}
	from = max(from, p.start)
	for off := from; off < min(p.End(), to); off++ {
		r := &p.window[off-p.start]
		if r.state != available {
			continue
		}
		if full(off) {
			return out
		}
		take(off, r)
	}
	for off := p.End(); off < to && len(p.window) < p.limits.MaxInFlight; off++ {
		if off < from {
			// A fetch past the SPEO would leave a hole of records
			// never acquired: never, from reads at FetchOffset.
			break
		}
		if skip != nil && skip(off) {
			p.window = append(p.window, inflight{state: archived})
			continue
		}
		if full(off) {
			break
		}
		p.window = append(p.window, inflight{})
		take(off, &p.window[len(p.window)-1])
	}
	p.advance()
	if p.freed && len(p.window) >= p.limits.MaxInFlight {
		// What was freed is taken unless some records are left available.
		p.freed = slices.ContainsFunc(p.window, func(r inflight) bool { return r.state == available })
	}
	return out
}

// ErrInvalidRecordState: an acknowledgement of records the member does not
// hold (never acquired, acknowledged already, or its lock ended).
var ErrInvalidRecordState = fmt.Errorf("records not acquired by the member: %w", kerr.InvalidRecordState)

// errInvalidAck: malformed acknowledgement batches.
var errInvalidAck = fmt.Errorf("malformed acknowledgement batch: %w", kerr.InvalidRequest)

// Acknowledge applies member's acknowledgement of the records [first,
// last]: one type for them all, or one per record. Kafka checks a batch
// whole before changing anything: a record the member does not hold fails
// the batch (INVALID_RECORD_STATE) and leaves it unchanged.
func (p *Partition) Acknowledge(now int64, member string, first, last int64, types []int8) error {
	if last < first || len(types) == 0 || (len(types) != 1 && int64(len(types)) != last-first+1) {
		return errInvalidAck
	}
	typeAt := func(off int64) int8 {
		if len(types) == 1 {
			return types[0]
		}
		return types[off-first]
	}
	for off := first; off <= last; off++ {
		t := typeAt(off)
		if t < AckGap || t > AckRenew {
			return errInvalidAck
		}
		if off < p.start || off >= p.End() {
			return ErrInvalidRecordState
		}
		r := &p.window[off-p.start]
		if r.state != acquired || r.member != member {
			return ErrInvalidRecordState
		}
	}
	for off := first; off <= last; off++ {
		r := &p.window[off-p.start]
		switch typeAt(off) {
		case AckGap, AckReject:
			r.state, r.member, r.deadline = archived, "", 0
		case AckAccept:
			r.state, r.member, r.deadline = acknowledged, "", 0
		case AckRelease:
			p.giveBack(r)
		case AckRenew:
			p.lock(r, now+p.limits.LockDuration)
		}
	}
	p.advance()
	return nil
}

// ReleaseMember gives back every record member holds (its share session
// ended): available again, or archived past the delivery count limit.
func (p *Partition) ReleaseMember(member string) {
	for i := range p.window {
		if r := &p.window[i]; r.state == acquired && r.member == member {
			p.giveBack(r)
		}
	}
	p.advance()
}

// Span is a range of records in one state, for describing a partition.
type Span struct {
	First, Last int64
	State       string // "available", "acquired", "acknowledged", "archived"
	Count       int    // delivery count
	Member      string // acquired only
}

var stateNames = [...]string{"available", "acquired", "acknowledged", "archived"}

// Spans lists the in-flight records as runs of the same state, count and
// member.
func (p *Partition) Spans() []Span {
	var out []Span
	for i, r := range p.window {
		off := p.start + int64(i)
		if k := len(out) - 1; k >= 0 && out[k].Last == off-1 && out[k].State == stateNames[r.state] && out[k].Count == int(r.count) && out[k].Member == r.member {
			out[k].Last = off
			continue
		}
		out = append(out, Span{First: off, Last: off, State: stateNames[r.state], Count: int(r.count), Member: r.member})
	}
	return out
}

// Lag is how many records from the SPSO up to end (the high watermark)
// are not done yet.
func (p *Partition) Lag(end int64) int64 {
	if end <= p.start {
		return 0
	}
	n := end - p.start
	for _, r := range p.window {
		if r.state == acknowledged || r.state == archived {
			n--
		}
	}
	return n
}

// State is the partition's durable state: its SPSO and the in-flight
// records as runs of one delivery state and count. An acquired record is
// saved as available with its delivery count (its lock does not survive
// the leader).
func (p *Partition) State() (start int64, batches []StateBatch) {
	for i, r := range p.window {
		off := p.start + int64(i)
		st := int8(stateAvailable)
		switch r.state {
		case acknowledged:
			st = stateAcknowledged
		case archived:
			st = stateArchived
		}
		c := int16(r.count)
		if k := len(batches) - 1; k >= 0 && batches[k].Last == off-1 && batches[k].State == st && batches[k].Count == c {
			batches[k].Last = off
			continue
		}
		batches = append(batches, StateBatch{First: off, Last: off, State: st, Count: c})
	}
	return p.start, batches
}

// RestorePartition rebuilds a share partition from its durable state.
// Offsets between start and the last batch that no batch covers are
// available, never delivered; batches below start are ignored, and the
// window is capped at MaxInFlight records past start.
func RestorePartition(start int64, batches []StateBatch, limits Limits) *Partition {
	p := NewPartition(start, limits)
	end := start
	for _, b := range batches {
		end = max(end, b.Last+1)
	}
	end = min(end, start+int64(max(limits.MaxInFlight, 0)))
	if end > start {
		p.window = make([]inflight, end-start)
	}
	for _, b := range batches {
		for off := max(b.First, start); off <= b.Last && off < end; off++ {
			r := &p.window[off-start]
			r.count = uint16(max(b.Count, 0))
			switch b.State {
			case stateAcknowledged:
				r.state = acknowledged
			case stateArchived:
				r.state = archived
			default:
				r.state = available
			}
		}
	}
	p.advance()
	return p
}
