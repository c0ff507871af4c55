//go:build !linux

package kzerotest

import "os/exec"

// DieWithParent does nothing where there is no Pdeathsig.
func DieWithParent(*exec.Cmd) {}
