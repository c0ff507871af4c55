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
package api
