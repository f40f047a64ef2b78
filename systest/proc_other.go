//go:build !linux

package systest

import "os/exec"

// dieWithParent does nothing where the kernel offers no parent-death signal.
func dieWithParent(*exec.Cmd) {}
