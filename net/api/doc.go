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
package api
