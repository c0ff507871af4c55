package api

// The two hot requests, Produce and Fetch, are decoded into pooled structs
// (produceOp, fetchOp) by the decoders here, which reuse every slice of
// the struct: kmsg's decoder makes each topic's partition slice anew.
// They read the shapes current clients send (no tagged fields, canonical
// lengths) and give up on anything else, returning false: the caller then
// decodes with kmsg, which also words the error of a malformed request.
// What they accept they decode exactly as kmsg does (FuzzProduceDecode
// and FuzzFetchDecode check that against kmsg on arbitrary bytes). Strings
// and record bytes alias the request buffer, as kmsg's UnsafeReadFrom.

import (
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// reqReader reads Kafka primitives; ok turns false at the first thing the
// fast decoders do not take, and every later read is a no-op.
type reqReader struct {
	b        []byte
	flexible bool
	ok       bool
}

func (r *reqReader) take(n int) []byte {
	if !r.ok || n < 0 || len(r.b) < n {
		r.ok = false
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *reqReader) i8() int8 {
	if b := r.take(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (r *reqReader) i16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reqReader) i32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reqReader) i64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reqReader) uuid() (id [16]byte) {
	if b := r.take(16); b != nil {
		copy(id[:], b)
	}
	return id
}

// uvarint reads a canonical unsigned varint below 2^31.
func (r *reqReader) uvarint() int {
	if !r.ok {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n > 5 || v >= 1<<31 || n > 1 && r.b[n-1] == 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// length reads a length prefix: an int16 or int32 (wide) before flexible
// versions, an unsigned varint of length+1 after; -1 is null.
func (r *reqReader) length(wide bool) int {
	switch {
	case r.flexible:
		return r.uvarint() - 1
	case wide:
		return int(r.i32())
	default:
		return int(r.i16())
	}
}

// str reads a non-null string, aliasing the buffer.
func (r *reqReader) str() string {
	b := r.take(r.length(false))
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// nullableStr reads a nullable string into *dst, pointing at into (no
// allocation) when it is not null.
func (r *reqReader) nullableStr(dst **string, into *string) {
	n := r.length(false)
	if n < 0 {
		*dst = nil
		return
	}
	b := r.take(n)
	*into = ""
	if len(b) > 0 {
		*into = unsafe.String(&b[0], len(b))
	}
	*dst = into
}

// nullableBytes reads nullable bytes, aliasing the buffer.
func (r *reqReader) nullableBytes() []byte {
	n := r.length(true)
	if n < 0 {
		return nil
	}
	return r.take(n)
}

// arrayLen reads an array length; a null array is empty, as kmsg reads
// it. max is how many elements the rest of the buffer can hold at the
// least sizes kmsg checks, which it refuses beyond.
func (r *reqReader) arrayLen(minSize int) int {
	var n int
	if r.flexible {
		n = r.uvarint() - 1
	} else {
		n = int(r.i32())
	}
	if !r.ok || n > len(r.b) || n*minSize > len(r.b) {
		r.ok = false
		return 0
	}
	return max(n, 0)
}

// noTags reads an empty tagged-field section of a flexible version; any
// tag sends the request to kmsg.
func (r *reqReader) noTags() {
	if r.flexible {
		if b := r.take(1); b != nil && b[0] != 0 {
			r.ok = false
		}
	}
}

// readProduceRequest decodes a Produce request body of version into r,
// reusing r's slices and txnID for the transactional id. False: decode it
// with kmsg.
func readProduceRequest(body []byte, version int16, r *kmsg.ProduceRequest, txnID *string) bool {
	if version < 3 || version > 13 {
		return false
	}
	rd := reqReader{b: body, flexible: version >= 9, ok: true}
	topics := r.Topics
	*r = kmsg.NewProduceRequest()
	r.Version = version
	rd.nullableStr(&r.TransactionID, txnID)
	r.Acks = rd.i16()
	r.TimeoutMillis = rd.i32()
	topics = grow(topics, rd.arrayLen(minTopicSize(version)))
	for i := range topics {
		t := &topics[i]
		parts := t.Partitions
		*t = kmsg.NewProduceRequestTopic()
		rd.topic(version, &t.Topic, &t.TopicID)
		parts = grow(parts, rd.arrayLen(6))
		for j := range parts {
			p := &parts[j]
			*p = kmsg.NewProduceRequestTopicPartition()
			p.Partition = rd.i32()
			p.Records = rd.nullableBytes()
			rd.noTags()
		}
		t.Partitions = parts
		rd.noTags()
	}
	r.Topics = topics
	rd.noTags()
	return rd.ok
}

// readFetchRequest decodes a Fetch request body of version into r,
// reusing r's slices. False: decode it with kmsg (which a follower's
// ReplicaState, a tagged field, always needs).
func readFetchRequest(body []byte, version int16, r *kmsg.FetchRequest) bool {
	if version < 4 || version > 18 {
		return false
	}
	rd := reqReader{b: body, flexible: version >= 12, ok: true}
	topics, forgotten := r.Topics, r.ForgottenTopics
	*r = kmsg.NewFetchRequest()
	r.Version = version
	if version <= 14 {
		r.ReplicaID = rd.i32()
	}
	r.MaxWaitMillis = rd.i32()
	r.MinBytes = rd.i32()
	r.MaxBytes = rd.i32()
	r.IsolationLevel = rd.i8()
	if version >= 7 {
		r.SessionID = rd.i32()
		r.SessionEpoch = rd.i32()
	}
	minTopic := minTopicSize(version)
	minPart := 16
	if version >= 12 {
		minPart = 32
	}
	topics = grow(topics, rd.arrayLen(minTopic))
	for i := range topics {
		t := &topics[i]
		parts := t.Partitions
		*t = kmsg.NewFetchRequestTopic()
		rd.topic(version, &t.Topic, &t.TopicID)
		parts = grow(parts, rd.arrayLen(minPart))
		for j := range parts {
			p := &parts[j]
			*p = kmsg.NewFetchRequestTopicPartition()
			p.Partition = rd.i32()
			if version >= 9 {
				p.CurrentLeaderEpoch = rd.i32()
			}
			p.FetchOffset = rd.i64()
			if version >= 12 {
				p.LastFetchedEpoch = rd.i32()
			}
			if version >= 5 {
				p.LogStartOffset = rd.i64()
			}
			p.PartitionMaxBytes = rd.i32()
			rd.noTags()
		}
		t.Partitions = parts
		rd.noTags()
	}
	r.Topics = topics
	if version >= 7 {
		forgotten = grow(forgotten, rd.arrayLen(minTopic))
		for i := range forgotten {
			ft := &forgotten[i]
			parts := ft.Partitions
			*ft = kmsg.NewFetchRequestForgottenTopic()
			rd.topic(version, &ft.Topic, &ft.TopicID)
			parts = grow(parts, rd.arrayLen(4))
			for j := range parts {
				parts[j] = rd.i32()
			}
			ft.Partitions = parts
			rd.noTags()
		}
		r.ForgottenTopics = forgotten
	}
	if version >= 11 {
		r.Rack = rd.str()
	}
	rd.noTags()
	return rd.ok
}

// topic reads a topic's name, or its id from v13 (KIP-516) in both
// Produce and Fetch.
func (r *reqReader) topic(version int16, name *string, id *[16]byte) {
	if version >= 13 {
		*id = r.uuid()
	} else {
		*name = r.str()
	}
}

// minTopicSize is the least size of a topic entry kmsg checks an array
// length against: a name's length, or an id from v13.
func minTopicSize(version int16) int {
	if version >= 13 {
		return 18
	}
	return 2
}

// grow returns s with length n, reusing its capacity; the elements past
// the old length keep what they held (the decoders reset each).
func grow[T any](s []T, n int) []T {
	return slices.Grow(s[:0], n)[:n]
}
