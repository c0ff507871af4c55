package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kzero/tools"
)

// aclFlags are kafka-acls.sh's resource, principal and operation flags.
func aclFlags(fs *pflag.FlagSet, s *tools.ACLSpec, create bool) {
	fs.StringSliceVar(&s.Topics, "topic", nil, "topic `name`s (with --resource-pattern-type prefixed, prefixes; * is every topic)")
	fs.StringSliceVar(&s.Groups, "group", nil, "consumer group `id`s")
	fs.StringSliceVar(&s.TransactionalIDs, "transactional-id", nil, "transactional `id`s")
	fs.BoolVar(&s.Cluster, "cluster", false, "the cluster resource")
	def := "any"
	if create {
		def = "literal"
	}
	fs.StringVar(&s.Pattern, "resource-pattern-type", "", "`literal`, prefixed, match or any (default "+def+")")
	fs.StringSliceVar(&s.Allow, "allow-principal", nil, "principals allowed, as `User:name`")
	fs.StringSliceVar(&s.Deny, "deny-principal", nil, "principals denied, as `User:name`")
	fs.StringSliceVar(&s.AllowHosts, "allow-host", nil, "hosts the allowed principals may connect from (default *)")
	fs.StringSliceVar(&s.DenyHosts, "deny-host", nil, "hosts the denied principals are denied from (default *)")
	fs.StringSliceVar(&s.Operations, "operation", nil, "`op`s: read, write, create, delete, alter, describe, cluster-action, describe-configs, alter-configs, idempotent-write, all")
}

func (c *cli) aclCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acl",
		Short: "List, create and delete ACLs (kafka-acls.sh)",
	}
	var list tools.ACLSpec
	listCmd := &cobra.Command{
		Use:   "list",
		Short: "List the ACLs matching the flags (every ACL without flags)",
		Example: "  kzctl acl list\n" +
			"  kzctl acl list --topic orders --principal User:alice",
		Args: noArgs,
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, _ []string) error {
			return tools.ACLList(ctx, env, list)
		}),
	}
	aclFlags(listCmd.Flags(), &list, false)
	listCmd.Flags().StringVar(&list.Principal, "principal", "", "only ACLs of this principal, allowed or denied (`User:name`)")

	var create tools.ACLSpec
	createCmd := &cobra.Command{
		Use:   "create",
		Short: "Allow or deny principals operations on resources",
		Example: "  kzctl acl create --allow-principal User:alice --operation read,describe --topic orders --group billing\n" +
			"  kzctl acl create --allow-principal User:etl --operation write --topic logs- --resource-pattern-type prefixed\n" +
			"  kzctl acl create --deny-principal User:mallory --operation all --cluster",
		Args: noArgs,
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, _ []string) error {
			return tools.ACLCreate(ctx, env, create)
		}),
	}
	aclFlags(createCmd.Flags(), &create, true)

	var del tools.ACLSpec
	deleteCmd := &cobra.Command{
		Use:   "delete",
		Short: "Delete the ACLs matching the flags, and print them",
		Example: "  kzctl acl delete --allow-principal User:alice --topic orders\n" +
			"  kzctl acl delete --topic logs- --resource-pattern-type prefixed",
		Args: noArgs,
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, _ []string) error {
			return tools.ACLDelete(ctx, env, del)
		}),
	}
	aclFlags(deleteCmd.Flags(), &del, true)
	cmd.AddCommand(listCmd, createCmd, deleteCmd)
	return cmd
}

