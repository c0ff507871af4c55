package coordrecord

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func hx(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err) // a typo in a test table
	}
	return b
}

// Each field type appends the bytes of Kafka's encoding.
func TestAppendGolden(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, c := range []struct {
		name string
		got  []byte
		want string
	}{
		{"int8", AppendInt8(nil, -1), "ff"},
		{"int16", AppendInt16(nil, -2), "fffe"},
		{"uint16", AppendUint16(nil, 65535), "ffff"},
		{"int32", AppendInt32(nil, 0x01020304), "01020304"},
		{"int64", AppendInt64(nil, -5), "fffffffffffffffb"},
		{"uuid", AppendUUID(nil, [16]byte{1, 15: 2}), "01000000000000000000000000000002"},
		{"string", AppendString16(nil, "ab"), "0002 6162"},
		{"compact string", AppendCompactString(nil, "ab"), "03 6162"},
		{"empty compact string", AppendCompactString(nil, ""), "01"},
		{"long compact string", AppendCompactString(nil, long)[:2], "c901"}, // 201 as a uvarint
		{"null string", AppendCompactNullableString(nil, ""), "00"},
		{"nullable string", AppendCompactNullableString(nil, "a"), "02 61"},
		{"compact bytes", AppendCompactBytes(nil, []byte{0, 1}), "03 0001"},
		{"array length", AppendArrayLen(nil, 2), "03"},
		{"strings", AppendCompactStrings(nil, []string{"a", ""}), "03 0261 01"},
		{"int32s", AppendInt32s(nil, []int32{1, -1}), "03 00000001 ffffffff"},
		{"int16s", AppendInt16s(nil, []int16{1}), "02 0001"},
		{"no tags", AppendNoTags(nil), "00"},
		{"tag count", AppendTagCount(nil, 2), "02"},
		{"tag", AppendTag(nil, 3, []byte{9}), "03 01 09"},
		{"tagged int32", AppendTaggedInt32(nil, 0, -1), "00 04 ffffffff"},
		{"tagged int64", AppendTaggedInt64(nil, 1, 2), "01 08 0000000000000002"},
		{"tagged int32s", AppendTaggedInt32s(nil, 0, []int32{7, 8}), "00 09 03 00000007 00000008"},
	} {
		if want := hx(c.want); !bytes.Equal(c.got, want) {
			t.Errorf("%s: %x, want %x", c.name, c.got, want)
		}
	}
}

// What the append functions write, a Reader reads back.
func TestReaderReadsWhatIsAppended(t *testing.T) {
	var b []byte
	b = AppendInt8(b, -3)
	b = AppendInt16(b, -4)
	b = AppendUint16(b, 65000)
	b = AppendInt32(b, -5)
	b = AppendInt64(b, -6)
	b = AppendUUID(b, [16]byte{7})
	b = AppendString16(b, "key")
	b = AppendCompactString(b, "s")
	b = AppendCompactNullableString(b, "")
	b = AppendCompactNullableString(b, "n")
	b = AppendCompactBytes(b, []byte{1, 2})
	b = AppendCompactStrings(b, []string{"a", "b"})
	b = AppendInt32s(b, []int32{1, 2})
	b = AppendInt16s(b, []int16{3})
	b = AppendTagCount(b, 2)
	b = AppendTaggedInt32(b, 0, 9)
	b = AppendTaggedInt32s(b, 1, []int32{4})

	r := NewReader(b)
	var tags []string
	got := []any{r.Int8(), r.Int16(), r.Uint16(), r.Int32(), r.Int64(), r.UUID(), r.String16(), r.CompactString(),
		r.CompactNullableString(), r.CompactNullableString(), r.CompactBytes(), r.CompactStrings(), r.Int32s(), r.Int16s()}
	r.Tags(func(tag uint64, field []byte) {
		fr := NewReader(field)
		if tag == 0 {
			tags = append(tags, string(rune('0'+fr.Int32())))
		} else {
			tags = append(tags, string(rune('0'+fr.Int32s()[0])))
		}
	})
	if r.Err() != nil || r.Len() != 0 {
		t.Fatalf("read %v with %d bytes left: %v", got, r.Len(), r.Err())
	}
	want := []any{int8(-3), int16(-4), uint16(65000), int32(-5), int64(-6), [16]byte{7}, "key", "s", "", "n",
		[]byte{1, 2}, []string{"a", "b"}, []int32{1, 2}, []int16{3}}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("field %d: read %v, want %v", i, got[i], want[i])
		}
	}
	if strings.Join(tags, ",") != "9,4" {
		t.Errorf("tagged fields %v, want 9,4", tags)
	}
}

