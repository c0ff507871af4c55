// Package sasl holds the server side of the SASL mechanisms kzero serves
// (PLAIN, RFC 4616; SCRAM-SHA-256 and SCRAM-SHA-512, RFC 5802 and RFC 7677;
// OAUTHBEARER, RFC 7628, with Kafka's unsecured validator: unsigned JWS
// checked for expiry and scope, for tests and development) and the JAAS
// configuration parser Kafka's sasl.jaas.config values need.
//
// It is pure: no sockets, no metadata, and no clock but the one
// OAuthConfig.Now injects. An Exchange is one
// authentication of one connection, stepped with the client's tokens; the
// caller (net/api) frames the tokens (SaslAuthenticate, or raw frames after
// a v0 SaslHandshake), keeps the Exchange per connection and asks it for
// the principal once it is done. Credentials come from the caller: PLAIN
// checks passwords with a Passwords function, SCRAM looks up salted
// credentials (never a clear password) with a Credentials function.
//
// Every parser of client bytes here (the PLAIN message, the SCRAM client
// messages, the OAUTHBEARER initial response and its unsecured JWS, the
// JAAS text) refuses bad input with an error and never
// panics; each has a fuzz target.
package sasl
