package api

import (
	"kzero/coord/share"
	"kzero/log"
	"kzero/net/wire"
)

// The ShareFetch response is encoded by hand, as the Fetch response
// (fetch_encode.go), so each partition's records go out as a file range
// with sendfile. Every version is flexible.

type shareFetchTopic struct {
	id    [16]byte
	parts []shareFetchPartition
}

type shareFetchPartition struct {
	partition   int32
	err         int16
	ackErr      int16
	leaderID    int32
	leaderEpoch int32
	records     log.FileRange
	acquired    []share.Acquired
}

// appendShareFetchResponse writes a ShareFetchResponse body (v1+) to
// resp, handing each partition's file range to it.
func appendShareFetchResponse(resp *wire.Response, code int16, msg string, lockMs int32, topics []shareFetchTopic) {
	e := enc{b: resp.B, flexible: true}
	e.i32(0) // throttle
	e.i16(code)
	e.nullableStr(msg)
	e.i32(lockMs)
	e.arrayLen(len(topics))
	for i := range topics {
		t := &topics[i]
		e.b = append(e.b, t.id[:]...)
		e.arrayLen(len(t.parts))
		for j := range t.parts {
			p := &t.parts[j]
			e.i32(p.partition)
			e.i16(p.err)
			e.nullableStr("")
			e.i16(p.ackErr)
			e.nullableStr("")
			e.i32(p.leaderID)
			e.i32(p.leaderEpoch)
			e.noTags()
			n := p.records.Len
			if p.records.Empty() {
				n = 0
			}
			e.uvarint(uint64(n + 1))
			if n > 0 {
				resp.B = e.b
				resp.AddFile(wire.FileRange{File: p.records.Segment, Pos: p.records.Pos, Len: n})
				p.records = log.FileRange{} // the response owns the reference now
				e.b = resp.B
			}
			e.arrayLen(len(p.acquired))
			for _, a := range p.acquired {
				e.i64(a.First)
				e.i64(a.Last)
				e.i16(a.Count)
				e.noTags()
			}
			e.noTags()
		}
		e.noTags()
	}
	e.arrayLen(0) // node endpoints
	e.noTags()
	resp.B = e.b
}

// nullableStr writes "" as null (flexible encodings only).
func (e *enc) nullableStr(s string) {
	if s == "" {
		e.uvarint(0)
		return
	}
	e.str(s)
}
