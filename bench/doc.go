// Package bench is kzero's benchmark suite: end-to-end workloads run with
// franz-go's kgo client against any Kafka-protocol broker, so a claim about
// kzero can be checked against Apache Kafka or franz-go's kfake with the
// same instrument.
//
// A Workload is a JSON file (workloads/ holds the shipped ones): produce,
// consume from earliest, end-to-end latency at a fixed rate, or mixed
// produce and consume. Run executes each workload against one or more
// Targets; a target is a broker address, or a broker the suite starts
// itself on loopback (kzero as a child process, kfake in process). With two
// targets the runs alternate A B A B for the repetitions asked, so a noisy
// machine biases neither, and the comparison reports medians and the
// median of the per-pair ratios.
//
// Every run creates its own topic and deletes it afterwards. Throughput is
// record value bytes over the measured phase's wall time (for a produce
// with a duration: what was acknowledged between the warmup and the
// deadline, over that window); latency is the consumer's receive time minus
// the send time that the producer wrote into the first 8 bytes of each
// value (one process, one clock). For a kzero it
// started, the suite reads the broker's CPU seconds (utime+stime from
// /proc/PID/stat) around the measured phase and its peak RSS (VmHWM, reset
// through clear_refs before the phase where the kernel allows), and reports
// CPU seconds per GiB moved; with Options.Profile it also saves CPU and
// allocation profiles from that kzero's /debug/pprof beside the results.
//
// Results are JSON lines (one Result per run) and a human table.
package bench
