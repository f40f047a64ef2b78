//go:build unix

package devserver

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDetachedServerStoppedByPIDFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "temporal.db")
	s := startServer(t, Options{Address: "127.0.0.1:0", DBFile: db, UIPort: Headless, Detach: true})
	assert.Equal(t, db+".pid", s.PIDFile, "PID file defaults to DBFile.pid")
	pid, err := ReadPIDFile(s.PIDFile)
	require.NoError(t, err)
	assert.Equal(t, s.PID, pid)
	pgid, err := syscall.Getpgid(pid)
	require.NoError(t, err)
	assert.Equal(t, pid, pgid, "detached server leads its own process group")
	assert.NotEqual(t, syscall.Getpgrp(), pgid, "not in the test's process group")

	require.NoError(t, StopDetached(s.PIDFile))
	assert.False(t, reachable(t, s.Address))
	assert.NoFileExists(t, s.PIDFile)
	select {
	case <-s.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("process did not exit")
	}

	err = StopDetached(s.PIDFile)
	assert.ErrorIs(t, err, ErrNotRunning, "no PID file: not running")

	// A stale PID file naming a process that is not a dev server is refused
	// and removed; that process is left alone.
	stale := filepath.Join(dir, "stale.pid")
	require.NoError(t, writePIDFile(stale, os.Getpid()))
	assert.ErrorIs(t, StopDetached(stale), ErrNotRunning)
	assert.NoFileExists(t, stale)
}

// runHelper starts the test binary as a helper process (see TestMain) and
// returns it with the address and pid of the server it started.
func runHelper(t *testing.T, mode string, env ...string) (*exec.Cmd, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	cmd.Stderr = t.Output()
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(testTimeout):
		t.Fatal("helper printed no address")
	}
	var addr string
	var pid int
	_, err = fmt.Sscanf(line, "%s %d", &addr, &pid)
	require.NoError(t, err, "helper said %q", line)
	return cmd, addr, pid
}

func TestDetachedServerOutlivesItsStarter(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "run", "temporal.pid")
	helper, addr, pid := runHelper(t, "detached", helperPIDEnv+"="+pidFile)
	require.NoError(t, helper.Wait(), "the starter exits on its own")
	t.Cleanup(func() { _ = StopDetached(pidFile) })

	assert.True(t, reachable(t, addr), "detached server survives its starter")
	got, err := ReadPIDFile(pidFile)
	require.NoError(t, err)
	assert.Equal(t, pid, got)

	require.NoError(t, StopDetached(pidFile))
	assert.False(t, reachable(t, addr))
	assert.NoFileExists(t, pidFile)
}
