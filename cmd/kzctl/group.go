package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kzero/tools"
)

func (c *cli) groupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "group",
		Aliases: []string{"groups"},
		Short:   "List, describe, delete consumer, streams and share groups and reset their offsets",
		Long: `The group commands follow kafka-consumer-groups.sh: list, describe (the offsets
view with lag, --members, --state), delete, delete-offsets and reset-offsets.
A group is named by an argument or by --group. Streams groups (KIP-1071) are
described with StreamsGroupDescribe: --members shows each member's process
and tasks, the offsets view the partitions of its active tasks. Share groups
(KIP-932) are described with ShareGroupDescribe and DescribeShareGroupOffsets:
the offsets view shows each share partition's start offset, leader epoch and
lag; reset-offsets moves the start offsets (AlterShareGroupOffsets) and
delete-offsets deletes a topic's share-partition state (DeleteShareGroupOffsets).`,
	}
	cmd.AddCommand(c.groupList(), c.groupDescribe(), c.groupDelete(), c.groupDeleteOffsets(), c.groupResetOffsets())
	return cmd
}

// groupFlag adds --group, as kafka-consumer-groups.sh takes it: the
// names it collects come before the ones given as arguments.
func groupFlag(f *pflag.FlagSet) *[]string {
	var named []string
	f.StringArrayVar(&named, "group", nil, "group `name` (repeatable; same as an argument)")
	return &named
}

// oneGroup is the one group a command acts on, from --group or an
// argument.
func oneGroup(cmd *cobra.Command, named, args []string) (string, error) {
	if g := append(named, args...); len(g) == 1 {
		return g[0], nil
	}
	return "", usage(cmd, fmt.Errorf("want one group, got %d", len(named)+len(args)))
}

func (c *cli) groupList() *cobra.Command {
	var states []string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List groups: type, protocol, state",
		Example: "  kzctl group list --state empty",
		Args:    noArgs,
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, _ []string) error {
			filter, err := tools.ParseGroupStates(states)
			if err != nil {
				return err
			}
			return tools.GroupList(ctx, env, filter)
		}),
	}
	cmd.Flags().StringArrayVar(&states, "state", nil, "list only groups in this `state` (repeatable, or a comma list)")
	return cmd
}

func (c *cli) groupDescribe() *cobra.Command {
	var members, state bool
	cmd := &cobra.Command{
		Use:   "describe [GROUP...]",
		Short: "Describe groups (all when none is named): offsets and lag, --members or --state",
		Example: `  kzctl group describe billing
  kzctl group describe billing --members`,
	}
	named := groupFlag(cmd.Flags())
	cmd.RunE = c.withEnv(func(ctx context.Context, env *tools.Env, args []string) error {
		view := tools.GroupOffsets
		switch {
		case members && state:
			return fmt.Errorf("group describe: --members or --state, not both: %w", tools.ErrUsage)
		case members:
			view = tools.GroupMembers
		case state:
			view = tools.GroupStateView
		}
		return tools.GroupDescribe(ctx, env, append(*named, args...), view)
	})
	cmd.Flags().BoolVar(&members, "members", false, "one row per member, with its assignment")
	cmd.Flags().BoolVar(&state, "state", false, "one row per group: coordinator, strategy, state, members")
	return cmd
}

func (c *cli) groupDelete() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete GROUP...",
		Short: "Delete groups that have no members",
	}
	named := groupFlag(cmd.Flags())
	cmd.RunE = c.withEnv(func(ctx context.Context, env *tools.Env, args []string) error {
		return tools.GroupDelete(ctx, env, append(*named, args...))
	})
	return cmd
}

func (c *cli) groupDeleteOffsets() *cobra.Command {
	var topics []string
	cmd := &cobra.Command{
		Use:   "delete-offsets GROUP --topic T[:P,P]...",
		Short: "Delete a group's committed offsets of topics or partitions",
	}
	named := groupFlag(cmd.Flags())
	cmd.RunE = c.withEnv(func(ctx context.Context, env *tools.Env, args []string) error {
		g, err := oneGroup(cmd, *named, args)
		if err != nil {
			return err
		}
		return tools.GroupDeleteOffsets(ctx, env, g, topics)
	})
	cmd.Flags().StringArrayVar(&topics, "topic", nil, "`topic`, or topic:partition,... (repeatable)")
	return cmd
}

