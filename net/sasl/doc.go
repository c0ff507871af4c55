// Package sasl holds the server side of the SASL mechanisms kzero serves
// (PLAIN, RFC 4616; SCRAM-SHA-256 and SCRAM-SHA-512, RFC 5802 and RFC 7677;
// OAUTHBEARER, RFC 7628, with either of Kafka's validators: the unsecured
// one, unsigned JWS checked for expiry and scope, for tests and
// development; or the broker validator of KIP-768, JWTs signed with RSA
// or ECDSA keys from a JSON Web Key Set, checked for signature, expiry,
// audience and issuer) and the JAAS configuration parser Kafka's
// sasl.jaas.config values need.
//
// The exchanges are pure: no sockets, no metadata, and no clock but the
// one OAuthConfig.Now injects. An Exchange is one authentication of one
// connection, stepped with the client's tokens; the caller (net/api)
// frames the tokens (SaslAuthenticate, or raw frames after a v0
// SaslHandshake), keeps the Exchange per connection and asks it for the
// principal once it is done. Credentials come from the caller: PLAIN
// checks passwords with a Passwords function, SCRAM looks up salted
// credentials (never a clear password) with a Credentials function.
//
// The one part that does I/O is JWKS, the signed tokens' key set: read
// from a file, or fetched from an identity provider's endpoint and kept
// fresh by its own goroutine (every refresh interval, and at once when a
// token names a key id the set lacks, as keys rotate). Exchanges read
// the set it last installed and never wait for the network.
//
// Every parser of client bytes here (the PLAIN message, the SCRAM client
// messages, the OAUTHBEARER initial response, its unsecured JWS and its
// signed JWT, the JWKS document, the JAAS text) refuses bad input with an
// error and never panics; each has a fuzz target.
package sasl
