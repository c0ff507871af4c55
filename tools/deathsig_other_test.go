//go:build !linux

package tools

import "os/exec"

// dieWithParent does nothing where there is no Pdeathsig.
func dieWithParent(*exec.Cmd) {}
