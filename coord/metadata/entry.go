package metadata

import (
	"fmt"
)

// A raft entry's data is one Proposal: groups of records, each group applied
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

// Proposal is the content of one raft entry.
type Proposal struct {
	Proposer int32  // node id of the proposing controller
	Session  uint64 // random per controller process
	Seq      uint64 // per session
	Groups   [][]Record
}

// AppendProposal appends p's encoding, a raft entry's data, to b.
func AppendProposal(b []byte, p *Proposal) []byte {
	b = append(b, entryVersion)
	b = appendVarint(b, int64(p.Proposer))
	b = appendUvarint(b, p.Session)
	b = appendUvarint(b, p.Seq)
	b = appendUvarint(b, uint64(len(p.Groups)))
	for _, g := range p.Groups {
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

// DecodeProposal decodes a raft entry's data. Nothing aliases b.
func DecodeProposal(b []byte) (*Proposal, error) {
	if len(b) == 0 {
		return nil, errTruncated
	}
	if b[0] != entryVersion {
		return nil, fmt.Errorf("%w: entry version %d", ErrUnknownRecord, b[0])
	}
	r := &reader{b: b[1:]}
	p := &Proposal{Proposer: r.int32(), Session: r.uvarint(), Seq: r.uvarint()}
	n := r.count()
	if r.err != nil {
		return nil, r.err
	}
	p.Groups = make([][]Record, 0, n)
	for range n {
		g, err := r.records()
		if err != nil {
			return nil, err
		}
		p.Groups = append(p.Groups, g)
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("metadata entry: %d trailing bytes", len(r.b))
	}
	return p, nil
}
