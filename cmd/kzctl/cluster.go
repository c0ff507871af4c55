package main

import (
	"context"

	"github.com/spf13/cobra"

	"kzero/tools"
)

func (c *cli) clusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Show the cluster, elect leaders, reassign partitions, move replicas between log dirs",
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
	cmd.AddCommand(&cobra.Command{
		Use:     "log-dirs [TOPIC[:PARTITION,...]...]",
		Short:   "List each broker's log dirs with the replicas in them, and the replicas moving between dirs",
		Example: "  kzctl cluster log-dirs orders",
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, topics []string) error {
			return tools.ClusterLogDirs(ctx, env, topics)
		}),
	}, &cobra.Command{
		Use:     "move-replica-dir BROKER DIR TOPIC:PARTITION,...",
		Short:   "Move a broker's replicas to another of its log dirs, while they serve",
		Example: "  kzctl cluster move-replica-dir 1 /var/lib/kzero/disk2 orders:0,1",
		Args:    cobra.MinimumNArgs(3),
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, args []string) error {
			return tools.ClusterMoveReplicaDir(ctx, env, args[0], args[1], args[2:])
		}),
	})
	cmd.AddCommand(c.clusterElectLeaders(), c.clusterReassign(), &cobra.Command{
		Use:     "list-reassignments [TOPIC[:PARTITION,...]...]",
		Short:   "List the partition reassignments in progress: replicas, and those being added and removed",
		Example: "  kzctl cluster list-reassignments orders",
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, topics []string) error {
			return tools.ClusterListReassignments(ctx, env, topics)
		}),
	})
	return cmd
}

func (c *cli) clusterElectLeaders() *cobra.Command {
	var unclean bool
	cmd := &cobra.Command{
		Use:   "elect-leaders [TOPIC[:PARTITION,...]...]",
		Short: "Move leaderships to preferred replicas, or elect leaders for leaderless partitions (--unclean); all partitions when none is named",
		Example: "  kzctl cluster elect-leaders\n" +
			"  kzctl cluster elect-leaders orders:0,1 --unclean",
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, topics []string) error {
			return tools.ClusterElectLeaders(ctx, env, unclean, topics)
		}),
	}
	cmd.Flags().BoolVar(&unclean, "unclean", false, "elect from outside the ISR when no in-sync replica can lead (records may be lost)")
	return cmd
}

func (c *cli) clusterReassign() *cobra.Command {
	var keepRF bool
	cmd := &cobra.Command{
		Use:   "reassign TOPIC:PARTITION=BROKER,...|cancel...",
		Short: "Move partitions to other brokers (target replicas in order), or cancel a reassignment in progress",
		Example: "  kzctl cluster reassign orders:0=2,3,4\n" +
			"  kzctl cluster reassign orders:0=cancel",
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, specs []string) error {
			return tools.ClusterReassign(ctx, env, specs, keepRF)
		}),
	}
	cmd.Flags().BoolVar(&keepRF, "keep-replication-factor", false, "refuse targets that change a partition's replication factor")
	return cmd
}
