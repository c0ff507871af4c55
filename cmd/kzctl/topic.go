package main

import (
	"context"

	"github.com/spf13/cobra"

	"kzero/tools"
)

func (c *cli) topicCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "topic",
		Aliases: []string{"topics"},
		Short:   "Create, list, describe, delete and alter topics",
	}
	cmd.AddCommand(c.topicCreate(), c.topicList(), c.topicDescribe(), c.topicDelete(),
		c.topicAlterConfig(), c.topicAddPartitions())
	return cmd
}

func (c *cli) topicCreate() *cobra.Command {
	spec := tools.TopicSpec{Configs: map[string]string{}}
	cmd := &cobra.Command{
		Use:     "create NAME...",
		Short:   "Create topics",
		Example: "  kzctl topic create orders --partitions 3 --config cleanup.policy=compact",
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, names []string) error {
			spec.Names = names
			return tools.TopicCreate(ctx, env, spec)
		}),
	}
	f := cmd.Flags()
	f.Int32Var(&spec.Partitions, "partitions", -1, "partitions (-1: the broker's num.partitions)")
	f.Int16Var(&spec.ReplicationFactor, "replication-factor", -1, "replicas of each partition (-1: the broker's default)")
	f.Func("config", "topic config `key=value` (repeatable)", keyValues(spec.Configs))
	return cmd
}

func (c *cli) topicList() *cobra.Command {
	var internal bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List topics",
		Args:  noArgs,
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, _ []string) error {
			return tools.TopicList(ctx, env, internal)
		}),
	}
	cmd.Flags().BoolVar(&internal, "internal", false, "include internal topics")
	return cmd
}

func (c *cli) topicDescribe() *cobra.Command {
	return &cobra.Command{
		Use:   "describe [NAME...]",
		Short: "Describe topics (all when none is named): partitions, leaders, replicas, configs",
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, names []string) error {
			return tools.TopicDescribe(ctx, env, names)
		}),
	}
}

func (c *cli) topicDelete() *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete topics",
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, names []string) error {
			return tools.TopicDelete(ctx, env, names)
		}),
	}
}

func (c *cli) topicAlterConfig() *cobra.Command {
	set := map[string]string{}
	var del []string
	cmd := &cobra.Command{
		Use:   "alter-config NAME...",
		Short: "Set topic configs, or reset them to their defaults",
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, names []string) error {
			return tools.TopicAlterConfig(ctx, env, names, set, del)
		}),
	}
	f := cmd.Flags()
	f.Func("set", "config `key=value` to set (repeatable)", keyValues(set))
	f.StringArrayVar(&del, "delete", nil, "config `key` to reset to its default (repeatable)")
	return cmd
}

func (c *cli) topicAddPartitions() *cobra.Command {
	var num, total int
	cmd := &cobra.Command{
		Use:   "add-partitions NAME... (--num N | --total N)",
		Short: "Add partitions to topics",
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, names []string) error {
			return tools.TopicAddPartitions(ctx, env, names, num, total)
		}),
	}
	cmd.Flags().IntVar(&num, "num", 0, "partitions to add")
	cmd.Flags().IntVar(&total, "total", 0, "new partition count")
	return cmd
}
