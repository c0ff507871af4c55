// Package wire is the Kafka wire codec leaf: frame sizes, request and
// response headers, and responses built as a list of parts (encoded bytes
// and file ranges). It imports only kmsg and the standard library, so the
// replica and coordinator layers can speak Kafka without the server.
//
// # Frames
//
// Every request and response is a frame: a 4-byte big-endian signed size,
// then that many bytes. A negative size, or one above the receiver's limit
// (socket.request.max.bytes), is a protocol violation; FrameSize checks both.
//
//	request frame
//	+--------+---------+---------+-------------+-----------+------------+------+
//	| size   | api key | version | correlation | client id | tags (v2)  | body |
//	| int32  | int16   | int16   | int32       | int16 len | uvarint... |      |
//	+--------+---------+---------+-------------+-----------+------------+------+
//
//	response frame
//	+--------+-------------+------------+------+
//	| size   | correlation | tags (v1)  | body |
//	| int32  | int32       | uvarint... |      |
//	+--------+-------------+------------+------+
//
// Request header v2 (KIP-482) is used when the request's API version is
// flexible, which kmsg knows per API key; it keeps the old int16 client id
// and adds a tagged-field section. Header v1 has no tags; header v0 (no
// client id) is ControlledShutdown v0 only. The response header is v1 (with
// tags) exactly when the request is flexible, except ApiVersions, whose
// response header is always v0 (KIP-511). ParseRequestHeader refuses an API
// key kmsg does not know, because the header length of an unknown key cannot
// be known; the server closes such a connection, as Kafka does.
//
// # Responses
//
// A Response is the frame's bytes in B (a 4-byte size placeholder, the
// response header, then body bytes appended by encoders) with file ranges
// cut in between bytes: a fetch response is bytes, range, bytes, range,
// bytes. Seal computes the size, counting every range's length, and writes
// it into the placeholder. The writer walks the parts in order (Parts,
// Part): bytes are written, ranges are sent with sendfile.
//
// # Ownership
//
// A Response comes from a pool (NewResponse) and goes back with Release.
// Each FileRange added holds one reference on its File, which the Response
// owns from AddFile on: the writer releases a range's File once its bytes
// are sent (and clears it), and Release drops every reference still held,
// so a range is released exactly once whether it was sent or the
// connection died. A Response is used by one goroutine at a time; handing
// it to the server hands it over.
//
// # Inter-broker clients
//
// A Client is one connection to another broker, made by a Dialer as the
// inter-broker listener's security protocol says: TCP, TLS on SSL and
// SASL_SSL (the listener's client side of crypto/tls), and on
// SASL_PLAINTEXT and SASL_SSL a SASL login (SaslHandshake v1, then
// SaslAuthenticate until the Mechanism is done; Mechanism has the shape of
// franz-go's sasl.Mechanism, which cmd/kzero adapts, so this package keeps
// to kmsg). When the broker grants a session lifetime (KIP-368), the
// Client logs in again on the same connection before it ends.
//
// ParseRequestHeader and the Response methods allocate nothing in steady
// state. A RequestHeader's ClientID aliases the frame it was parsed from.
package wire
