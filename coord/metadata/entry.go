package metadata

import (
	"fmt"
)

// A raft entry's data is one proposal: groups of records, each group applied
// all or nothing (one topic's TopicRecord, PartitionRecords and
// ConfigRecords, say), each with its own outcome. The proposer's identity
// lets the proposing controller match the applied entry to its waiting
// caller; every other voter ignores it.
//
//	+---------+----------+---------+-----+--------+----------------------+
//	| version | proposer | session | seq | groups | group...             |
//	|  byte   | varint   | uvarint | uv. | uv.    |                      |
//	+---------+----------+---------+-----+--------+----------------------+
//	group:  record count (uvarint), then each record as a length (uvarint)
//	        and the record's bytes (record.go)

const entryVersion = 1

// proposal is a decoded entry.
type proposal struct {
	proposer int32  // node id of the proposing controller
	session  uint64 // random per controller process
	seq      uint64 // per session
	groups   [][]Record
}

func appendProposal(b []byte, p *proposal) []byte {
	b = append(b, entryVersion)
	b = appendVarint(b, int64(p.proposer))
	b = appendUvarint(b, p.session)
	b = appendUvarint(b, p.seq)
	b = appendUvarint(b, uint64(len(p.groups)))
	for _, g := range p.groups {
		b = appendRecords(b, g)
	}
	return b
}

// appendRecords appends a count and the length-prefixed records.
func appendRecords(b []byte, recs []Record) []byte {
	b = appendUvarint(b, uint64(len(recs)))
	var scratch []byte
	for _, r := range recs {
		scratch = AppendRecord(scratch[:0], r)
		b = appendUvarint(b, uint64(len(scratch)))
		b = append(b, scratch...)
	}
	return b
}

func (r *reader) records() ([]Record, error) {
	n := r.count()
	if r.err != nil {
		return nil, r.err
	}
	recs := make([]Record, 0, n)
	for range n {
		b := r.bytes()
		if r.err != nil {
			return nil, r.err
		}
		rec, err := DecodeRecord(b)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

func decodeProposal(b []byte) (*proposal, error) {
	if len(b) == 0 {
		return nil, errTruncated
	}
	if b[0] != entryVersion {
		return nil, fmt.Errorf("%w: entry version %d", ErrUnknownRecord, b[0])
	}
	r := &reader{b: b[1:]}
	p := &proposal{proposer: r.int32(), session: r.uvarint(), seq: r.uvarint()}
	n := r.count()
	if r.err != nil {
		return nil, r.err
	}
	p.groups = make([][]Record, 0, n)
	for range n {
		g, err := r.records()
		if err != nil {
			return nil, err
		}
		p.groups = append(p.groups, g)
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("metadata entry: %d trailing bytes", len(r.b))
	}
	return p, nil
}
