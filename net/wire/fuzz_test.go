package wire

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzRequestHeader feeds arbitrary frames to the header decoder: it must
// never panic, and a header it accepts must encode back (tags dropped) to
// bytes that decode to the same header and body.
func FuzzRequestHeader(f *testing.F) {
	fm := kmsg.NewRequestFormatter(kmsg.FormatterClientID("seed"))
	for _, r := range []kmsg.Request{kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrProduceRequest(), kmsg.NewPtrFetchRequest()} {
		for _, v := range []int16{0, 3, 9, 12} {
			r.SetVersion(v)
			f.Add(fm.AppendRequest(nil, r, 1)[SizeLen:])
		}
	}
	f.Add([]byte{0, 3, 0, 12, 0, 0, 0, 9, 0, 2, 'a', 'b', 2, 0, 3, 1, 2, 3, 0x81, 0x01, 0, 0xBE})
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, body, err := ParseRequestHeader(frame)
		if err != nil {
			return
		}
		if len(body) > len(frame) {
			t.Fatalf("body longer than frame")
		}
		again := append(AppendRequestHeader(nil, &h), body...)
		h2, body2, err := ParseRequestHeader(again)
		if err != nil {
			t.Fatalf("re-encoded header does not parse: %v", err)
		}
		if h2.APIKey != h.APIKey || h2.APIVersion != h.APIVersion || h2.CorrelationID != h.CorrelationID ||
			h2.Version != h.Version || !bytes.Equal(h2.ClientID, h.ClientID) || (h2.ClientID == nil) != (h.ClientID == nil) ||
			!bytes.Equal(body2, body) {
			t.Fatalf("round trip: %+v %x -> %+v %x", h, body, h2, body2)
		}
	})
}
