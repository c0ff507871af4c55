package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// countedFile is a File that counts its releases.
type countedFile struct {
	fd       int
	released int
}

func (f *countedFile) Fd() int  { return f.fd }
func (f *countedFile) Release() { f.released++ }

func TestResponseHeaders(t *testing.T) {
	for _, tc := range []struct {
		key, version int16
		want         []byte
	}{
		{18, 3, []byte{0, 0, 0, 4, 0, 0, 0, 9}},    // ApiVersions v3: header v0
		{3, 8, []byte{0, 0, 0, 4, 0, 0, 0, 9}},     // Metadata v8: header v0
		{3, 12, []byte{0, 0, 0, 5, 0, 0, 0, 9, 0}}, // Metadata v12: header v1
	} {
		v, _ := RequestHeaderVersion(tc.key, tc.version)
		h := RequestHeader{APIKey: tc.key, APIVersion: tc.version, CorrelationID: 9, Version: v}
		r := NewResponse(&h)
		if err := r.Seal(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.B, tc.want) {
			t.Errorf("key %d v%d: %x, want %x", tc.key, tc.version, r.B, tc.want)
		}
		r.Release()
	}
}

// TestResponseParts lays out bytes, range, bytes, range, bytes and checks
// the parts, the size prefix, and that Release drops only the references
// the writer did not release.
func TestResponseParts(t *testing.T) {
	h := RequestHeader{APIKey: 1, APIVersion: 12, CorrelationID: 5, Version: 2}
	r := NewResponse(&h)
	r.B = append(r.B, "head"...)
	f1, f2 := &countedFile{fd: 3}, &countedFile{fd: 4}
	r.AddFile(FileRange{File: f1, Pos: 10, Len: 100})
	r.B = append(r.B, "mid"...)
	r.AddFile(FileRange{File: f2, Pos: 0, Len: 1000})
	r.B = append(r.B, "tail"...)
	if err := r.Seal(); err != nil {
		t.Fatal(err)
	}
	want := int64(4+1+4) + 100 + 3 + 1000 + 4
	if got := r.Size(); got != want {
		t.Fatalf("size %d, want %d", got, want)
	}
	if got := int64(binary.BigEndian.Uint32(r.B)); got != want {
		t.Fatalf("prefix %d, want %d", got, want)
	}
	if r.Parts() != 5 {
		t.Fatalf("parts %d", r.Parts())
	}
	b0, _ := r.Part(0)
	_, p1 := r.Part(1)
	b2, _ := r.Part(2)
	_, p3 := r.Part(3)
	b4, _ := r.Part(4)
	if !bytes.Equal(b0[SizeLen:], []byte{0, 0, 0, 5, 0, 'h', 'e', 'a', 'd'}) || string(b2) != "mid" || string(b4) != "tail" {
		t.Fatalf("bytes parts %x %q %q", b0, b2, b4)
	}
	if p1.File != f1 || p1.Pos != 10 || p1.Len != 100 || p3.File != f2 {
		t.Fatalf("range parts %+v %+v", p1, p3)
	}
	// The writer sent the first range.
	p1.File.Release()
	p1.File = nil
	r.Release()
	if f1.released != 1 || f2.released != 1 {
		t.Fatalf("releases %d %d, want 1 1", f1.released, f2.released)
	}
}

func TestResponseAppendMessage(t *testing.T) {
	h := RequestHeader{APIKey: 18, APIVersion: 3, CorrelationID: 77, Version: 2}
	r := NewResponse(&h)
	m := kmsg.NewPtrApiVersionsResponse()
	m.SetVersion(3)
	m.ApiKeys = append(m.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: 18, MaxVersion: 4})
	r.AppendMessage(m)
	if err := r.Seal(); err != nil {
		t.Fatal(err)
	}
	got := kmsg.NewPtrApiVersionsResponse()
	got.SetVersion(3)
	if err := got.ReadFrom(r.B[SizeLen+4:]); err != nil {
		t.Fatal(err)
	}
	if len(got.ApiKeys) != 1 || got.ApiKeys[0].MaxVersion != 4 {
		t.Fatalf("round trip: %+v", got)
	}
	r.Release()
}

func TestResponseSealErrors(t *testing.T) {
	h := RequestHeader{APIKey: 1, APIVersion: 4, Version: 1}
	r := NewResponse(&h)
	f := &countedFile{}
	r.AddFile(FileRange{File: f, Len: math.MaxInt32})
	if err := r.Seal(); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("err %v, want ErrResponseTooLarge", err)
	}
	r.Release()

	r = NewResponse(&h)
	r.AddFile(FileRange{File: f, Len: -1})
	if err := r.Seal(); err == nil {
		t.Fatal("negative length sealed")
	}
	r.Release()
	if f.released != 2 {
		t.Fatalf("released %d, want 2", f.released)
	}
}

func TestResponseAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	h := RequestHeader{APIKey: 1, APIVersion: 16, CorrelationID: 1, Version: 2}
	f := &countedFile{}
	body := make([]byte, 200)
	allocs := testing.AllocsPerRun(1000, func() {
		r := NewResponse(&h)
		r.B = append(r.B, body...)
		r.AddFile(FileRange{File: f, Len: 4096})
		r.B = append(r.B, body...)
		if err := r.Seal(); err != nil {
			t.Fatal(err)
		}
		r.Release()
	})
	if allocs != 0 {
		t.Fatalf("response build allocates %v times", allocs)
	}
}
