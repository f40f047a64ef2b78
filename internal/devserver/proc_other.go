//go:build !unix

package devserver

import (
	"context"
	"os"
	"syscall"
)

// canDetach reports whether Options.Detach is supported on this system.
const canDetach = false

func sysProcAttr(bool) *syscall.SysProcAttr { return nil }

// signalServer can only kill on this system; there is no SIGINT to send.
func signalServer(pid int, _ bool, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

var (
	interruptSignal = syscall.SIGINT
	killSignal      = syscall.SIGKILL
)

func lockBuild(context.Context) (func(), error) { return func() {}, nil }