// resetTargets are the flags of reset-offsets that say where to: exactly
// one is given.
var resetTargets = []struct {
	flag string
	kind tools.ResetKind
}{
	{"to-earliest", tools.ResetToEarliest}, {"to-latest", tools.ResetToLatest},
	{"to-offset", tools.ResetToOffset}, {"to-datetime", tools.ResetToDatetime},
	{"shift-by", tools.ResetShiftBy}, {"by-duration", tools.ResetByDuration},
}

func (c *cli) groupResetOffsets() *cobra.Command {
	var opts tools.ResetOptions
	var toOffset, shiftBy int64
	var toDatetime, byDuration string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "reset-offsets GROUP (--topic T[:P,P]... | --all-topics) TARGET [--dry-run | --execute]",
		Short: "Move a group's committed offsets; prints the plan unless --execute",
		Long: `Move the committed offsets of a group that has no members. TARGET is one of
--to-earliest, --to-latest, --to-offset N, --to-datetime RFC3339, --shift-by N
and --by-duration 1h30m|PT1H30M. Without --execute it prints the plan only.`,
		Example: "  kzctl group reset-offsets billing --topic orders --to-datetime 2024-05-01T00:00:00Z --execute",
	}
	named := groupFlag(cmd.Flags())
	f := cmd.Flags()
	f.StringArrayVar(&opts.Topics, "topic", nil, "`topic`, or topic:partition,... (repeatable)")
	f.BoolVar(&opts.AllTopics, "all-topics", false, "every topic the group has committed offsets for")
	f.Bool("to-earliest", false, "reset to the log start offset")
	f.Bool("to-latest", false, "reset to the log end offset")
	f.Int64Var(&toOffset, "to-offset", 0, "reset to this `offset`")
	f.StringVar(&toDatetime, "to-datetime", "", "reset to the first offset at or after this `time` (RFC 3339)")
	f.Int64Var(&shiftBy, "shift-by", 0, "move the committed offset by this `many` (negative: back)")
	f.StringVar(&byDuration, "by-duration", "", "reset to the first offset at or after this `long` ago (1h30m or PT1H30M)")
	f.BoolVar(&dryRun, "dry-run", false, "print the plan only (the default)")
	f.BoolVar(&opts.Execute, "execute", false, "commit the new offsets")
	cmd.RunE = c.withEnv(func(ctx context.Context, env *tools.Env, args []string) error {
		var err error
		if opts.Group, err = oneGroup(cmd, *named, args); err != nil {
			return err
		}
		if dryRun && opts.Execute {
			return fmt.Errorf("group reset-offsets: --dry-run or --execute, not both: %w", tools.ErrUsage)
		}
		given := 0
		for _, t := range resetTargets {
			// --to-earliest=false is no target.
			if fl := f.Lookup(t.flag); fl.Changed && (fl.Value.Type() != "bool" || fl.Value.String() == "true") {
				given, opts.To.Kind = given+1, t.kind
			}
		}
		if given != 1 {
			return fmt.Errorf("group reset-offsets: give one of --to-earliest, --to-latest, --to-offset, --to-datetime, --shift-by and --by-duration (got %d): %w", given, tools.ErrUsage)
		}
		switch opts.To.Kind {
		case tools.ResetToOffset:
			opts.To.Offset = toOffset
		case tools.ResetShiftBy:
			opts.To.Offset = shiftBy
		case tools.ResetToDatetime:
			if opts.To.Time, err = tools.ParseResetDatetime(toDatetime); err != nil {
				return err
			}
		case tools.ResetByDuration:
			if opts.To.Duration, err = tools.ParseResetDuration(byDuration); err != nil {
				return err
			}
		}
		return tools.GroupResetOffsets(ctx, env, opts)
	})
	return cmd
}
