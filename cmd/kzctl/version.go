package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is kzctl's version when the build sets it:
//
//	go build -ldflags "-X main.version=v0.4.0" ./cmd/kzctl
//
// Unset, the version is the module's (a go install of a tagged version)
// or the commit the binary was built from.
var version string

// versionString is what kzctl version prints after "kzctl ": the version,
// the commit (with +dirty for uncommitted changes) and the Go release.
func versionString() string {
	v, commit, dirty, goVersion := version, "", "", "unknown Go"
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = info.Main.Version
		}
		goVersion = info.GoVersion
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision":
				commit = s.Value[:min(len(s.Value), 12)]
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = "+dirty"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if commit != "" {
		return fmt.Sprintf("%s (commit %s%s, %s)", v, commit, dirty, goVersion)
	}
	return fmt.Sprintf("%s (%s)", v, goVersion)
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kzctl's version, commit and Go release (also --version)",
		Args:  noArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "kzctl", cmd.Root().Version)
		},
	}
}