func (c *cli) userCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Manage users' SCRAM credentials",
	}
	scram := &cobra.Command{
		Use:   "scram",
		Short: "List, set and delete SCRAM-SHA-256/512 credentials (stored salted in the metadata log)",
	}
	scram.AddCommand(&cobra.Command{
		Use:     "list [USER...]",
		Short:   "List the users' SCRAM mechanisms and iterations (every user with one when none is named)",
		Example: "  kzctl user scram list\n  kzctl user scram list alice",
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, users []string) error {
			return tools.UserScramList(ctx, env, users)
		}),
	})
	var mech, password string
	var iterations int32
	set := &cobra.Command{
		Use:     "set USER",
		Short:   "Set a user's password for a SCRAM mechanism",
		Example: "  kzctl user scram set alice --mechanism SCRAM-SHA-512 --password alice-secret",
		Args:    cobra.ExactArgs(1),
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, args []string) error {
			return tools.UserScramSet(ctx, env, args[0], mech, password, iterations)
		}),
	}
	set.Flags().StringVar(&mech, "mechanism", "SCRAM-SHA-256", "`SCRAM-SHA-256` or SCRAM-SHA-512")
	set.Flags().StringVar(&password, "password", "", "the password (the client salts it; the broker never sees it)")
	set.Flags().Int32Var(&iterations, "iterations", 8192, "PBKDF2 iterations, 4096-16384")
	var delMech string
	del := &cobra.Command{
		Use:     "delete USER",
		Short:   "Delete a user's credential for a SCRAM mechanism",
		Example: "  kzctl user scram delete alice --mechanism SCRAM-SHA-512",
		Args:    cobra.ExactArgs(1),
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, args []string) error {
			return tools.UserScramDelete(ctx, env, args[0], delMech)
		}),
	}
	del.Flags().StringVar(&delMech, "mechanism", "SCRAM-SHA-256", "`SCRAM-SHA-256` or SCRAM-SHA-512")
	scram.AddCommand(set, del)
	cmd.AddCommand(scram)
	return cmd
}

// quotaEntityFlags are kafka-configs.sh's entity flags for client quotas.
func quotaEntityFlags(fs *pflag.FlagSet, e *tools.QuotaEntity) {
	fs.StringVar(&e.User, "user", "", "the user `name` (<default>: the default user)")
	fs.StringVar(&e.ClientID, "client-id", "", "the client `id` (<default>: the default client id)")
	fs.BoolVar(&e.UserDefault, "user-defaults", false, "the default user (as --user '<default>')")
	fs.BoolVar(&e.ClientIDDefault, "client-defaults", false, "the default client id (as --client-id '<default>')")
	fs.StringVar(&e.IP, "ip", "", "the client `address` (<default>: every address), for connection_creation_rate")
}

func (c *cli) quotaCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Describe and alter client quotas (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate; connection_creation_rate per ip)",
	}
	var de tools.QuotaEntity
	var strict bool
	describe := &cobra.Command{
		Use:   "describe",
		Short: "Print the client quotas of the entities matching the flags (every quota without flags)",
		Example: "  kzctl quota describe\n" +
			"  kzctl quota describe --user alice --strict",
		Args: noArgs,
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, _ []string) error {
			return tools.QuotaDescribe(ctx, env, de, strict)
		}),
	}
	quotaEntityFlags(describe.Flags(), &de)
	describe.Flags().BoolVar(&strict, "strict", false, "only entities with exactly the parts named")
	var ae tools.QuotaEntity
	var add, del []string
	alter := &cobra.Command{
		Use:   "alter",
		Short: "Set or remove quota values of one entity (user, client id, or both)",
		Example: "  kzctl quota alter --user alice --add-config producer_byte_rate=1048576,consumer_byte_rate=2097152\n" +
			"  kzctl quota alter --client-defaults --add-config request_percentage=50\n" +
			"  kzctl quota alter --user alice --client-id etl --delete-config producer_byte_rate\n" +
			"  kzctl quota alter --ip 10.0.0.7 --add-config connection_creation_rate=10",
		Args: noArgs,
		RunE: c.withEnv(func(ctx context.Context, env *tools.Env, _ []string) error {
			return tools.QuotaAlter(ctx, env, ae, add, del)
		}),
	}
	quotaEntityFlags(alter.Flags(), &ae)
	alter.Flags().StringSliceVar(&add, "add-config", nil, "quota values to set, `key=value,...`")
	alter.Flags().StringSliceVar(&del, "delete-config", nil, "quota keys to remove, `key,...`")
	cmd.AddCommand(describe, alter)
	return cmd
}
