// Command kzctl is the operator CLI for kzero and any Kafka-protocol
// cluster: topics, produce, consume, consumer groups, offsets, cluster info,
// dump-log for segment files on disk, and the benchmark suite.
//
//	kzctl [--brokers host:port,...] [-o text|json] COMMAND [ARGS] [FLAGS]
//
// Flags may come before or after arguments; everything after "--" is an
// argument. Exit status: 0 success (help included), 1 an error (one line
// each on stderr), 2 a usage error.
//
// # Layout
//
// The commands do their work in packages tools (and bench for the bench
// commands), which take an Env and an options struct and never read
// os.Args, the environment or os.Stdout. This package is only their
// command tree, built with cobra as rpk, kubectl, etcdctl and gh are: it
// gives help on every command (-h), shell completion (kzctl completion
// bash|zsh|fish) and GNU-style flags. The tree stays here rather than in
// tools so that tools keeps no CLI framework in its API and its tests
// drive the commands directly; and tools cannot hold the bench commands,
// since bench and tools are separate layer-4 packages.
//
//   - main.go: run, which executes the tree and turns its error into an
//     exit status and stderr lines.
//   - root.go: the root command, the flags common to every command
//     (persistent flags), the tools.Env they make, and the rules every
//     command follows (usageErrors): a command that groups others is a
//     usage error when run bare, as is any argument count or flag value a
//     command refuses.
//   - topic.go, records.go (produce, consume, offsets), group.go,
//     cluster.go, dumplog.go, bench.go, version.go: one file per group of
//     commands, each a constructor per command.
//   - flags.go: the flag values pflag has no type for (key=value pairs,
//     partition lists), and doubleDash, which keeps the one-dash long flags
//     (-brokers) that the flag package kzctl used before accepted.
package main
