package shards

import "unicode/utf16"

// PartitionFor is the partition of a key (a group, a transactional id) in
// a coordinator's internal topic, as Kafka computes it:
// Utils.abs(key.hashCode()) % partitions.
func PartitionFor(key string, partitions int32) int32 {
	if partitions <= 0 {
		return 0
	}
	return int32(javaHashCode(key)&0x7fffffff) % partitions
}

// javaHashCode is Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over the string's UTF-16 code units, in int32 arithmetic. Invalid UTF-8
// counts as U+FFFD, as Kafka's decoder reads it.
func javaHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}
