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
// Clients of message formats v0/v1 (Produce v0-v2, Fetch v0-v3, served
// with legacy.protocol.versions.enable) go through kzero/msgset: their
// message sets are up-converted to one batch before the append
// (00_produce_legacy.go), and what they fetch is read into memory and
// down-converted (01_fetch_legacy.go), off the event loops; Conversions
// counts both for /metrics.
package api
