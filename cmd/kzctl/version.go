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

// versionString is what kzctl version prints after "kzctl ".
func versionString() string {
	info, _ := debug.ReadBuildInfo()
	return describeVersion(version, info)
}

// describeVersion says which kzctl this is: the version (v, else the
// module's), the commit it was built from (+dirty for uncommitted changes)
// when the build stamped it, and the Go release. info may be nil.
func describeVersion(v string, info *debug.BuildInfo) string {
	commit, dirty, goVersion := "", "", "unknown Go"
	if info != nil {
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
