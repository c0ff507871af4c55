// Package nodetest runs a kzero node in the test's own process, as
// net/http/httptest runs servers, for the tests above node: the behaviour
// tests of the API handlers (net/api, package api_test) and the tests of
// cmd/kzero.
//
// Config is one combined node (broker and controller) on an ephemeral
// loopback port, configured as `kzero` runs with no server.properties:
// cmd/kzero's TestNodetestConfigIsTheDefault checks that the two stay
// equal, so a test that moves from cmd/kzero to a package below it keeps
// its broker. A test changes the fields it needs. Start starts a node and
// stops it when the test ends; Stop stops it earlier (to restart it on the
// same dirs, or to check the stop); Client connects a kgo client to it.
//
// The raw Kafka connection, record batches and client helpers the tests
// share are in kzerotest, which needs no node.
//
// nodetest imports node, so node's own tests (package node) cannot use it;
// they start their nodes themselves.
package nodetest
