// Package tools holds the commands of kzctl, the operator CLI: topics,
// produce, consume, consumer groups, offsets, cluster information, leader
// elections and partition reassignments over the Kafka protocol (franz-go
// kgo and kadm, so they work against kzero and Apache Kafka alike, over TLS
// and SASL where the broker wants them),
// and dump-log, which reads segment, index, transaction index and producer
// snapshot files straight from disk through the log package.
//
// # Contract
//
// Every command is a function that takes an Env (brokers, output writer,
// output format, timeout) and an options struct, writes its result to
// Env.Out and returns an error. Flag parsing lives in cmd/kzctl; nothing here
// reads os.Args, the environment or os.Stdout, so tests drive the commands
// directly.
//
//   - Listings print a human table (text/tabwriter) in Text format and one
//     indented JSON document in JSON format. Streams (consumed records,
//     dump-log output) print one line per item: a line of text, or one
//     compact JSON object (JSON lines).
//   - Errors are one line each, naming what failed; a Kafka error keeps its
//     name (TOPIC_ALREADY_EXISTS: ...) because kerr errors are wrapped, never
//     flattened. When a command fails for some items and not others (three
//     topics, one exists) it reports the others and returns the failures
//     joined with errors.Join, one per line.
//   - An error that wraps ErrUsage is the caller's mistake (a bad flag
//     value); cmd/kzctl exits 2 for it and 1 for any other error.
//   - Long operations draw a progress bar on Env.Progress (stderr) only
//     when it is a terminal, and for streamed output only when Env.Out is
//     not the terminal too: nothing of it ever reaches a pipe or a file.
//   - dump-log never writes to the files it reads: it opens them read-only.
//     Damaged input is an error naming the file and the byte position, never
//     a panic; a batch that fails its CRC is still shown (isvalid: false)
//     and makes the command fail at the end.
//
// # Layers
//
// tools is layer 4: it imports log (batch views, record reader, decoders of
// the transaction index and producer snapshot) and client libraries, nothing
// from net, replica or coord. The 8- and 12-byte index entries are decoded
// here (dumpindex.go) rather than through index, whose Open maps the file
// read-write and extends a preallocated one.
package tools
