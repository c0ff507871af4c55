package main

// The commands that write and read records: produce, consume, offsets.

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"kzero/tools"
)

func (c *cli) produceCmd() *cobra.Command {
	opts := tools.ProduceOptions{Partition: -1}
	var file string
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Write records read from stdin (or --file), one per line",
		Example: `  printf 'k1:hello\nk2:world\n' | kzctl produce orders --key-separator :
  kzctl produce orders --file records.txt --compression zstd --idempotent`,
		Args: cobra.ExactArgs(1),
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, args []string) error {
			opts.Topic, opts.Input = args[0], c.stdin
			opts.KeySeparator = unescape(opts.KeySeparator)
			if file != "" {
				f, err := os.Open(file)
				if err != nil {
					return err
				}
				defer f.Close()
				opts.Input = f
			}
			return tools.Produce(ctx, env, opts)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&file, "file", "", "read records from this `file` instead of stdin")
	f.StringVar(&opts.KeySeparator, "key-separator", "", "split each line into key and value at this `string` (Go escapes such as \\t work)")
	f.Func("header", "header `key=value` added to every record (repeatable)", func(s string) error {
		h, err := tools.ParseHeader(s)
		if err != nil {
			return err
		}
		opts.Headers = append(opts.Headers, h)
		return nil
	})
	f.Int32Var(&opts.Partition, "partition", -1, "partition to write to (-1: the partitioner picks)")
	f.StringVar(&opts.Compression, "compression", "none", "none, gzip, snappy, lz4 or zstd")
	f.StringVar(&opts.Acks, "acks", "all", "all (-1), 1 or 0")
	f.BoolVar(&opts.Idempotent, "idempotent", false, "idempotent producer (acks all)")
	f.StringVar(&opts.TransactionalID, "transactional-id", "", "send all records in one transaction with this `id`")
	f.IntVar(&opts.MaxLineBytes, "max-line-bytes", 16<<20, "longest line accepted")
	cmd.MarkFlagFilename("file")
	cmd.RegisterFlagCompletionFunc("compression", values("none", "gzip", "snappy", "lz4", "zstd"))
	cmd.RegisterFlagCompletionFunc("acks", values("all", "1", "0"))
	return cmd
}

func (c *cli) consumeCmd() *cobra.Command {
	var opts tools.ConsumeOptions
	var timeoutMs int
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Print records, as text lines or JSON lines (-o json)",
		Example: `  kzctl consume orders --from-beginning --count 2 -o json
  kzctl consume orders --from-beginning --to-end --group billing`,
		Args: cobra.ExactArgs(1),
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, args []string) error {
			opts.Topic = args[0]
			opts.IdleTimeout = time.Duration(timeoutMs) * time.Millisecond
			return tools.Consume(ctx, env, opts)
		}),
	}
	f := cmd.Flags()
	f.BoolVar(&opts.FromBeginning, "from-beginning", false, "start at the earliest offset")
	f.StringVar(&opts.Offset, "offset", "", "start at this `offset`, or earliest or latest")
	f.Int64Var(&opts.Timestamp, "timestamp", -1, "start at the first record at or after this `millisecond`")
	f.IntVar(&opts.Count, "count", 0, "stop after this many records (0: never)")
	f.IntVar(&opts.Count, "max-messages", 0, "alias of --count")
	f.BoolVar(&opts.ToEnd, "to-end", false, "stop at the end offsets as of the start")
	f.IntVar(&timeoutMs, "timeout-ms", 0, "stop after this many milliseconds without a record (0: never)")
	f.Func("partition", "consume only this `partition` (repeatable, or a comma list)", partitions(&opts.Partitions))
	f.StringVar(&opts.Isolation, "isolation", "read_uncommitted", "read_uncommitted or read_committed")
	f.StringVar(&opts.Group, "group", "", "consume as a member of this `group`")
	f.BoolVar(&opts.ValueOnly, "value-only", false, "print only values, one per line")
	cmd.RegisterFlagCompletionFunc("offset", values("earliest", "latest"))
	cmd.RegisterFlagCompletionFunc("isolation", values("read_uncommitted", "read_committed"))
	return cmd
}

func (c *cli) offsetsCmd() *cobra.Command {
	var opts tools.OffsetsOptions
	cmd := &cobra.Command{
		Use:   "offsets [TOPIC...]",
		Short: "Print the start and end offsets of partitions, or the offset at a time",
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, topics []string) error {
			opts.Topics = topics
			return tools.Offsets(ctx, env, opts)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&opts.Time, "time", "", "earliest, latest, max-timestamp or a millisecond timestamp")
	f.StringVar(&opts.Isolation, "isolation", "read_uncommitted", "read_uncommitted or read_committed (end = last stable offset)")
	cmd.RegisterFlagCompletionFunc("time", values("earliest", "latest", "max-timestamp"))
	cmd.RegisterFlagCompletionFunc("isolation", values("read_uncommitted", "read_committed"))
	return cmd
}
