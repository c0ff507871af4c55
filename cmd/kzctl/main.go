package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"kzero/tools"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(doubleDash(root, args))
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if !errors.Is(err, tools.ErrUsage) {
		for _, l := range tools.ErrorLines(err) {
			fmt.Fprintln(stderr, "kzctl:", l)
		}
		return 1
	}
	for _, l := range tools.ErrorLines(err) {
		fmt.Fprintln(stderr, "kzctl:", strings.TrimSuffix(l, ": "+tools.ErrUsage.Error()))
	}
	fmt.Fprintf(stderr, "Usage: %s\nRun '%s -h' for help.\n", useLine(cmd), cmd.CommandPath())
	return 2
}
