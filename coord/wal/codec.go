package wal

import (
	"encoding/binary"
	"errors"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Payload layouts (all integers unsigned varints unless noted):
//
//	entry:      index, term, type (1 byte), data (the rest)
//	hard state: term, vote, commit
//	snap meta:  index, term, conf state
//	conf state: voters, learners, voters outgoing, learners next (each a
//	            count then the ids), auto leave (1 byte, 0 or 1)

var errShort = errors.New("payload too short")

func appendEntry(b []byte, e *pb.Entry) []byte {
	b = binary.AppendUvarint(b, e.GetIndex())
	b = binary.AppendUvarint(b, e.GetTerm())
	b = append(b, byte(e.GetType()))
	return append(b, e.GetData()...)
}

func appendHardState(b []byte, hs *pb.HardState) []byte {
	b = binary.AppendUvarint(b, hs.GetTerm())
	b = binary.AppendUvarint(b, hs.GetVote())
	return binary.AppendUvarint(b, hs.GetCommit())
}

func appendSnapMeta(b []byte, m *pb.SnapshotMetadata) []byte {
	b = binary.AppendUvarint(b, m.GetIndex())
	b = binary.AppendUvarint(b, m.GetTerm())
	cs := m.GetConfState()
	for _, ids := range [][]uint64{cs.GetVoters(), cs.GetLearners(), cs.GetVotersOutgoing(), cs.GetLearnersNext()} {
		b = binary.AppendUvarint(b, uint64(len(ids)))
		for _, id := range ids {
			b = binary.AppendUvarint(b, id)
		}
	}
	if cs.GetAutoLeave() {
		return append(b, 1)
	}
	return append(b, 0)
}

// payloadReader decodes a payload with a sticky error, checked once at the
// end.
type payloadReader struct {
	b   []byte
	err error
}

func (r *payloadReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *payloadReader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = errShort
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *payloadReader) ids() []uint64 {
	n := r.uvarint()
	if n > uint64(len(r.b)) { // every id takes at least one byte
		r.err = errShort
		return nil
	}
	if n == 0 {
		return nil
	}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = r.uvarint()
	}
	return ids
}

// decodeEntry decodes an entry payload. The entry's Data aliases nothing:
// it is copied, since frame buffers are reused.
func decodeEntry(p []byte) (*pb.Entry, error) {
	r := payloadReader{b: p}
	index, term := r.uvarint(), r.uvarint()
	typ := pb.EntryType(r.byte())
	if r.err != nil {
		return nil, r.err
	}
	switch typ {
	case pb.EntryNormal, pb.EntryConfChange, pb.EntryConfChangeV2:
	default:
		return nil, errors.New("unknown entry type")
	}
	e := &pb.Entry{Index: new(index), Term: new(term), Type: typ.Enum()}
	if len(r.b) > 0 {
		e.Data = append([]byte(nil), r.b...)
	}
	return e, nil
}

func decodeHardState(p []byte) (*pb.HardState, error) {
	r := payloadReader{b: p}
	term, vote, commit := r.uvarint(), r.uvarint(), r.uvarint()
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, errors.New("trailing bytes after hard state")
	}
	return &pb.HardState{Term: new(term), Vote: new(vote), Commit: new(commit)}, nil
}

func decodeSnapMeta(p []byte) (*pb.SnapshotMetadata, error) {
	r := payloadReader{b: p}
	index, term := r.uvarint(), r.uvarint()
	cs := &pb.ConfState{}
	cs.Voters = r.ids()
	cs.Learners = r.ids()
	cs.VotersOutgoing = r.ids()
	cs.LearnersNext = r.ids()
	autoLeave := r.byte()
	if r.err != nil {
		return nil, r.err
	}
	if autoLeave > 1 || len(r.b) != 0 {
		return nil, errors.New("bad snapshot metadata")
	}
	cs.AutoLeave = new(autoLeave == 1)
	return &pb.SnapshotMetadata{Index: new(index), Term: new(term), ConfState: cs}, nil
}
