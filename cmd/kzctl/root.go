package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kzero/tools"
)

// cli is one run of kzctl: where its input and output go, and the flags
// common to every command (persistent flags of the root).
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	brokers string
	output  string
	timeout time.Duration
	connect tools.ConnectOptions
}

const rootLong = `kzctl: operator CLI for kzero (and any Kafka-protocol cluster).

The broker is --brokers (or KZERO_BROKERS), default ` + tools.DefaultBrokers + `; --tls* and
--sasl* reach brokers that want TLS or SASL. Flags may come before or after
the arguments, and long flags may also be written with one dash (-brokers).
Every listing takes -o json.

Long operations (consume --count/--to-end, dump-log, reset-offsets --execute)
draw a progress bar on stderr when it is a terminal.

Exit status: 0 success, 1 an error (one line each on stderr), 2 a usage error.`

const rootExample = `  kzctl topic create orders --partitions 3 --config cleanup.policy=compact
  printf 'k1:hello\nk2:world\n' | kzctl produce orders --key-separator :
  kzctl consume orders --from-beginning --count 2 -o json
  kzctl group describe billing
  kzctl dump-log --print-data-log data/orders-0/00000000000000000000.log`

// newRoot builds the command tree for one run.
func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:     "kzctl",
		Short:   "Operator CLI for kzero and any Kafka-protocol cluster",
		Long:    rootLong,
		Example: rootExample,
		Version: versionString(),
		// run prints errors, once, and points to the usage.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("kzctl {{.Version}}\n")
	// A command that only groups others has no usage line of its own:
	// run bare it is a usage error (wantSubcommand).
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(),
		"{{if .Runnable}}", "{{if and .Runnable (not .HasAvailableSubCommands)}}", 1))
	root.SetFlagErrorFunc(usage)
	c.commonFlags(root.PersistentFlags())
	root.RegisterFlagCompletionFunc("output", values("text", "json"))
	// Defined here so that cobra's own has no -v.
	root.Flags().Bool("version", false, "print kzctl's version")
	root.AddCommand(c.topicCmd(), c.produceCmd(), c.consumeCmd(), c.groupCmd(), c.offsetsCmd(),
		c.clusterCmd(), c.aclCmd(), c.userCmd(), c.quotaCmd(), c.dumpLogCmd(), c.benchCmd(), versionCmd())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	usageErrors(root)
	return root
}

// commonFlags are the flags every command takes.
func (c *cli) commonFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.brokers, "brokers", "", "seed brokers, `host:port,...` (env KZERO_BROKERS; default "+tools.DefaultBrokers+")")
	fs.StringVar(&c.brokers, "bootstrap-server", "", "alias of --brokers")
	fs.StringVarP(&c.output, "output", "o", "text", "output format: `text` or json")
	// --o, as the flag package took -o before kzctl used cobra.
	fs.StringVar(&c.output, "o", "text", "")
	fs.MarkHidden("o")
	fs.DurationVar(&c.timeout, "timeout", tools.DefaultTimeout, "bound on administrative requests")
	o := &c.connect
	fs.BoolVar(&o.TLS, "tls", false, "connect with TLS (implied by the other --tls flags)")
	fs.StringVar(&o.CAFile, "tls-ca", "", "PEM `file` of the certificates that sign the brokers' (default: the system's)")
	fs.StringVar(&o.CertFile, "tls-cert", "", "PEM client certificate `file`, for brokers that ask for one")
	fs.StringVar(&o.KeyFile, "tls-key", "", "PEM `file` of the key of --tls-cert")
	fs.BoolVar(&o.InsecureSkipVerify, "tls-insecure-skip-verify", false, "accept any broker certificate (testing only)")
	fs.StringVar(&o.SASLMechanism, "sasl-mechanism", "", "SASL `mechanism`: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&o.SASLUser, "sasl-user", "", "SASL `user` name")
	fs.StringVar(&o.SASLPassword, "sasl-password", "", "SASL `password` (env KZERO_SASL_PASSWORD)")
	for _, f := range []string{"tls-ca", "tls-cert", "tls-key"} {
		cobra.MarkFlagFilename(fs, f, "pem", "crt", "key")
	}
}

// env is the tools.Env the common flags and the environment describe.
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

// usageErrors makes every command of the tree, cobra's own (help,
// completion) included, call its mistakes usage errors: a command that only
// groups others fails when run bare or with an unknown name (cobra would
// print its help and exit 0), and an argument count a command refuses
// wraps tools.ErrUsage.
func usageErrors(cmd *cobra.Command) {
	if cmd.HasSubCommands() && !cmd.Runnable() {
		cmd.Args, cmd.RunE = cobra.ArbitraryArgs, wantSubcommand
	}
	if check := cmd.Args; check != nil {
		cmd.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usage(cmd, err)
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		usageErrors(sub)
	}
}

// wantSubcommand runs a command that only groups others.
func wantSubcommand(cmd *cobra.Command, args []string) error {
	var subs []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() {
			subs = append(subs, s.Name())
		}
	}
	if len(args) == 0 {
		return usage(cmd, fmt.Errorf("want one of %s", strings.Join(subs, ", ")))
	}
	hint := ""
	cmd.SuggestionsMinimumDistance = 2
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		hint = fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
	}
	return usage(cmd, fmt.Errorf("unknown command %q%s", args[0], hint))
}

// usage makes err a usage error of cmd: it names the command (but kzctl)
// and wraps tools.ErrUsage, unless it does already (a flag value a tools
// parser refused).
func usage(cmd *cobra.Command, err error) error {
	if cmd.HasParent() {
		err = fmt.Errorf("%s: %w", strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" "), err)
	}
	if errors.Is(err, tools.ErrUsage) {
		return err
	}
	return fmt.Errorf("%w: %w", err, tools.ErrUsage)
}

// useLine is how the command is called, for the line after a usage error.
func useLine(cmd *cobra.Command) string {
	if cmd.HasAvailableSubCommands() {
		return cmd.CommandPath() + " COMMAND [flags]"
	}
	return cmd.UseLine()
}

// noArgs refuses arguments; cobra.NoArgs would call them unknown commands.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q", args)
	}
	return nil
}

// values completes a flag or argument from a fixed list.
func values(v ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(v, cobra.ShellCompDirectiveNoFileComp)
}

// withEnv is a RunE that runs f with the tools.Env of the common flags.
func (c *cli) withEnv(f func(ctx context.Context, env *tools.Env, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		env, err := c.env()
		if err != nil {
			return err
		}
		return f(cmd.Context(), env, args)
	}
}
