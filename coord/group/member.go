package group

import (
	"bytes"
	"strings"
)

// Protocol is one assignment protocol a member supports (in its order of
// preference) with the member's metadata for it.
type Protocol struct {
	Name     string
	Metadata []byte
}

// member is one member of a classic group. Its byte slices are owned by
// the group and never modified in place, so responses may share them.
type member struct {
	id, instanceID       string
	clientID, clientHost string
	rebalanceTimeout     int32 // ms
	sessionTimeout       int32 // ms
	protocolType         string
	protocols            []Protocol
	assignment           []byte

	joinDone func(JoinResult) // set while a JoinGroup waits
	syncDone func(SyncResult) // set while a SyncGroup waits
	// isNew: joined and not yet part of a generation; such a member
	// expires newMemberJoinTimeout after joining even while it waits.
	isNew bool
	// deadline is when the member expires unless it heartbeats (ms);
	// 0: no expiry scheduled (it is waiting on the group).
	deadline int64
}

// metadataFor is the member's metadata for protocol.
func (m *member) metadataFor(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// matches reports whether ps is exactly the member's protocol list.
func (m *member) matches(ps []Protocol) bool {
	if len(ps) != len(m.protocols) {
		return false
	}
	for i, p := range ps {
		if p.Name != m.protocols[i].Name || !bytes.Equal(p.Metadata, m.protocols[i].Metadata) {
			return false
		}
	}
	return true
}

// cloneProtocols copies ps: requests alias their network buffer.
func cloneProtocols(ps []Protocol) []Protocol {
	out := make([]Protocol, len(ps))
	for i, p := range ps {
		out[i] = Protocol{Name: strings.Clone(p.Name), Metadata: bytes.Clone(p.Metadata)}
	}
	return out
}
