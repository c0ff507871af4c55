package shards

import "testing"

func TestPartitionForMatchesJava(t *testing.T) {
	// Java: "".hashCode() == 0, "a" == 97, "hello" == 99162322,
	// "Aa" == "BB" == 2112, "polygenelubricants" == Integer.MIN_VALUE.
	for _, c := range []struct {
		s    string
		hash int32
	}{
		{"", 0}, {"a", 97}, {"hello", 99162322}, {"Aa", 2112}, {"BB", 2112},
		{"polygenelubricants", -2147483648},
		// "my-group", by hand: h = h*31 + c over m y - g r o u p
		// (109 121 45 103 114 111 117 112), wrapping at 32 bits.
		{"my-group", myGroupHash()},
		// A code point beyond the BMP counts as its two surrogates.
		{"😀", 0xD83D*31 + 0xDE00},
	} {
		if got := javaHashCode(c.s); got != c.hash {
			t.Errorf("hash(%q) = %d, want %d", c.s, got, c.hash)
		}
	}
	if got := myGroupHash(); got != -1906497762 {
		t.Fatalf("hash(my-group) by hand = %d", got)
	}
	// Utils.abs(MIN_VALUE) is 0, not MIN_VALUE.
	for _, c := range []struct {
		group string
		n     int32
		want  int32
	}{{"", 50, 0}, {"a", 50, 47}, {"hello", 50, 22}, {"my-group", 50, 36}, {"polygenelubricants", 50, 0}, {"my-group", 1, 0}} {
		if got := PartitionFor(c.group, c.n); got != c.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", c.group, c.n, got, c.want)
		}
	}
}

func myGroupHash() int32 {
	var h int32
	for _, c := range []int32{109, 121, 45, 103, 114, 111, 117, 112} {
		h = h*31 + c
	}
	return h
}
