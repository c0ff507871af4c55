//go:build unix

package tools

import (
	"os"
	"testing"
)

// TestTerminalWidth asks a pseudo-terminal's master side, which answers
// TIOCGWINSZ as a terminal does.
func TestTerminalWidth(t *testing.T) {
	f, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer f.Close()
	if _, ok := terminalWidth(f); !ok {
		t.Fatal("a pseudo-terminal not taken for a terminal")
	}
	env := &Env{Out: f, Progress: f}
	if env.progress("x", 10, "records", false) == nil {
		t.Fatal("no bar on a terminal")
	}
	if env.progress("x", 10, "records", true) != nil {
		t.Fatal("a bar over a stream whose output is the terminal")
	}
}