// Malformed input is an error wrapping ErrMalformed, never a panic nor an
// allocation larger than the input; the first error sticks.
func TestReaderMalformed(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		read func(r *Reader)
	}{
		{"short int32", "000000", func(r *Reader) { r.Int32() }},
		{"null key string", "ffff", func(r *Reader) { r.String16() }},
		{"key string beyond the input", "0005 61", func(r *Reader) { r.String16() }},
		{"null compact string", "00", func(r *Reader) { r.CompactString() }},
		{"compact string beyond the input", "05 61", func(r *Reader) { r.CompactString() }},
		{"array beyond the input", "ffffffff0f", func(r *Reader) { r.ArrayLen() }},
		{"int32s beyond the input", "03 00000001", func(r *Reader) { r.Int32s() }},
		{"int16s beyond the input", "03 0001", func(r *Reader) { r.Int16s() }},
		{"bad varint", "ffffffffffffffffffff01", func(r *Reader) { r.Uvarint() }},
		{"too many tagged fields", "05 00 00", func(r *Reader) { r.Tags(nil) }},
		{"tagged field beyond the input", "01 00 05 00", func(r *Reader) { r.Tags(nil) }},
		{"value version", "0001", func(r *Reader) { *r, _ = NewValueReader(hx("0001"), 0) }},
		{"short value", "00", func(r *Reader) { *r, _ = NewValueReader(hx("00"), 0) }},
	} {
		r := NewReader(hx(c.in))
		c.read(&r)
		if err := r.Err(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: error %v, want one wrapping ErrMalformed", c.name, err)
		}
		first := r.Err()
		if r.Int32() != 0 || r.CompactString() != "" || r.Err() != first {
			t.Errorf("%s: a read after an error read something or replaced the error", c.name)
		}
	}
	r := NewReader(nil)
	r.Fail(errors.New("checked"))
	r.Fail(errors.New("later"))
	if err := r.Err(); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "checked") {
		t.Errorf("Fail: %v", err)
	}
}

// FuzzReader reads arbitrary bytes as the fields the first byte picks:
// never a panic, never a byte read twice, and a compact string is the
// bytes after its length.
func FuzzReader(f *testing.F) {
	f.Add([]byte{0, 3, 'a', 'b'})
	f.Add(append([]byte{1}, AppendTaggedInt32s(AppendTagCount(nil, 1), 0, []int32{1, 2})...))
	f.Add(append([]byte{2}, AppendCompactStrings(nil, []string{"x", "yz"})...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		ops, in := b[0], b[1:]
		r := NewReader(in)
		for i := 0; i < 8 && r.Err() == nil; i++ {
			before := r.Len()
			switch (ops >> (i % 4 * 2)) & 3 {
			case 0:
				if s := r.CompactString(); r.Err() == nil {
					used := in[len(in)-before : len(in)-r.Len()]
					n, k := binary.Uvarint(used)
					if k <= 0 || n != uint64(len(s))+1 || string(used[k:]) != s {
						t.Fatalf("read %q from %x", s, used)
					}
				}
			case 1:
				r.Tags(func(uint64, []byte) {})
			case 2:
				r.Int32s()
				r.CompactStrings()
			case 3:
				r.String16()
				r.Int16s()
			}
			if r.Len() > before {
				t.Fatalf("read backwards: %d bytes left, then %d", before, r.Len())
			}
		}
	})
}
