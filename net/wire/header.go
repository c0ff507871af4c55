package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	// apiVersionsKey is ApiVersions, whose response header is always v0.
	apiVersionsKey = 18
	// controlledShutdownKey is ControlledShutdown, whose v0 request uses
	// header v0 (no client id).
	controlledShutdownKey = 7
	// neverFlexible marks a known API with no flexible version.
	neverFlexible = 1 << 15
)

var (
	// ErrTruncated is returned for a request header cut short.
	ErrTruncated = errors.New("wire: request header truncated")
	// ErrUnknownAPIKey is returned for an API key kmsg does not know: its
	// header version, and so where the body starts, cannot be known.
	ErrUnknownAPIKey = errors.New("wire: unknown api key")
	// ErrBadHeader is returned for a request header with an impossible
	// field: a negative API version, a client id length below -1, or a
	// tagged field that overruns the frame.
	ErrBadHeader = errors.New("wire: malformed request header")
)

// flexibleFrom holds, per API key, the first flexible request version
// (neverFlexible if none), or -1 for a key kmsg does not know. Built once
// from kmsg, so the header decoder allocates nothing per request.
var flexibleFrom = func() (t [kmsg.MaxKey + 1]int32) {
	for key := range t {
		r := kmsg.RequestForKey(int16(key))
		if r == nil {
			t[key] = -1
			continue
		}
		// IsFlexible is monotone in the version: search the first.
		t[key] = int32(sort.Search(neverFlexible, func(v int) bool {
			r.SetVersion(int16(v))
			return r.IsFlexible()
		}))
	}
	return t
}()

// RequestHeaderVersion returns the request header version (0, 1 or 2) that
// a request of this API key and version uses, and false for an API key kmsg
// does not know or a negative version.
func RequestHeaderVersion(key, version int16) (int8, bool) {
	if key < 0 || int(key) >= len(flexibleFrom) || flexibleFrom[key] < 0 || version < 0 {
		return 0, false
	}
	switch {
	case int32(version) >= flexibleFrom[key]:
		return 2, true
	case key == controlledShutdownKey && version == 0:
		return 0, true
	}
	return 1, true
}

// RequestHeader is a decoded request header.
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	// ClientID aliases the frame the header was parsed from; nil when the
	// client sent a null client id.
	ClientID []byte
	// Version is the header version: 2 for a flexible request, 1 for the
	// others (0 only for ControlledShutdown v0).
	Version int8
}

// Flexible reports whether the request is encoded with KIP-482 flexible
// versions (compact fields and tagged fields).
func (h *RequestHeader) Flexible() bool { return h.Version >= 2 }

// ResponseFlexible reports whether the response header carries a tagged
// field section (header v1): when the request is flexible, except for
// ApiVersions, whose response header is always v0 so that a client that
// does not yet know the broker's versions can read it.
func (h *RequestHeader) ResponseFlexible() bool {
	return h.Version >= 2 && h.APIKey != apiVersionsKey
}

// ParseRequestHeader decodes the request header at the start of frame (the
// bytes after the size prefix) and returns it with the body that follows.
// Tagged fields in a v2 header are skipped (none is defined). The header's
// ClientID and the body alias frame.
func ParseRequestHeader(frame []byte) (RequestHeader, []byte, error) {
	var h RequestHeader
	if len(frame) < 8 {
		return h, nil, fmt.Errorf("%d bytes: %w", len(frame), ErrTruncated)
	}
	h.APIKey = int16(binary.BigEndian.Uint16(frame))
	h.APIVersion = int16(binary.BigEndian.Uint16(frame[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(frame[4:]))
	v, ok := RequestHeaderVersion(h.APIKey, h.APIVersion)
	if !ok {
		if h.APIVersion < 0 {
			return h, nil, fmt.Errorf("api key %d version %d: %w", h.APIKey, h.APIVersion, ErrBadHeader)
		}
		return h, nil, fmt.Errorf("api key %d: %w", h.APIKey, ErrUnknownAPIKey)
	}
	h.Version = v
	b := frame[8:]
	if v == 0 {
		return h, b, nil
	}
	if len(b) < 2 {
		return h, nil, fmt.Errorf("client id length: %w", ErrTruncated)
	}
	n := int(int16(binary.BigEndian.Uint16(b)))
	b = b[2:]
	switch {
	case n < -1:
		return h, nil, fmt.Errorf("client id length %d: %w", n, ErrBadHeader)
	case n > len(b):
		return h, nil, fmt.Errorf("client id length %d, %d bytes left: %w", n, len(b), ErrTruncated)
	case n >= 0:
		h.ClientID, b = b[:n:n], b[n:]
	}
	if v == 2 {
		var err error
		if b, err = skipTags(b); err != nil {
			return h, nil, err
		}
	}
	return h, b, nil
}

// skipTags skips a tagged-field section: a count, then per field a tag, a
// size and that many bytes, all sizes unsigned varints.
func skipTags(b []byte) ([]byte, error) {
	count, n := uvarint(b)
	if n == 0 {
		return nil, fmt.Errorf("tag count: %w", ErrTruncated)
	}
	b = b[n:]
	for range count {
		_, n = uvarint(b)
		if n == 0 {
			return nil, fmt.Errorf("tag: %w", ErrTruncated)
		}
		b = b[n:]
		size, n := uvarint(b)
		if n == 0 {
			return nil, fmt.Errorf("tag size: %w", ErrTruncated)
		}
		b = b[n:]
		if uint64(size) > uint64(len(b)) {
			return nil, fmt.Errorf("tag size %d, %d bytes left: %w", size, len(b), ErrBadHeader)
		}
		b = b[size:]
	}
	return b, nil
}

// uvarint decodes a Kafka unsigned varint (at most 5 bytes, 32 bits) and
// returns it with the bytes it took; 0 bytes when b is cut short or the
// varint is too long.
func uvarint(b []byte) (uint32, int) {
	var v uint32
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		if i == 4 && c > 0x0f {
			return 0, 0
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// AppendRequestHeader appends h's encoding (header version h.Version) to
// dst: the request side of the codec, for clients and tests.
func AppendRequestHeader(dst []byte, h *RequestHeader) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.APIKey))
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.APIVersion))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.CorrelationID))
	if h.Version == 0 {
		return dst
	}
	if h.ClientID == nil {
		dst = binary.BigEndian.AppendUint16(dst, 0xffff)
	} else {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(h.ClientID)))
		dst = append(dst, h.ClientID...)
	}
	if h.Version >= 2 {
		dst = append(dst, 0) // no tagged fields
	}
	return dst
}
