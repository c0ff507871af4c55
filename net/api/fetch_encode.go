package api

import (
	"encoding/binary"

	"kzero/log"
	"kzero/net/wire"
)

// The fetch response is encoded by hand, not with kmsg, because each
// partition's records are a file range sent with sendfile in the middle
// of the message: the encoder writes the bytes up to a partition's records
// length, cuts the range in, and goes on.

type fetchTopic struct {
	name  string
	id    [16]byte
	parts []fetchPartition
}

type fetchPartition struct {
	partition int32
	err       int16
	hw        int64
	lso       int64
	logStart  int64
	committed bool // read_committed: AbortedTransactions is an array, not null
	aborted   []log.AbortedTxn
	records   log.FileRange
	session   *sessionPartition // the session's state of it, nil when sessionless
	// readFrom is the replica the consumer should fetch from instead
	// (KIP-392), when hasReadFrom.
	readFrom    int32
	hasReadFrom bool
}

// enc appends Kafka primitives; flexible selects compact encodings.
type enc struct {
	b        []byte
	flexible bool
}

func (e *enc) i16(v int16) { e.b = binary.BigEndian.AppendUint16(e.b, uint16(v)) }
func (e *enc) i32(v int32) { e.b = binary.BigEndian.AppendUint32(e.b, uint32(v)) }
func (e *enc) i64(v int64) { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)) }
func (e *enc) uvarint(v uint64) {
	e.b = binary.AppendUvarint(e.b, v)
}

// arrayLen writes an array length; n < 0 is a null array.
func (e *enc) arrayLen(n int) {
	if e.flexible {
		e.uvarint(uint64(n + 1))
		return
	}
	e.i32(int32(n))
}

func (e *enc) str(s string) {
	if e.flexible {
		e.uvarint(uint64(len(s) + 1))
	} else {
		e.i16(int16(len(s)))
	}
	e.b = append(e.b, s...)
}

func (e *enc) noTags() {
	if e.flexible {
		e.b = append(e.b, 0)
	}
}

// appendFetchResponse writes a FetchResponse body of version v to resp,
// handing each partition's file range to it.
func appendFetchResponse(resp *wire.Response, v int16, throttleMs int32, code int16, sessionID int32, topics []fetchTopic) {
	e := enc{b: resp.B, flexible: v >= 12}
	e.i32(throttleMs)
	if v >= 7 {
		e.i16(code)
		e.i32(sessionID)
	}
	e.arrayLen(len(topics))
	for i := range topics {
		t := &topics[i]
		if v >= 13 {
			e.b = append(e.b, t.id[:]...)
		} else {
			e.str(t.name)
		}
		e.arrayLen(len(t.parts))
		for j := range t.parts {
			p := &t.parts[j]
			e.i32(p.partition)
			e.i16(p.err)
			e.i64(p.hw)
			e.i64(p.lso)
			if v >= 5 {
				e.i64(p.logStart)
			}
			if p.committed {
				e.arrayLen(len(p.aborted))
				for _, a := range p.aborted {
					e.i64(a.ProducerID)
					e.i64(a.FirstOffset)
					e.noTags()
				}
			} else {
				e.arrayLen(-1)
			}
			if v >= 11 {
				if p.hasReadFrom {
					e.i32(p.readFrom) // preferred_read_replica
				} else {
					e.i32(-1)
				}
			}
			n := p.records.Len
			if p.records.Empty() {
				n = 0
			}
			if e.flexible {
				e.uvarint(uint64(n + 1))
			} else {
				e.i32(int32(n))
			}
			if n > 0 {
				resp.B = e.b
				resp.AddFile(wire.FileRange{File: p.records.Segment, Pos: p.records.Pos, Len: n})
				p.records = log.FileRange{} // the response owns the reference now
				e.b = resp.B
			}
			e.noTags()
		}
		e.noTags()
	}
	e.noTags()
	resp.B = e.b
}
