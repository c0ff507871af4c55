// Command kzctl is the operator CLI for kzero and any Kafka-protocol
// cluster: topics, produce, consume, consumer groups, offsets, cluster info,
// and dump-log for segment files on disk. The commands live in package tools; this file
// parses flags and dispatches.
//
//	kzctl [--brokers host:port,...] [-o text|json] COMMAND [ARGS] [FLAGS]
//
// Flags may come before or after arguments. Exit status: 0 success, 1 an
// error (one line each on stderr), 2 a usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"kzero/bench"
	"kzero/tools"
)

const usage = `kzctl: operator CLI for kzero (and any Kafka-protocol cluster)

Usage: kzctl [common flags] COMMAND [ARGS] [FLAGS]

Commands:
  topic create NAME... [--partitions N] [--replication-factor N] [--config k=v]...
  topic list [--internal]
  topic describe [NAME...]
  topic delete NAME...
  topic alter-config NAME... [--set k=v]... [--delete k]...
  topic add-partitions NAME... (--num N | --total N)
  produce TOPIC [--file F] [--key-separator S] [--header k=v]... [--partition N]
                [--compression none|gzip|snappy|lz4|zstd] [--acks all|1|0]
                [--idempotent] [--transactional-id ID]
  consume TOPIC [--from-beginning | --offset N|earliest|latest | --timestamp MS]
                [--partition N]... [--count N] [--to-end] [--timeout-ms MS]
                [--isolation read_committed|read_uncommitted] [--group G] [--value-only]
  group list [--state STATE[,STATE]]...
  group describe [GROUP...] [--members | --state]
  group delete GROUP...
  group delete-offsets GROUP --topic T[:P,P]...
  group reset-offsets GROUP (--topic T[:P,P]... | --all-topics)
                (--to-earliest | --to-latest | --to-offset N | --to-datetime RFC3339 |
                 --shift-by N | --by-duration 1h30m|PT1H30M) [--dry-run | --execute]
  offsets [TOPIC...] [--time earliest|latest|max-timestamp|MS] [--isolation ...]
  cluster info
  dump-log FILE|DIR... [--files a,b] [--print-data-log] [--deep-iteration]
                [--index-sanity-check]
  bench run WORKLOAD... [--start kzero|kfake | --compare A,B] [--reps N]
                [--scale F] [--out DIR [--pprof]] [--kzero-bin PATH]
                (WORKLOAD: a .json file, a shipped workload's name, or all;
                 A, B: host:port, kzero or kfake)
  bench limits [--out DIR] [--duration D] [--reps N]
  bench report DIR [--out DIR] [--markdown FILE] [--format svg] [--goals FILE]

Common flags (anywhere on the line):
  --brokers host:port,...   seed brokers (alias --bootstrap-server; env KZERO_BROKERS;
                            default 127.0.0.1:9092)
  -o text|json              output format (default text)
  --timeout DURATION        bound on administrative requests (default 30s)
  --tls                     connect with TLS (implied by the other --tls flags)
  --tls-ca FILE             PEM certificates that sign the brokers' (default: the system's)
  --tls-cert FILE, --tls-key FILE
                            PEM client certificate and key, for brokers that ask for one
  --tls-insecure-skip-verify
                            accept any broker certificate (testing only)
  --sasl-mechanism M        PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
  --sasl-user USER          SASL user name
  --sasl-password PASS      SASL password (env KZERO_SASL_PASSWORD)

Long operations (consume --count/--to-end, dump-log, reset-offsets --execute)
draw a progress bar on stderr when it is a terminal.

Run 'kzctl COMMAND -h' for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errHelp is a -h the usage was printed for: exit 0.
var errHelp = errors.New("help")

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr}
	err := c.dispatch(ctx, args)
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.Is(err, tools.ErrUsage), errors.As(err, new(flagError)):
		for _, l := range tools.ErrorLines(err) {
			fmt.Fprintln(stderr, "kzctl:", strings.TrimSuffix(l, ": "+tools.ErrUsage.Error()))
		}
		fmt.Fprintln(stderr, "Run 'kzctl -h' for usage.")
		return 2
	}
	for _, l := range tools.ErrorLines(err) {
		fmt.Fprintln(stderr, "kzctl:", l)
	}
	return 1
}

// flagError is a flag the flag package refused: a usage error.
type flagError struct{ error }

// cli holds the common flags, shared by every command's flag set.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	brokers string
	output  string
	timeout time.Duration
	connect tools.ConnectOptions
}

// flags returns a flag set for a command with the common flags on it.
func (c *cli) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("kzctl "+name, flag.ContinueOnError)
	// The flag package would print each error and the whole usage; run
	// prints the error in one line, and -h prints the usage (parse).
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&c.brokers, "brokers", c.brokers, "seed brokers, host:port,...")
	fs.StringVar(&c.brokers, "bootstrap-server", c.brokers, "alias of --brokers")
	fs.StringVar(&c.output, "o", c.output, "output format: text or json")
	fs.DurationVar(&c.timeout, "timeout", c.timeout, "bound on administrative requests")
	o := &c.connect
	fs.BoolVar(&o.TLS, "tls", o.TLS, "connect with TLS")
	fs.StringVar(&o.CAFile, "tls-ca", o.CAFile, "PEM file of the CA certificates that sign the brokers' certificates")
	fs.StringVar(&o.CertFile, "tls-cert", o.CertFile, "PEM client certificate")
	fs.StringVar(&o.KeyFile, "tls-key", o.KeyFile, "PEM key of the client certificate")
	fs.BoolVar(&o.InsecureSkipVerify, "tls-insecure-skip-verify", o.InsecureSkipVerify, "accept any broker certificate (testing only)")
	fs.StringVar(&o.SASLMechanism, "sasl-mechanism", o.SASLMechanism, "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&o.SASLUser, "sasl-user", o.SASLUser, "SASL user")
	fs.StringVar(&o.SASLPassword, "sasl-password", o.SASLPassword, "SASL password (env KZERO_SASL_PASSWORD)")
	return fs
}

// parse parses args with flags allowed between the arguments, and returns
// the arguments. Everything after "--" is an argument.
func (c *cli) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(c.stderr, "Usage of %s:\n", fs.Name())
				fs.SetOutput(c.stderr)
				fs.PrintDefaults()
				return nil, errHelp
			}
			return nil, flagError{err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

func (c *cli) env() (*tools.Env, error) {
	f, err := tools.ParseFormat(c.output)
	if err != nil {
		return nil, err
	}
	brokers := c.brokers
	if brokers == "" {
		brokers = os.Getenv("KZERO_BROKERS")
	}
	if brokers == "" {
		brokers = tools.DefaultBrokers
	}
	env := &tools.Env{Brokers: tools.ParseBrokers(brokers), Out: c.stdout, Format: f, Timeout: c.timeout, Progress: c.stderr}
	connect := c.connect
	if connect.SASLPassword == "" {
		connect.SASLPassword = os.Getenv("KZERO_SASL_PASSWORD")
	}
	if err := connect.Apply(env); err != nil {
		return nil, err
	}
	return env, nil
}

func (c *cli) dispatch(ctx context.Context, args []string) error {
	// Common flags may come before the command.
	fs := c.flags("")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(c.stderr, usage)
			return errHelp
		}
		return flagError{err}
	}
	args = fs.Args()
	if len(args) == 0 {
		fmt.Fprint(c.stderr, usage)
		return fmt.Errorf("no command: %w", tools.ErrUsage)
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "topic", "topics":
		return c.topic(ctx, args)
	case "produce":
		return c.produce(ctx, args)
	case "consume":
		return c.consume(ctx, args)
	case "group", "groups":
		return c.group(ctx, args)
	case "offsets":
		return c.offsets(ctx, args)
	case "cluster":
		return c.cluster(ctx, args)
	case "dump-log":
		return c.dumpLog(args)
	case "bench":
		return c.bench(ctx, args)
	case "help":
		fmt.Fprint(c.stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q: %w", cmd, tools.ErrUsage)
}

func (c *cli) topic(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("topic: want create, list, describe, delete, alter-config or add-partitions: %w", tools.ErrUsage)
	}
	sub, args := args[0], args[1:]
	fs := c.flags("topic " + sub)
	switch sub {
	case "create":
		partitions := fs.Int("partitions", -1, "partitions (-1: the broker's num.partitions)")
		rf := fs.Int("replication-factor", -1, "replicas of each partition (-1: the broker's default)")
		configs := keyValues{}
		fs.Var(configs, "config", "topic config key=value (repeatable)")
		names, err := c.parse(fs, args)
		if err != nil {
			return err
		}
		env, err := c.env()
		if err != nil {
			return err
		}
		return tools.TopicCreate(ctx, env, tools.TopicSpec{Names: names, Partitions: int32(*partitions),
			ReplicationFactor: int16(*rf), Configs: configs})
	case "list":
		internal := fs.Bool("internal", false, "include internal topics")
		if err := c.noArgs(fs, args); err != nil {
			return err
		}
		env, err := c.env()
		if err != nil {
			return err
		}
		return tools.TopicList(ctx, env, *internal)
	case "describe":
		names, err := c.parse(fs, args)
		if err != nil {
			return err
		}
		env, err := c.env()
		if err != nil {
			return err
		}
		return tools.TopicDescribe(ctx, env, names)
	case "delete":
		names, err := c.parse(fs, args)
		if err != nil {
			return err
		}
		env, err := c.env()
		if err != nil {
			return err
		}
		return tools.TopicDelete(ctx, env, names)
	case "alter-config":
		set := keyValues{}
		fs.Var(set, "set", "config key=value to set (repeatable)")
		var del stringList
		fs.Var(&del, "delete", "config key to reset to its default (repeatable)")
		names, err := c.parse(fs, args)
		if err != nil {
			return err
		}
		env, err := c.env()
		if err != nil {
			return err
		}
		return tools.TopicAlterConfig(ctx, env, names, set, del)
	case "add-partitions":
		num := fs.Int("num", 0, "partitions to add")
		total := fs.Int("total", 0, "new partition count")
		names, err := c.parse(fs, args)
		if err != nil {
			return err
		}
		env, err := c.env()
		if err != nil {
			return err
		}
		return tools.TopicAddPartitions(ctx, env, names, *num, *total)
	}
	return fmt.Errorf("topic %s: unknown subcommand: %w", sub, tools.ErrUsage)
}

func (c *cli) produce(ctx context.Context, args []string) error {
	fs := c.flags("produce")
	file := fs.String("file", "", "read records from this file instead of stdin")
	opts := tools.ProduceOptions{}
	fs.StringVar(&opts.KeySeparator, "key-separator", "", "split each line into key and value at this string")
	var headers stringList
	fs.Var(&headers, "header", "header key=value added to every record (repeatable)")
	partition := fs.Int("partition", -1, "partition to write to (-1: the partitioner picks)")
	fs.StringVar(&opts.Compression, "compression", "none", "none, gzip, snappy, lz4 or zstd")
	fs.StringVar(&opts.Acks, "acks", "all", "all (-1), 1 or 0")
	fs.BoolVar(&opts.Idempotent, "idempotent", false, "idempotent producer (acks all)")
	fs.StringVar(&opts.TransactionalID, "transactional-id", "", "send all records in one transaction")
	fs.IntVar(&opts.MaxLineBytes, "max-line-bytes", 16<<20, "longest line accepted")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("produce: want one topic, got %d arguments: %w", len(pos), tools.ErrUsage)
	}
	opts.Topic, opts.Partition, opts.Input = pos[0], int32(*partition), c.stdin
	opts.KeySeparator = unescape(opts.KeySeparator)
	for _, h := range headers {
		rh, err := tools.ParseHeader(h)
		if err != nil {
			return err
		}
		opts.Headers = append(opts.Headers, rh)
	}
	if *file != "" {
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.Input = f
	}
	env, err := c.env()
	if err != nil {
		return err
	}
	return tools.Produce(ctx, env, opts)
}

func (c *cli) consume(ctx context.Context, args []string) error {
	fs := c.flags("consume")
	opts := tools.ConsumeOptions{}
	fs.BoolVar(&opts.FromBeginning, "from-beginning", false, "start at the earliest offset")
	fs.StringVar(&opts.Offset, "offset", "", "start at this offset, or earliest or latest")
	fs.Int64Var(&opts.Timestamp, "timestamp", -1, "start at the first record at or after this millisecond")
	fs.IntVar(&opts.Count, "count", 0, "stop after this many records (0: never)")
	fs.IntVar(&opts.Count, "max-messages", 0, "alias of --count")
	fs.BoolVar(&opts.ToEnd, "to-end", false, "stop at the end offsets as of the start")
	timeoutMs := fs.Int("timeout-ms", 0, "stop after this long without a record (0: never)")
	var parts intList
	fs.Var(&parts, "partition", "consume only this partition (repeatable)")
	fs.StringVar(&opts.Isolation, "isolation", "read_uncommitted", "read_uncommitted or read_committed")
	fs.StringVar(&opts.Group, "group", "", "consume as a member of this group")
	fs.BoolVar(&opts.ValueOnly, "value-only", false, "print only values, one per line")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("consume: want one topic, got %d arguments: %w", len(pos), tools.ErrUsage)
	}
	opts.Topic, opts.Partitions = pos[0], parts
	opts.IdleTimeout = time.Duration(*timeoutMs) * time.Millisecond
	env, err := c.env()
	if err != nil {
		return err
	}
	return tools.Consume(ctx, env, opts)
}

func (c *cli) group(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("group: want list, describe, delete, delete-offsets or reset-offsets: %w", tools.ErrUsage)
	}
	sub, args := args[0], args[1:]
	fs := c.flags("group " + sub)
	// --group, as kafka-consumer-groups.sh takes it, adds to the names
	// given as arguments.
	var named stringList
	if sub != "list" {
		fs.Var(&named, "group", "group name (repeatable; same as an argument)")
	}
	groups := func(pos []string) []string { return append(named, pos...) }
	one := func(pos []string) (string, error) {
		if g := groups(pos); len(g) == 1 {
			return g[0], nil
		}
		return "", fmt.Errorf("group %s: want one group, got %d: %w", sub, len(groups(pos)), tools.ErrUsage)
	}
	switch sub {
	case "list":
		var states stringList
		fs.Var(&states, "state", "list only groups in this state (repeatable, or a comma list)")
		if err := c.noArgs(fs, args); err != nil {
			return err
		}
		filter, err := tools.ParseGroupStates(states)
		if err != nil {
			return err
		}
		env, err := c.env()
		if err != nil {
			return err
		}
		return tools.GroupList(ctx, env, filter)
	case "describe":
		members := fs.Bool("members", false, "one row per member, with its assignment")
		state := fs.Bool("state", false, "one row per group: coordinator, strategy, state, members")
		pos, err := c.parse(fs, args)
		if err != nil {
			return err
		}
		view := tools.GroupOffsets
		switch {
		case *members && *state:
			return fmt.Errorf("group describe: --members or --state, not both: %w", tools.ErrUsage)
		case *members:
			view = tools.GroupMembers
		case *state:
			view = tools.GroupStateView
		}
		env, err := c.env()
		if err != nil {
			return err
		}
		return tools.GroupDescribe(ctx, env, groups(pos), view)
	case "delete":
		pos, err := c.parse(fs, args)
		if err != nil {
			return err
		}
		env, err := c.env()
		if err != nil {
			return err
		}
		return tools.GroupDelete(ctx, env, groups(pos))
	case "delete-offsets":
		var topics stringList
		fs.Var(&topics, "topic", "topic, or topic:partition,... (repeatable)")
		pos, err := c.parse(fs, args)
		if err != nil {
			return err
		}
		g, err := one(pos)
		if err != nil {
			return err
		}
		env, err := c.env()
		if err != nil {
			return err
		}
		return tools.GroupDeleteOffsets(ctx, env, g, topics)
	case "reset-offsets":
		return c.resetOffsets(ctx, fs, args, one)
	}
	return fmt.Errorf("group %s: unknown subcommand: %w", sub, tools.ErrUsage)
}

// resetOffsets parses `group reset-offsets`: exactly one --to-* (or
// --shift-by, --by-duration) flag, and --dry-run (the default) or
// --execute.
func (c *cli) resetOffsets(ctx context.Context, fs *flag.FlagSet, args []string, one func([]string) (string, error)) error {
	opts := tools.ResetOptions{}
	var topics stringList
	fs.Var(&topics, "topic", "topic, or topic:partition,... (repeatable)")
	fs.BoolVar(&opts.AllTopics, "all-topics", false, "every topic the group has committed offsets for")
	fs.Bool("to-earliest", false, "reset to the log start offset")
	fs.Bool("to-latest", false, "reset to the log end offset")
	toOffset := fs.Int64("to-offset", 0, "reset to this offset")
	toDatetime := fs.String("to-datetime", "", "reset to the first offset at or after this time (RFC 3339)")
	shiftBy := fs.Int64("shift-by", 0, "move the committed offset by this many (negative: back)")
	byDuration := fs.String("by-duration", "", "reset to the first offset at or after this long ago (1h30m or PT1H30M)")
	dryRun := fs.Bool("dry-run", false, "print the plan only (the default)")
	fs.BoolVar(&opts.Execute, "execute", false, "commit the new offsets")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if opts.Group, err = one(pos); err != nil {
		return err
	}
	if *dryRun && opts.Execute {
		return fmt.Errorf("group reset-offsets: --dry-run or --execute, not both: %w", tools.ErrUsage)
	}
	opts.Topics = topics
	var targets []string
	fs.Visit(func(f *flag.Flag) {
		kind, ok := map[string]tools.ResetKind{
			"to-earliest": tools.ResetToEarliest, "to-latest": tools.ResetToLatest,
			"to-offset": tools.ResetToOffset, "to-datetime": tools.ResetToDatetime,
			"shift-by": tools.ResetShiftBy, "by-duration": tools.ResetByDuration,
		}[f.Name]
		if !ok {
			return
		}
		if b, isBool := f.Value.(interface{ IsBoolFlag() bool }); isBool && b.IsBoolFlag() && f.Value.String() != "true" {
			return // --to-earliest=false
		}
		targets = append(targets, "--"+f.Name)
		opts.To.Kind = kind
	})
	if len(targets) != 1 {
		return fmt.Errorf("group reset-offsets: give one of --to-earliest, --to-latest, --to-offset, --to-datetime, --shift-by and --by-duration (got %d): %w", len(targets), tools.ErrUsage)
	}
	switch opts.To.Kind {
	case tools.ResetToOffset:
		opts.To.Offset = *toOffset
	case tools.ResetShiftBy:
		opts.To.Offset = *shiftBy
	case tools.ResetToDatetime:
		if opts.To.Time, err = tools.ParseResetDatetime(*toDatetime); err != nil {
			return err
		}
	case tools.ResetByDuration:
		if opts.To.Duration, err = tools.ParseResetDuration(*byDuration); err != nil {
			return err
		}
	}
	env, err := c.env()
	if err != nil {
		return err
	}
	return tools.GroupResetOffsets(ctx, env, opts)
}

func (c *cli) offsets(ctx context.Context, args []string) error {
	fs := c.flags("offsets")
	opts := tools.OffsetsOptions{}
	fs.StringVar(&opts.Time, "time", "", "earliest, latest, max-timestamp or a millisecond timestamp")
	fs.StringVar(&opts.Isolation, "isolation", "read_uncommitted", "read_uncommitted or read_committed (end = last stable offset)")
	topics, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	opts.Topics = topics
	env, err := c.env()
	if err != nil {
		return err
	}
	return tools.Offsets(ctx, env, opts)
}

func (c *cli) cluster(ctx context.Context, args []string) error {
	fs := c.flags("cluster info")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "info" {
		return fmt.Errorf("cluster: want 'cluster info': %w", tools.ErrUsage)
	}
	env, err := c.env()
	if err != nil {
		return err
	}
	return tools.ClusterInfo(ctx, env)
}

func (c *cli) dumpLog(args []string) error {
	fs := c.flags("dump-log")
	opts := tools.DumpOptions{}
	files := fs.String("files", "", "comma-separated files, as kafka-dump-log.sh takes them")
	fs.BoolVar(&opts.PrintDataLog, "print-data-log", false, "print record keys, values and headers")
	fs.BoolVar(&opts.DeepIteration, "deep-iteration", false, "decode the records of every batch")
	fs.BoolVar(&opts.IndexSanityCheck, "index-sanity-check", false, "check index entries against the .log instead of printing them")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if *files != "" {
		for _, f := range strings.Split(*files, ",") {
			if f = strings.TrimSpace(f); f != "" {
				pos = append(pos, f)
			}
		}
	}
	env, err := c.env()
	if err != nil {
		return err
	}
	return tools.DumpLog(env, pos, opts)
}

func (c *cli) bench(ctx context.Context, args []string) error {
	if len(args) > 0 && (args[0] == "report" || args[0] == "limits") {
		return bench.Command(ctx, args, c.stdout, c.stderr, tools.ErrUsage)
	}
	if len(args) == 0 || args[0] != "run" {
		return fmt.Errorf("bench: want 'bench run WORKLOAD...': %w", tools.ErrUsage)
	}
	fs := c.flags("bench run")
	opts := bench.Options{Out: c.stdout, Progress: c.stderr}
	start := fs.String("start", "", "start this broker on loopback and run against it: kzero or kfake")
	compare := fs.String("compare", "", "A,B: run against both, alternating; each host:port, kzero or kfake")
	fs.IntVar(&opts.Reps, "reps", 1, "repetitions of each workload on each broker")
	fs.Float64Var(&opts.Scale, "scale", 1, "multiply record counts and durations (0.01 for a smoke run)")
	fs.StringVar(&opts.OutDir, "out", "", "write results.jsonl and summary.txt to this folder")
	fs.StringVar(&opts.KzeroBin, "kzero-bin", "", "the kzero binary --start runs (default: build it)")
	fs.BoolVar(&opts.Profile, "pprof", false, "save CPU and allocation profiles of a started kzero into --out")
	names, err := c.parse(fs, args[1:])
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("bench run: no workload: %w", tools.ErrUsage)
	}
	if opts.Reps < 1 || opts.Scale <= 0 || opts.Scale > 1000 {
		return fmt.Errorf("bench run: --reps ≥ 1 and 0 < --scale ≤ 1000: %w", tools.ErrUsage)
	}
	env, err := c.env()
	if err != nil {
		return err
	}
	opts.JSON = env.Format == tools.JSON
	switch {
	case *start != "" && *compare != "":
		return fmt.Errorf("bench run: --start or --compare, not both: %w", tools.ErrUsage)
	case *start != "":
		if *start != "kzero" && *start != "kfake" {
			return fmt.Errorf("bench run: --start %q: want kzero or kfake: %w", *start, tools.ErrUsage)
		}
		opts.Targets = []bench.Target{{Label: *start, Start: *start}}
	case *compare != "":
		parts := strings.Split(*compare, ",")
		if len(parts) != 2 {
			return fmt.Errorf("bench run: --compare %q: want A,B: %w", *compare, tools.ErrUsage)
		}
		for _, p := range parts {
			t, err := bench.ParseTarget(p)
			if err != nil {
				return fmt.Errorf("bench run: --compare: %w: %w", err, tools.ErrUsage)
			}
			opts.Targets = append(opts.Targets, t)
		}
	default:
		addr := strings.Join(env.Brokers, ",")
		opts.Targets = []bench.Target{{Label: addr, Addr: addr}}
	}
	workloads, err := bench.ResolveWorkloads(names)
	if err != nil {
		return err
	}
	_, err = bench.Run(ctx, workloads, opts)
	return err
}

func (c *cli) noArgs(fs *flag.FlagSet, args []string) error {
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%s: unexpected arguments %q: %w", fs.Name(), pos, tools.ErrUsage)
	}
	return nil
}

// unescape reads Go escapes such as \t in a flag value, so a tab
// separator can be typed as --key-separator '\t'; a value that is not a
// valid escaped string is taken as it is.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	if u, err := strconv.Unquote(`"` + s + `"`); err == nil {
		return u
	}
	return s
}

// keyValues collects repeated key=value flags.
type keyValues map[string]string

func (m keyValues) String() string { return fmt.Sprint(map[string]string(m)) }

func (m keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	m[k] = v
	return nil
}

// stringList collects a repeated flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// intList collects a repeated integer flag; a value may also be a comma
// list.
type intList []int32

func (l *intList) String() string { return fmt.Sprint([]int32(*l)) }

func (l *intList) Set(s string) error {
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a partition number", f)
		}
		*l = append(*l, int32(n))
	}
	return nil
}
