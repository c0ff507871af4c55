package main

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
)

// framed prefixes body with its 4-byte size.
func framed(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// header encodes a request header v1 (key, version, correlation id,
// client id "x").
func header(key, version int16) []byte {
	h := binary.BigEndian.AppendUint16(nil, uint16(key))
	h = binary.BigEndian.AppendUint16(h, uint16(version))
	h = binary.BigEndian.AppendUint32(h, 7)
	return append(h, 0, 1, 'x')
}

// Garbage and malformed frames close their connection, as Kafka closes a
// connection it cannot parse, and nothing else: a connection opened before
// and a client working throughout keep being served.
func TestMalformedFramesCloseOnlyTheirConnection(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr := b.Addr().String()

	cl := newClient(t, b, kgo.DefaultProduceTopic("survivor"), kgo.ConsumeTopics("survivor"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	kzerotest.CreateTopic(t, ctx, cl, "survivor", 1, nil)
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	bystander := kzerotest.Dial(t, addr)
	versions := apiVersions(t, bystander)
	produceMax := versions[kmsg.Produce.Int16()]

	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 1024)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	// A random body behind a valid size, its API key one Kafka does not
	// have (a random key could land on ApiVersions, which answers).
	randomFrame := append([]byte(nil), random...)
	binary.BigEndian.PutUint16(randomFrame, 0x4b7a)

	cases := []struct {
		name  string
		bytes []byte
	}{
		{"size above socket.request.max.bytes", binary.BigEndian.AppendUint32(nil, 200<<20)},
		{"negative size", []byte{0xff, 0xff, 0xff, 0xfe}},
		{"zero size", []byte{0, 0, 0, 0}},
		{"frame shorter than a header", framed([]byte{0, 3})},
		{"client id longer than the frame", framed([]byte{0, 3, 0, 9, 0, 0, 0, 1, 0x7f, 0xff, 'a'})},
		{"http request", []byte("GET / HTTP/1.1\r\nHost: kzero\r\n\r\n")},
		{"tls client hello", []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}},
		{"random bytes", random},
		{"random frame", framed(randomFrame)},
		{"unknown api key", framed(header(0x7fff, 0))},
		// acks 1, then the body ends (Produce v2 is served: message sets).
		{"produce v2 with a truncated body", framed(append(header(kmsg.Produce.Int16(), 2), 0, 1, 0))},
		// header tags, null transactional id, acks, timeout, no topics, tags.
		{"produce above its max version", framed(append(header(kmsg.Produce.Int16(), produceMax+1), 0, 0, 0, 1, 0, 0, 0x75, 0x30, 1, 0))},
		{"produce v9 with a truncated body", framed(append(header(kmsg.Produce.Int16(), 9), 0, 0xff))},
		{"metadata with random bytes as body", framed(append(header(kmsg.Metadata.Int16(), 12), 0, 0x7f, 0xff, 0xff, 0xff, 0x0f))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn := kzerotest.Dial(t, addr)
			if err := conn.Write(c.bytes); err != nil {
				t.Fatal(err)
			}
			conn.WaitClosed(t)
		})
	}

	// The bystander connection and the client still work.
	if v := apiVersions(t, bystander); v[kmsg.Produce.Int16()] != produceMax {
		t.Fatalf("produce max version %d after garbage, was %d", v[kmsg.Produce.Int16()], produceMax)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := kzerotest.ConsumeN(t, ctx, cl, 2)
	if string(got[0].Value) != "before" || string(got[1].Value) != "after" {
		t.Fatalf("consumed %q, %q", got[0].Value, got[1].Value)
	}
	if s := b.ServerStats(); s.Rejected < 4 {
		t.Fatalf("server counted %d rejected connections, want at least the 4 bad sizes and headers", s.Rejected)
	}
}

// An ApiVersions request of a version the broker does not know is answered
// as v0 with UNSUPPORTED_VERSION and the supported list (KIP-511), not by
// closing the connection.
func TestApiVersionsTooNewAnsweredAsV0(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	conn := kzerotest.Dial(t, b.Addr().String())
	// The body is not parsed by the broker; send v4's.
	body := append(header(kmsg.ApiVersions.Int16(), 127), 0 /* header tags */, 2, 'x', 2, '1', 0)
	if err := conn.Write(framed(body)); err != nil {
		t.Fatal(err)
	}
	resp, err := kzerotest.ReadFrame(conn.NetConn())
	if err != nil {
		t.Fatal(err)
	}
	if id := binary.BigEndian.Uint32(resp); id != 7 {
		t.Fatalf("correlation id %d", id)
	}
	v0 := kmsg.NewPtrApiVersionsResponse()
	v0.SetVersion(0)
	if err := v0.ReadFrom(resp[4:]); err != nil {
		t.Fatalf("response is not ApiVersions v0: %v", err)
	}
	if v0.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("error code %d, want UNSUPPORTED_VERSION", v0.ErrorCode)
	}
	found := false
	for _, k := range v0.ApiKeys {
		found = found || (k.ApiKey == kmsg.ApiVersions.Int16() && k.MaxVersion >= 3)
	}
	if !found {
		t.Fatalf("the v0 answer does not list ApiVersions v3+: %+v", v0.ApiKeys)
	}
	// The connection stays usable.
	apiVersions(t, conn)
}

// apiVersions asks for ApiVersions v3 and returns each key's max version.
func apiVersions(t *testing.T, conn *kzerotest.Conn) map[int16]int16 {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kzero-test", "1"
	resp, err := conn.Request(req)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.(*kmsg.ApiVersionsResponse)
	if r.ErrorCode != 0 {
		t.Fatalf("ApiVersions: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	m := map[int16]int16{}
	for _, k := range r.ApiKeys {
		m[k.ApiKey] = k.MaxVersion
	}
	return m
}
