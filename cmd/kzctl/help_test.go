package main

// Help on every command, shell completion and the version: what cobra
// gives, checked over the whole tree so a command added later is covered.

import (
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commands is every command of kzctl's tree, the root first.
func commands() []*cobra.Command {
	var all []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		all = append(all, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot(nil, io.Discard, io.Discard))
	return all
}

func TestHelpOnEveryCommand(t *testing.T) {
	all := commands()
	if len(all) < 30 {
		t.Fatalf("%d commands in the tree", len(all))
	}
	for _, c := range all {
		path := strings.Fields(c.CommandPath())[1:]
		for _, h := range []string{"--help", "-h"} {
			args := append(path[:len(path):len(path)], h)
			code, stdout, stderr := kzctl(t, "", args...)
			if code != 0 || stderr != "" || !strings.Contains(stdout, "Usage:\n  kzctl") {
				t.Errorf("kzctl %q: exit %d, stderr %q, stdout %q", args, code, stderr, stdout)
				continue
			}
			// Its own flags and the common ones it inherits.
			c.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if !f.Hidden && !strings.Contains(stdout, "--"+f.Name+" ") {
					t.Errorf("kzctl %q does not mention --%s:\n%s", args, f.Name, stdout)
				}
			})
			if c.Name() == "produce" && !strings.Contains(stdout, "--brokers host:port") {
				t.Errorf("kzctl %q does not mention --brokers:\n%s", args, stdout)
			}
		}
	}
	// help COMMAND is COMMAND --help.
	_, want, _ := kzctl(t, "", "topic", "create", "--help")
	if code, stdout, _ := kzctl(t, "", "help", "topic", "create"); code != 0 || stdout != want {
		t.Errorf("help topic create: exit %d\n%s\nwant\n%s", code, stdout, want)
	}
}

func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "__start_kzctl",
		"zsh":  "#compdef kzctl",
		"fish": "complete -c kzctl",
	} {
		code, stdout, stderr := kzctl(t, "", "completion", shell)
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("completion %s: exit %d, stderr %q, %d bytes without %q", shell, code, stderr, len(stdout), want)
		}
	}
	// What the scripts ask kzctl for as one types.
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"to"}, []string{"topic"}},
		{[]string{"topic", ""}, []string{"create", "list", "describe", "delete", "alter-config", "add-partitions"}},
		{[]string{"topic", "list", "-o", ""}, []string{"text", "json"}},
		{[]string{"produce", "t", "--compression", ""}, []string{"none", "gzip", "snappy", "lz4", "zstd"}},
		{[]string{"bench", "run", ""}, []string{"all", "produce-1k-max", "consume-1gib-catchup"}},
		{[]string{"bench", "run", "all", "--start", ""}, []string{"kzero", "kfake"}},
	} {
		code, stdout, stderr := kzctl(t, "", append([]string{cobra.ShellCompNoDescRequestCmd}, c.args...)...)
		got := strings.Fields(stdout)
		for _, w := range c.want {
			if code != 0 || !strings.Contains(" "+strings.Join(got, " ")+" ", " "+w+" ") {
				t.Errorf("completing %q: exit %d, got %q (stderr %q), want %s among them", c.args, code, got, stderr, w)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	want := "kzctl " + versionString() + "\n"
	if !strings.Contains(want, runtime.Version()) {
		t.Errorf("version %q does not name the Go release", want)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if code, stdout, stderr := kzctl(t, "", args...); code != 0 || stdout != want || stderr != "" {
			t.Errorf("kzctl %q: exit %d, %q %q, want %q", args, code, stdout, stderr, want)
		}
	}
}

func TestDescribeVersion(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, c := range []struct {
		v    string
		info *debug.BuildInfo
		want string
	}{
		{"", stamped, "(devel) (commit 0123456789ab+dirty, go1.26.8)"},
		{"v0.4.0", stamped, "v0.4.0 (commit 0123456789ab+dirty, go1.26.8)"},
		{"", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.1"}}, "v0.3.1 (go1.26.8)"},
		{"", nil, "(devel) (unknown Go)"},
	} {
		if got := describeVersion(c.v, c.info); got != c.want {
			t.Errorf("describeVersion(%q, %+v) = %q, want %q", c.v, c.info, got, c.want)
		}
	}
}

// TestBinary runs kzctl as a process, built with its version set at link
// time: the exit statuses main gives, and the version the build names.
func TestBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kzctl")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7-test", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build kzctl: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		code int
		out  string // a prefix and a suffix, around the commit when the build stamps it
	}{
		{[]string{"version"}, 0, "kzctl v9.8.7-test (*" + runtime.Version() + ")\n"},
		{[]string{"topic", "--help"}, 0, "*"},
		{[]string{"topic"}, 2, "*"},
		{[]string{"--brokers", "127.0.0.1:1", "--timeout", "1s", "cluster", "info"}, 1, "*"},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Env = append(cmd.Environ(), "KZERO_BROKERS=")
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		prefix, suffix, _ := strings.Cut(c.out, "*")
		if code != c.code || !strings.HasPrefix(string(out), prefix) || !strings.HasSuffix(string(out), suffix) {
			t.Errorf("kzctl %q: exit %d, want %d; stdout %q", c.args, code, c.code, out)
		}
	}
}

func TestDoubleDash(t *testing.T) {
	root := newRoot(nil, io.Discard, io.Discard)
	for _, c := range []struct{ in, want string }{
		{"-brokers h:1 topic list", "--brokers h:1 topic list"},
		{"topic create t -partitions=3 -config a=b", "topic create t --partitions=3 --config a=b"},
		{"-o json topic list -h", "-o json topic list -h"},
		{"-help", "--help"},
		{"dump-log -ojson f", "dump-log -ojson f"},
		// The values of flags stay as they are, whatever they look like.
		{"produce t --key-separator -file -file f", "produce t --key-separator -file --file f"},
		{"group reset-offsets g -shift-by -1 -topic t", "group reset-offsets g --shift-by -1 --topic t"},
		{"consume t -partition -1", "consume t --partition -1"},
		// A flag's meaning is its command's: --state is a bool of group
		// describe and takes a value in group list.
		{"groups describe -state g", "groups describe --state g"},
		{"group list -state -members", "group list --state -members"},
		// Past "--" everything is an argument.
		{"topic delete -- -partitions", "topic delete -- -partitions"},
		// An argument that is no subcommand stops the descent.
		{"produce list -internal", "produce list -internal"},
	} {
		if got := strings.Join(doubleDash(root, strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}
