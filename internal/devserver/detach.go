package devserver

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// writePIDFile writes pid and a newline to path, creating its folder.
func writePIDFile(path string, pid int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("devserver: PID file folder: %w", err)
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return fmt.Errorf("devserver: PID file: %w", err)
	}
	return nil
}

// ReadPIDFile returns the process id stored in a PID file written by Start.
func ReadPIDFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("devserver: PID file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("devserver: PID file %s: no process id in %q", path, bytes.TrimSpace(b))
	}
	return pid, nil
}

// StopDetached stops a server started with Options.Detach: it reads pidFile,
// sends SIGINT to the server's process group, waits up to StopTimeout, then
// sends SIGKILL, and removes the file. It returns an error wrapping
// ErrNotRunning (and removes the stale file) when no such server runs; on
// Linux it also refuses a PID that now belongs to another program.
func StopDetached(pidFile string) error {
	pid, err := ReadPIDFile(pidFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %w", ErrNotRunning, err)
		}
		return err
	}
	if !processAlive(pid) || !looksLikeDevServer(pid) {
		_ = os.Remove(pidFile)
		return fmt.Errorf("%w: no dev server with pid %d (from %s)", ErrNotRunning, pid, pidFile)
	}
	if err := signalServer(pid, true, interruptSignal); err != nil {
		return fmt.Errorf("devserver: interrupt server pid %d: %w", pid, err)
	}
	if !waitGone(pid, StopTimeout) {
		if err := signalServer(pid, true, killSignal); err != nil && processAlive(pid) {
			return fmt.Errorf("devserver: kill server pid %d: %w", pid, err)
		}
		waitGone(pid, 5*time.Second)
	}
	if err := os.Remove(pidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("devserver: remove PID file: %w", err)
	}
	return nil
}

// DetachedServer returns the process id in pidFile, a server started with
// Options.Detach, and the gRPC host:port that process serves, read from its command
// line (--ip, --port) where /proc exists ("" elsewhere: unknown). It returns an error
// wrapping ErrNotRunning when pidFile is missing or its process is no dev server.
func DetachedServer(pidFile string) (pid int, address string, err error) {
	pid, err = ReadPIDFile(pidFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, "", fmt.Errorf("%w: %w", ErrNotRunning, err)
		}
		return 0, "", err
	}
	if !processAlive(pid) || isZombie(pid) || !looksLikeDevServer(pid) {
		return 0, "", fmt.Errorf("%w: no dev server with pid %d (from %s)", ErrNotRunning, pid, pidFile)
	}
	return pid, servedAddress(pid), nil
}

// servedAddress is the --ip and --port of pid's command line as host:port, "" when
// /proc or either flag is missing.
func servedAddress(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	var ip, port string
	args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--ip":
			ip = args[i+1]
		case "--port":
			port = args[i+1]
		}
	}
	if ip == "" || port == "" {
		return ""
	}
	return net.JoinHostPort(ip, port)
}

// waitGone polls until pid no longer runs (or is a zombie) or d passes.
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !processAlive(pid) || isZombie(pid) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// looksLikeDevServer guards against a reused PID: where /proc exists, the
// process's command line must be `... server start-dev ...`.
func looksLikeDevServer(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return true // no /proc: cannot tell, trust the PID file
	}
	return bytes.Contains(b, []byte("server\x00start-dev"))
}

// isZombie reports whether pid has exited but was not reaped yet (its parent
// is this process when the same process started and stops it).
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesized command name.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] == 'Z'
	}
	return false
}
