package wire

import (
	"bytes"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestParseRequestHeaderAgainstKmsg checks every API key and version kmsg
// knows: the header kmsg's client formatter writes decodes to the same
// fields, and the body that follows is exactly the request's encoding.
func TestParseRequestHeaderAgainstKmsg(t *testing.T) {
	for _, clientID := range []*string{nil, kmsg.StringPtr(""), kmsg.StringPtr("kzero-test")} {
		var opts []kmsg.RequestFormatterOpt
		if clientID != nil {
			opts = append(opts, kmsg.FormatterClientID(*clientID))
		}
		f := kmsg.NewRequestFormatter(opts...)
		for key := int16(0); key <= kmsg.MaxKey; key++ {
			r := kmsg.RequestForKey(key)
			if r == nil {
				continue
			}
			for v := int16(0); v <= r.MaxVersion(); v++ {
				r.SetVersion(v)
				frame := f.AppendRequest(nil, r, 1234567)
				h, body, err := ParseRequestHeader(frame[SizeLen:])
				if err != nil {
					t.Fatalf("key %d v%d: %v", key, v, err)
				}
				if h.APIKey != key || h.APIVersion != v || h.CorrelationID != 1234567 {
					t.Fatalf("key %d v%d: got %+v", key, v, h)
				}
				if h.Flexible() != r.IsFlexible() {
					t.Fatalf("key %d v%d: flexible %v, kmsg says %v", key, v, h.Flexible(), r.IsFlexible())
				}
				if key == 7 && v == 0 {
					// kmsg's formatter writes only the v0 header here.
					if h.Version != 0 || h.ClientID != nil || len(body) != 0 {
						t.Fatalf("controlled shutdown v0: got %+v body %x", h, body)
					}
					continue
				}
				if clientID == nil && h.ClientID != nil {
					t.Fatalf("key %d v%d: null client id decoded as %q", key, v, h.ClientID)
				} else if clientID != nil && (h.ClientID == nil || string(h.ClientID) != *clientID) {
					t.Fatalf("key %d v%d: client id %q, want %q", key, v, h.ClientID, *clientID)
				}
				if want := r.AppendTo(nil); !bytes.Equal(body, want) {
					t.Fatalf("key %d v%d: body %x, want %x", key, v, body, want)
				}
			}
		}
	}
}

func TestResponseFlexible(t *testing.T) {
	for _, tc := range []struct {
		key, version int16
		want         bool
	}{
		{18, 0, false}, {18, 3, false}, {18, 4, false}, {18, 99, false}, // ApiVersions: always v0
		{3, 8, false}, {3, 9, true}, {3, 12, true}, // Metadata flexible from v9
		{0, 8, false}, {0, 9, true}, // Produce flexible from v9
		{1, 11, false}, {1, 12, true}, // Fetch flexible from v12
	} {
		v, ok := RequestHeaderVersion(tc.key, tc.version)
		if !ok {
			t.Fatalf("key %d v%d unknown", tc.key, tc.version)
		}
		h := RequestHeader{APIKey: tc.key, APIVersion: tc.version, Version: v}
		if got := h.ResponseFlexible(); got != tc.want {
			t.Errorf("key %d v%d: ResponseFlexible %v, want %v", tc.key, tc.version, got, tc.want)
		}
	}
}

// TestTooNewApiVersions: a client may send an ApiVersions version the
// broker does not know; its header is still v2 (flexible from v3), so the
// broker can read the correlation id and answer UNSUPPORTED_VERSION.
func TestTooNewApiVersions(t *testing.T) {
	h := RequestHeader{APIKey: 18, APIVersion: 200, CorrelationID: 7, ClientID: []byte("x"), Version: 2}
	frame := append(AppendRequestHeader(nil, &h), 0xAA)
	got, body, err := ParseRequestHeader(frame)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || got.CorrelationID != 7 || !bytes.Equal(body, []byte{0xAA}) || got.ResponseFlexible() {
		t.Fatalf("got %+v body %x", got, body)
	}
}

func TestParseRequestHeaderTags(t *testing.T) {
	// Metadata v12 (flexible), client id "ab", two unknown tagged fields.
	frame := []byte{0, 3, 0, 12, 0, 0, 0, 9, 0, 2, 'a', 'b',
		2,             // two tags
		0, 3, 1, 2, 3, // tag 0, 3 bytes
		0x81, 0x01, 0, // tag 129, empty
		0xBE, 0xEF} // body
	h, body, err := ParseRequestHeader(frame)
	if err != nil {
		t.Fatal(err)
	}
	if string(h.ClientID) != "ab" || !bytes.Equal(body, []byte{0xBE, 0xEF}) {
		t.Fatalf("got %+v body %x", h, body)
	}
}

func TestParseRequestHeaderErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		frame []byte
		want  error
	}{
		"empty":             {nil, ErrTruncated},
		"short fixed":       {[]byte{0, 3, 0, 1, 0, 0, 0}, ErrTruncated},
		"no client id":      {[]byte{0, 3, 0, 1, 0, 0, 0, 1}, ErrTruncated},
		"client id short":   {[]byte{0, 3, 0, 1, 0, 0, 0, 1, 0, 5, 'a'}, ErrTruncated},
		"client id -2":      {[]byte{0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xfe}, ErrBadHeader},
		"unknown key":       {[]byte{0x7f, 0x00, 0, 1, 0, 0, 0, 1, 0xff, 0xff}, ErrUnknownAPIKey},
		"negative key":      {[]byte{0xff, 0xff, 0, 1, 0, 0, 0, 1, 0xff, 0xff}, ErrUnknownAPIKey},
		"negative version":  {[]byte{0, 3, 0xff, 0xff, 0, 0, 0, 1, 0xff, 0xff}, ErrBadHeader},
		"no tag count":      {[]byte{0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff}, ErrTruncated},
		"tag overruns":      {[]byte{0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 1, 0, 9, 1}, ErrBadHeader},
		"tag count too big": {[]byte{0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 5, 0, 0}, ErrTruncated},
		"varint too long":   {[]byte{0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, ErrTruncated},
	} {
		if _, _, err := ParseRequestHeader(tc.frame); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", name, err, tc.want)
		}
	}
}

