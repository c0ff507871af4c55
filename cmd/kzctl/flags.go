package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// doubleDash rewrites the long flags written with one dash (-brokers,
// -partitions=3), which the flag package kzctl used before cobra took as
// well as --brokers, into the two-dash form pflag wants. A one-dash word
// that is no long flag of the command (-o, -h, -1, -ojson) stays as it is.
// It walks args as cobra will: down the subcommands the leading arguments
// name, over the values of flags that take one, up to "--".
func doubleDash(root *cobra.Command, args []string) []string {
	out := slices.Clone(args)
	cmd, descend := root, true
	flags := allFlags(cmd)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if sub := subcommand(cmd, a); descend && sub != nil {
				cmd, flags = sub, allFlags(sub)
			} else {
				descend = false
			}
			continue
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *pflag.Flag
		switch {
		case strings.HasPrefix(a, "--"):
			f = flags.Lookup(name)
		case len(name) == 1:
			f = flags.ShorthandLookup(name)
		default:
			if f = flags.Lookup(name); f != nil {
				out[i] = "-" + a
			}
		}
		if f != nil && f.NoOptDefVal == "" && !inline {
			i++ // the flag's value, whatever it looks like
		}
	}
	return out
}

// allFlags are the flags cmd parses: its own, those it inherits, and help.
func allFlags(cmd *cobra.Command) *pflag.FlagSet {
	cmd.InitDefaultHelpFlag()
	cmd.InheritedFlags() // merges the persistent flags of the parents into Flags
	return cmd.Flags()
}

// subcommand is cmd's subcommand called name (or an alias of it), nil if
// none is.
func subcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, s := range cmd.Commands() {
		if s.Name() == name || s.HasAlias(name) {
			return s
		}
	}
	return nil
}

// keyValues collects repeated key=value flags into m. A value may hold
// commas (--config cleanup.policy=compact,delete), so there is one pair
// per flag.
func keyValues(m map[string]string) func(string) error {
	return func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return fmt.Errorf("%q is not key=value", s)
		}
		m[k] = v
		return nil
	}
}

// partitions collects a repeated partition flag into l; a value may also
// be a comma list.
func partitions(l *[]int32) func(string) error {
	return func(s string) error {
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
			if err != nil || n < 0 {
				return fmt.Errorf("%q is not a partition number", f)
			}
			*l = append(*l, int32(n))
		}
		return nil
	}
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
