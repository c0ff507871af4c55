package main

import (
	"context"

	"github.com/spf13/cobra"

	"kzero/tools"
)

func (c *cli) clusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Show the cluster",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "info",
		Short: "Print the cluster id, the controller and the brokers",
		Args:  noArgs,
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, _ []string) error {
			return tools.ClusterInfo(ctx, env)
		}),
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "quorum",
		Short: "Print the metadata quorum: leader, epoch, high watermark, and each voter's progress",
		Args:  noArgs,
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, _ []string) error {
			return tools.ClusterQuorum(ctx, env)
		}),
	})
	return cmd
}
