// Package bench is kzero's benchmark suite: end-to-end workloads run with
// franz-go's kgo client against any Kafka-protocol broker, so a claim about
// kzero can be checked against Apache Kafka or franz-go's kfake with the
// same instrument.
//
// kgo costs about as much CPU per byte as a broker and shares the machine
// with it, so a workload may instead be driven by the suite's raw load
// generator (client "raw", rawload.go), which measures the broker's
// capacity: producers write Produce requests encoded once (RecordBatch v2,
// uncompressed, valid CRC-32C; for an idempotent producer the sequence is
// patched and the CRC resealed per batch, for a latency run the send time
// too) over N connections with M requests in flight each, after
// ApiVersions picks versions the broker serves (Produce v9–v12, Fetch v12);
// consumers send sessionless Fetch requests, read each response into a
// reused buffer and check the CRC and record framing of one batch in 16.
// Neither allocates per request. The capacity-* and latency-raw-* shipped
// workloads use it; each result also records the clients' CPU (this
// process), so a reader can see how much of the machine the broker had.
//
// Appends into memory a virtual machine has not touched (or has handed
// back to its host) cost several times those into recycled page-cache
// pages; Warm (kzctl bench warm, bench run --warm) writes and deletes a
// file right before each run so that runs are measured in the steady
// state of a long-running broker, and the result says so (PageCache).
//
// A Workload is a JSON file (workloads/ holds the shipped ones): produce,
// consume from earliest, end-to-end latency at a fixed rate, or mixed
// produce and consume. Consumers are given partitions, join a consumer
// group, or join a share group (KIP-932, share.go) that reads from
// earliest and accepts every record: a share-group run counts each record
// once by offset, checks that every offset written was received, and
// reports redeliveries and refused acknowledgements. Run executes each
// workload against one or more Targets; a target is a broker address, or a
// broker the suite starts itself on loopback (kzero as a child process,
// kfake in process). With two targets the runs alternate A B A B for the repetitions asked, so a noisy
// machine biases neither, and the comparison reports medians and the
// median of the per-pair ratios. On a terminal a progress bar shows the
// run in progress; into a file or a pipe only a line per finished run is
// written.
//
// Every run creates its own topic and deletes it afterwards. Throughput is
// record value bytes over the measured phase's wall time (for a produce
// with a duration: what was acknowledged between the warmup and the
// deadline, over that window), and each side also records its throughput
// every 250 ms (Timeline); latency is the consumer's receive time minus
// the send time that the producer wrote into the first 8 bytes of each
// value (one process, one clock), summed up as nearest-rank percentiles
// and a CDF. For a kzero it started, the suite reads the broker's CPU
// seconds (utime+stime from /proc/PID/stat) around the measured phase and
// its peak RSS (VmHWM, reset through clear_refs before the phase where the
// kernel allows), and reports CPU seconds per GiB moved; with
// Options.Profile it also saves a CPU profile of the measured phase and
// the allocation profile from that kzero's /debug/pprof beside the
// results.
//
// MeasureLimits measures the machine's own limits on the paths a broker's
// bytes take: one loopback TCP connection, sendfile from the page cache
// to a loopback socket, and write() appended to a file.
//
// A results folder holds results.jsonl (one Result per run), summary.txt
// (the tables), run.json (the command, the machine and the workloads as
// run), limits.jsonl and limits.json (from MeasureLimits), and the pprof
// files. Report turns a folder into SVG plots and PERFORMANCE.md, from
// performance.md.tmpl, checking kzero's goals (goals.json) and listing the
// known gaps. kzctl's bench commands (cmd/kzctl) parse the flags and call
// Run, MeasureLimits and Report.
package bench