func TestFrameSize(t *testing.T) {
	for _, tc := range []struct {
		p    []byte
		max  int
		want int
		err  error
	}{
		{[]byte{0, 0, 0, 0}, 10, 0, nil},
		{[]byte{0, 0, 0, 10}, 10, 10, nil},
		{[]byte{0, 0, 0, 11}, 10, 0, ErrFrameTooLarge},
		{[]byte{0x80, 0, 0, 0}, 10, 0, ErrNegativeSize},
		{[]byte{0xff, 0xff, 0xff, 0xff}, DefaultMaxRequestBytes, 0, ErrNegativeSize},
		{[]byte{0x7f, 0xff, 0xff, 0xff}, DefaultMaxRequestBytes, 0, ErrFrameTooLarge},
	} {
		got, err := FrameSize(tc.p, tc.max)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("FrameSize(%x, %d) = %d, %v; want %d, %v", tc.p, tc.max, got, err, tc.want, tc.err)
		}
	}
}

func TestParseRequestHeaderAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("client"))
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(11)
	frame := f.AppendRequest(nil, req, 42)[SizeLen:]
	allocs := testing.AllocsPerRun(1000, func() {
		if _, _, err := ParseRequestHeader(frame); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("ParseRequestHeader allocates %v times per call", allocs)
	}
}

func BenchmarkParseRequestHeader(b *testing.B) {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("client"))
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(16)
	frame := f.AppendRequest(nil, req, 42)[SizeLen:]
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseRequestHeader(frame); err != nil {
			b.Fatal(err)
		}
	}
}
