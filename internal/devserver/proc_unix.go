//go:build unix

package devserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// canDetach reports whether Options.Detach is supported on this system.
const canDetach = true

// sysProcAttr puts a detached server in its own process group, so that the
// terminal's Ctrl-C and the end of this process do not reach it. A server
// that is not detached is asked to stop (SIGTERM) when this process dies,
// where the system supports it, so killed test runs leave no servers behind.
func sysProcAttr(detach bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: detach}
	if !detach {
		setParentDeathSignal(attr)
	}
	return attr
}

// signalServer sends sig to the server process, or to its whole process group
// when group is set (a detached server leads its own group).
func signalServer(pid int, group bool, sig syscall.Signal) error {
	if group {
		return syscall.Kill(-pid, sig)
	}
	return syscall.Kill(pid, sig)
}

// processAlive reports whether a process with this id exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

var (
	interruptSignal = syscall.SIGINT
	killSignal      = syscall.SIGKILL
)

// lockBuild takes a machine-wide lock so that concurrent EnsureCLI calls (for
// example test binaries of several packages) build the CLI only once. It
// returns the function that releases the lock.
func lockBuild(ctx context.Context) (func(), error) {
	path := filepath.Join(os.TempDir(), "agentchat-temporal-cli-build.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("devserver: build lock %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("devserver: build lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("devserver: waiting for another build of the Temporal CLI: %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
