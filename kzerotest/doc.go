// Package kzerotest holds what the tests of the commands and packages that
// talk to a broker from outside share (cmd/kzero, cmd/kzctl, tools, and
// net/api's behaviour tests).
//
// It runs the kzero binary, as net/http/httptest runs servers: Build
// builds ./cmd/kzero of this module, Launch starts it and WaitReady waits
// for its ready line ("kzero ready on ADDR"), Stop ends it with SIGTERM and
// checks the clean exit, Kill ends it with SIGKILL. A started process is
// killed when the test ends; DieWithParent has it killed (on Linux) when
// the test binary dies first. That is Pdeathsig, which fires when the
// forking thread exits: fine for a test binary's main thread, not for long
// runs of goroutines that lock OS threads, so it is the caller's choice.
//
// Conn is a raw Kafka connection driven request by request (Dial, Request,
// Do, Send, Write, WaitClosed, FetchOnce, ProduceOnce), for what a client
// library hides: versions, malformed frames, connection counts, single
// long polls. EncodeBatch builds RecordBatch v2 bytes; CreateTopic,
// ConsumeN, ConsumeThrough and FindCoordinator are the kgo and raw steps
// many tests take.
//
// It imports nothing of kzero: the broker under test is the binary, as a
// user runs it, or any address. Tests that want a broker in their own
// process start a node with kzero/node/nodetest.
package kzerotest
