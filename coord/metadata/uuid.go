package metadata

import (
	"crypto/rand"
	"encoding/base64"
)

// Kafka's UUIDs (topic ids, the cluster id) are random version 4 UUIDs,
// printed as 22 characters of unpadded URL-safe base64. Kafka never hands
// out the all-zero UUID (it means "no id" on the wire), nor the UUID whose
// low bits are 1 (the metadata topic's id), nor one whose text starts with
// '-' (it would read as a command-line flag); neither does NewUUID.

// NewUUID returns a random version 4 UUID as Kafka would make one.
func NewUUID() [16]byte {
	for {
		var id [16]byte
		rand.Read(id[:])
		id[6] = id[6]&0x0f | 0x40 // version 4
		id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
		if id == ([16]byte{}) || id == metadataTopicID {
			continue
		}
		if TopicIDString(id)[0] == '-' {
			continue
		}
		return id
	}
}

// metadataTopicID is the reserved id of Kafka's __cluster_metadata topic.
var metadataTopicID = [16]byte{15: 1}

// TopicIDString prints a UUID the way Kafka does.
func TopicIDString(id [16]byte) string {
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// ParseTopicID parses Kafka's text form of a UUID.
func ParseTopicID(s string) ([16]byte, bool) {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, false
	}
	copy(id[:], b)
	return id, true
}
