package devserver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttachedServerDiesWithItsStarter: a killed test run leaves no server
// behind (Linux parent-death signal).
func TestAttachedServerDiesWithItsStarter(t *testing.T) {
	t.Parallel()
	// Output to a file, not a pipe, so that a broken pipe cannot be what
	// ends the server.
	logFile := filepath.Join(t.TempDir(), "server.log")
	helper, addr, pid := runHelper(t, "attached", helperLogEnv+"="+logFile)
	require.True(t, reachable(t, addr))

	require.NoError(t, helper.Process.Kill()) // SIGKILL: no cleanup code runs
	_ = helper.Wait()
	assert.Eventually(t, func() bool { return !reachable(t, addr) }, 30*time.Second, 200*time.Millisecond,
		"server on %s outlived the process that started it", addr)
	assert.Eventually(t, func() bool { return !processAlive(pid) || isZombie(pid) }, 20*time.Second, 100*time.Millisecond)
}
