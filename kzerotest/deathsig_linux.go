package kzerotest

import (
	"os/exec"
	"syscall"
)

// DieWithParent has the process killed if the test binary dies first (a
// timeout, a fuzz worker stopped by its coordinator), so none outlives it.
func DieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
