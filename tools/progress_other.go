//go:build !unix

package tools

import "io"

// terminalWidth reports no terminal: kzctl draws no progress bars where it
// cannot ask the terminal (TIOCGWINSZ).
func terminalWidth(io.Writer) (int, bool) { return 0, false }
