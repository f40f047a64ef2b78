package activities

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A poller whose identity names a process of this host that has ended is gone; one
// that runs, this process, another host's or an identity of another form is not.
func TestGoneFromThisHostOnlyForEndedProcessesOfThisHost(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	identity := fmt.Sprintf("%d@%s@", cmd.Process.Pid, thisHost())
	assert.False(t, goneFromThisHost(identity), "a running process")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.True(t, goneFromThisHost(identity), "an ended process")
	assert.True(t, goneFromThisHost(identity+"worker-1"), "Temporal's identity with a suffix")

	assert.False(t, goneFromThisHost(fmt.Sprintf("%d@%s@", os.Getpid(), thisHost())), "this process")
	assert.False(t, goneFromThisHost(fmt.Sprintf("%d@another-host-%s@", cmd.Process.Pid, thisHost())), "another host")
	assert.False(t, goneFromThisHost("blue-worker"), "an identity of another form")
}
