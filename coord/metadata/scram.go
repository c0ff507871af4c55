package metadata

import "bytes"

// ScramCredential sets a user's SCRAM credential for one mechanism
// (Kafka's UserScramCredentialRecord): the salt, the stored key and the
// server key derived from the salted password, never the password.
// Mechanism is Kafka's id: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512.
type ScramCredential struct {
	User       string
	Mechanism  int8
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// RemoveScramCredential deletes a user's credential for one mechanism
// (Kafka's RemoveUserScramCredentialRecord).
type RemoveScramCredential struct {
	User      string
	Mechanism int8
}

// ScramKey names a credential in the Image.
type ScramKey struct {
	User      string
	Mechanism int8
}

func (*ScramCredential) Type() RecordType       { return TypeScramCredential }
func (*RemoveScramCredential) Type() RecordType { return TypeRemoveScramCredential }

func (r *ScramCredential) appendFields(b []byte) []byte {
	b = appendString(b, r.User)
	b = appendVarint(b, int64(r.Mechanism))
	b = appendBytes(b, r.Salt)
	b = appendBytes(b, r.StoredKey)
	b = appendBytes(b, r.ServerKey)
	return appendVarint(b, int64(r.Iterations))
}

func (r *RemoveScramCredential) appendFields(b []byte) []byte {
	b = appendString(b, r.User)
	return appendVarint(b, int64(r.Mechanism))
}

func decodeScramCredential(r *reader) *ScramCredential {
	return &ScramCredential{User: r.string(), Mechanism: r.int8(), Salt: bytes.Clone(r.bytes()),
		StoredKey: bytes.Clone(r.bytes()), ServerKey: bytes.Clone(r.bytes()), Iterations: r.int32()}
}

// validScramMechanism reports whether m is a mechanism id Kafka knows.
func validScramMechanism(m int8) bool { return m == 1 || m == 2 }

// ScramCredential returns a user's credential for a mechanism.
func (img *Image) ScramCredential(user string, mechanism int8) (ScramCredential, bool) {
	c, ok := img.scram[ScramKey{user, mechanism}]
	return c, ok
}

// ScramCredentials returns every stored credential. Read only.
func (img *Image) ScramCredentials() map[ScramKey]ScramCredential { return img.scram }
