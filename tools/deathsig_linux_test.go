package tools

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the broker killed if the test binary dies first (a
// timeout, a fuzz worker stopped by its coordinator), so none outlives it.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
