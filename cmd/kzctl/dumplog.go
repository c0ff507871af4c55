package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"kzero/tools"
)

func (c *cli) dumpLogCmd() *cobra.Command {
	var opts tools.DumpOptions
	var files string
	cmd := &cobra.Command{
		Use:   "dump-log FILE|DIR...",
		Short: "Print segment, index, transaction index and producer snapshot files, as kafka-dump-log.sh",
		Long: `Print the files of a partition's log straight from disk (opened read-only): .log
segments, .index, .timeindex, .txnindex and .snapshot files, or every such file in
a directory.`,
		Example: "  kzctl dump-log --print-data-log data/orders-0/00000000000000000000.log",
		RunE: c.withEnv(func(_ context.Context, env *tools.Env, paths []string) error {
			for _, f := range strings.Split(files, ",") {
				if f = strings.TrimSpace(f); f != "" {
					paths = append(paths, f)
				}
			}
			return tools.DumpLog(env, paths, opts)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&files, "files", "", "comma-separated `files`, as kafka-dump-log.sh takes them")
	f.BoolVar(&opts.PrintDataLog, "print-data-log", false, "print record keys, values and headers")
	f.BoolVar(&opts.DeepIteration, "deep-iteration", false, "decode the records of every batch")
	f.BoolVar(&opts.IndexSanityCheck, "index-sanity-check", false, "check index entries against the .log instead of printing them")
	return cmd
}
