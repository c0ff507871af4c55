package coordrecord

import "encoding/binary"

// The append functions write the fields of a key or a value, each
// appending to dst and returning the extended slice.

// AppendInt8 appends an int8.
func AppendInt8(dst []byte, v int8) []byte { return append(dst, byte(v)) }

// AppendInt16 appends an int16.
func AppendInt16(dst []byte, v int16) []byte { return binary.BigEndian.AppendUint16(dst, uint16(v)) }

// AppendUint16 appends a uint16.
func AppendUint16(dst []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(dst, v) }

// AppendInt32 appends an int32.
func AppendInt32(dst []byte, v int32) []byte { return binary.BigEndian.AppendUint32(dst, uint32(v)) }

// AppendInt64 appends an int64.
func AppendInt64(dst []byte, v int64) []byte { return binary.BigEndian.AppendUint64(dst, uint64(v)) }

// AppendUUID appends a uuid.
func AppendUUID(dst []byte, id [16]byte) []byte { return append(dst, id[:]...) }

// AppendString16 appends a string with an int16 length (a key's).
func AppendString16(dst []byte, s string) []byte {
	dst = AppendInt16(dst, int16(len(s)))
	return append(dst, s...)
}

// AppendCompactString appends a compact string.
func AppendCompactString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s))+1)
	return append(dst, s...)
}

// AppendCompactNullableString appends a compact nullable string, "" as
// null.
func AppendCompactNullableString(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, 0)
	}
	return AppendCompactString(dst, s)
}

// AppendCompactBytes appends compact bytes.
func AppendCompactBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b))+1)
	return append(dst, b...)
}

// AppendArrayLen appends the length of a compact array of n elements,
// which the caller appends next.
func AppendArrayLen(dst []byte, n int) []byte { return binary.AppendUvarint(dst, uint64(n)+1) }

// AppendCompactStrings appends a compact array of compact strings.
func AppendCompactStrings(dst []byte, ss []string) []byte {
	dst = AppendArrayLen(dst, len(ss))
	for _, s := range ss {
		dst = AppendCompactString(dst, s)
	}
	return dst
}

// AppendInt32s appends a compact array of int32s.
func AppendInt32s(dst []byte, vs []int32) []byte {
	dst = AppendArrayLen(dst, len(vs))
	for _, v := range vs {
		dst = AppendInt32(dst, v)
	}
	return dst
}

// AppendInt16s appends a compact array of int16s.
func AppendInt16s(dst []byte, vs []int16) []byte {
	dst = AppendArrayLen(dst, len(vs))
	for _, v := range vs {
		dst = AppendInt16(dst, v)
	}
	return dst
}

// AppendNoTags appends an empty tagged fields section: the end of a
// struct with every tagged field at its default.
func AppendNoTags(dst []byte) []byte { return append(dst, 0) }

// AppendTagCount appends the number of tagged fields that follow, each
// appended with AppendTag or an AppendTagged function, in tag order.
func AppendTagCount(dst []byte, n int) []byte { return binary.AppendUvarint(dst, uint64(n)) }

// AppendTag appends a tagged field: its tag, its size and field.
func AppendTag(dst []byte, tag uint64, field []byte) []byte {
	dst = binary.AppendUvarint(dst, tag)
	dst = binary.AppendUvarint(dst, uint64(len(field)))
	return append(dst, field...)
}

// AppendTaggedInt32 appends a tagged int32 field.
func AppendTaggedInt32(dst []byte, tag uint64, v int32) []byte {
	dst = binary.AppendUvarint(dst, tag)
	return AppendInt32(append(dst, 4), v)
}

// AppendTaggedInt64 appends a tagged int64 field.
func AppendTaggedInt64(dst []byte, tag uint64, v int64) []byte {
	dst = binary.AppendUvarint(dst, tag)
	return AppendInt64(append(dst, 8), v)
}

// AppendTaggedInt32s appends a tagged field holding a compact array of
// int32s.
func AppendTaggedInt32s(dst []byte, tag uint64, vs []int32) []byte {
	dst = binary.AppendUvarint(dst, tag)
	n := uint64(len(vs)) + 1
	dst = binary.AppendUvarint(dst, uint64(uvarintLen(n))+4*uint64(len(vs)))
	return AppendInt32s(dst, vs)
}

// uvarintLen is the size of v as a uvarint.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
