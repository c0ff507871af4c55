// Package coordrecord reads and writes the bytes of Kafka's coordinator
// records: the records the group coordinator keeps in __consumer_offsets
// and the share coordinator in __share_group_state, laid out by the
// coordinator-key and coordinator-value JSON schemas of Apache Kafka
// (group-coordinator and share-coordinator,
// src/main/resources/common/message), so that Kafka and its tools read
// what kzero writes and kzero reads what Kafka wrote.
//
// A record's key is its record type (int16, the schema's apiKey), then the
// key's fields at key version 0, which is not flexible (strings are int16
// length prefixed). A value is its version (int16), then its fields; the
// values of the KIP-848, KIP-932 and KIP-1071 groups and of share state are
// flexible from version 0:
//
//	string            uvarint length+1, then the bytes (0: null)
//	array             uvarint count+1, then the elements (0: null)
//	nullable struct   int8 -1 (null) or 1, then the struct
//	struct            its fields, then a tagged fields section
//	tagged fields     uvarint count, then per field uvarint tag, uvarint
//	                  size and size bytes; tags ascending. A field at its
//	                  schema default is not written.
//
// The package knows the encoding, not the records: each coordinator
// spells its records' fields with the append functions and a Reader.
// Reader never panics on input bytes: it checks every length against the
// bytes left (so no length can make it allocate more than the input
// holds) and keeps the first error, which the caller checks once at the
// end, as franz-go's kbin reader does.
package coordrecord
