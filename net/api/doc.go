// Package api holds the Kafka API handlers: one file per API key, named
// after it (00_produce.go), each opening with the versions it serves.
//
// The Handler decodes a request with kmsg, calls replica (data) and coord
// (metadata), and answers with a response the network layer writes. Kafka
// error codes are data in responses; a Go error (an undecodable request,
// an unsupported version) closes the connection, as Kafka does.
//
// Handlers run on the connection's serving goroutine, one request at a
// time per connection. A request that waits (a long-poll fetch) registers
// in a replica purgatory and is answered from the goroutine that ends the
// wait.
//
// docs/API.md lists every key with the versions served (a test keeps it in
// step with the handlers) and why the others are not. Two that a client
// asks for are left out on purpose:
//
//   - GetTelemetrySubscriptions and PushTelemetry (KIP-714): a Kafka broker
//     lists them only when a telemetry receiver plugin is configured, and by
//     default none is; Java clients then send no telemetry. kzero has no
//     receiver: accepting pushes without one would mean decoding OTLP
//     payloads only to drop them, and an advertised empty subscription is
//     the same to a client as no API, so both stay unadvertised, as with a
//     default Kafka broker.
//   - AlterReplicaLogDirs: moving a live partition between log dirs needs a
//     second ("future") log kept in step with appends and swapped in under
//     the partition's readers; the log and replica layers have no such
//     thing yet, and listing the API only to refuse every move would mislead
//     tools that check ApiVersions first.
//
// Clients of message formats v0/v1 (Produce v0-v2, Fetch v0-v3, served
// with legacy.protocol.versions.enable) go through kzero/msgset: their
// message sets are up-converted to one batch before the append
// (00_produce_legacy.go), and what they fetch is read into memory and
// down-converted (01_fetch_legacy.go), off the event loops; Conversions
// counts both for /metrics.
//
// Authentication (session.go): each connection has a session, made on its
// first request from the listener it came through (Config.Listeners). On a
// SASL listener it starts unauthenticated: Serve admits only ApiVersions,
// SaslHandshake and SaslAuthenticate (or the raw tokens of a v0 handshake)
// and closes the connection on anything else, as Kafka does; once
// authenticated, the session holds the principal (User:alice) that
// authorization uses, until connections.max.reauth.ms expires it.
//
// Authorization (authorizer.go): with Config.Authorizer, handlers check
// the principal's ACLs (metadata records) with Kafka's StandardAuthorizer
// rules and answer TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED,
// CLUSTER_AUTHORIZATION_FAILED or TRANSACTIONAL_ID_AUTHORIZATION_FAILED as
// Kafka does; without it, h.authorized is a nil check.
//
// Tests: the codecs and tables are tested inside the package; each API's
// behaviour is tested from outside it (package api_test), against a whole
// broker in the test's process (kzero/node/nodetest) driven by real clients
// and raw requests (kzero/kzerotest). Scenarios across APIs, the binary,
// its configuration and clusters are cmd/kzero's tests.
package api
