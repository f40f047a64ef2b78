package systest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the worker process when the test binary dies,
// so that a test killed by its timeout leaves no worker behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
