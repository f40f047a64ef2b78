//go:build unix

package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat/internal/devserver"
)

var startedPID = regexp.MustCompile(`\(pid (\d+)\)`)

// startServerAt runs `server start` with TEMPORAL_ADDRESS=addr and the data folder of
// $AGENTCHAT_DATA_DIR, and kills what it started when the test ends.
func startServerAt(t *testing.T, addr string) result {
	t.Setenv("TEMPORAL_ADDRESS", addr)
	r := execute(t, "", "server", "start")
	require.Equal(t, 0, r.code, "%v", r)
	m := startedPID.FindStringSubmatch(r.out)
	require.NotNil(t, m, "no pid in %q", r.out)
	pid, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }) // its process group (detached)
	return r
}

func reachable(addr string) bool {
	return devserver.Reachable(context.Background(), addr, 3*time.Second)
}

// Two dev servers started from one folder at two addresses keep their own files and
// their own workflows; stop and status act on the one at TEMPORAL_ADDRESS (or
// --listen), and a stop where none was started says which ones were.
func TestServersAtTwoAddressesKeepTheirOwnFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AGENTCHAT_DATA_DIR", dir)
	a1, err := devserver.FreeAddress()
	require.NoError(t, err)
	a2, err := devserver.FreeAddress()
	require.NoError(t, err)
	r1 := startServerAt(t, a1)
	r2 := startServerAt(t, a2)
	db := regexp.MustCompile(`data: (\S+)`)
	db1, db2 := db.FindStringSubmatch(r1.out), db.FindStringSubmatch(r2.out)
	require.NotNil(t, db1, r1.out)
	require.NotNil(t, db2, r2.out)
	assert.NotEqual(t, db1[1], db2[1], "two servers share one SQLite file")
	assert.Contains(t, r2.out, "server stop --listen "+a2, "the hint stops this server, not the one at the default address")

	// A workflow started on the first server is not on the second.
	tc, err := client.Dial(client.Options{HostPort: a1})
	require.NoError(t, err)
	id := "only-on-" + a1
	_, err = tc.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{ID: id, TaskQueue: "nobody-polls"}, "Nothing")
	require.NoError(t, err)
	tc.Close()
	tc2, err := client.Dial(client.Options{HostPort: a2})
	require.NoError(t, err)
	_, err = tc2.DescribeWorkflowExecution(t.Context(), id, "")
	var notFound *serviceerror.NotFound
	assert.ErrorAs(t, err, &notFound, "the second server lists the first one's workflow")
	tc2.Close()

	t.Setenv("TEMPORAL_ADDRESS", a1)
	r := execute(t, "", "server", "status")
	require.Equal(t, 0, r.code, "%v", r)
	assert.Contains(t, r.out, "a Temporal server answers at "+a1)
	assert.Contains(t, r.out, db1[1], "status names the server's data file")

	r = execute(t, "", "server", "stop")
	require.Equal(t, 0, r.code, "%v", r)
	assert.Contains(t, r.out, a1)
	assert.False(t, reachable(a1), "the server at TEMPORAL_ADDRESS still answers")
	assert.True(t, reachable(a2), "the other server was stopped")

	line := fails(t, nil, "server", "stop")
	assert.Contains(t, line, "nothing to stop")
	assert.Contains(t, line, a1)
	assert.Contains(t, line, a2, "the error names the server that runs from this folder")

	line = fails(t, nil, "server", "status")
	assert.Contains(t, line, "no Temporal server answers at "+a1)

	// --listen names the server, whatever TEMPORAL_ADDRESS says.
	r = execute(t, "", "server", "stop", "--listen", a2)
	require.Equal(t, 0, r.code, "%v", r)
	assert.False(t, reachable(a2), "the second server still answers")
	files, err := filepath.Glob(filepath.Join(dir, "*.pid"))
	require.NoError(t, err)
	assert.Empty(t, files, "stopped servers leave pid files")
	_, err = os.Stat(db2[1])
	assert.NoError(t, err, "a stopped server's data file stays")
}

// A server that a starter before per-address files started (temporal.pid and
// temporal.db in the folder) is still found at its address, and only there.
func TestServerStopFindsAServerOfTheOldLayout(t *testing.T) {
	dir := t.TempDir()
	addr, err := devserver.FreeAddress()
	require.NoError(t, err)
	other, err := devserver.FreeAddress()
	require.NoError(t, err)
	s, err := devserver.Start(t.Context(), devserver.Options{Address: addr, UIPort: devserver.Headless, Detach: true,
		DBFile: filepath.Join(dir, "temporal.db"), PIDFile: filepath.Join(dir, "temporal.pid")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(-s.PID, syscall.SIGKILL) })

	line := fails(t, nil, "server", "stop", "--listen", other, "--data", dir)
	assert.Contains(t, line, "nothing to stop")
	assert.Contains(t, line, addr, "the error names the server that runs from the folder")
	assert.True(t, reachable(addr), "a stop at another address stopped it")

	r := execute(t, "", "server", "status", "--listen", addr, "--data", dir)
	require.Equal(t, 0, r.code, "%v", r)
	assert.Contains(t, r.out, "started by starter (pid "+strconv.Itoa(s.PID)+")")

	r = execute(t, "", "server", "stop", "--listen", addr, "--data", dir)
	require.Equal(t, 0, r.code, "%v", r)
	assert.False(t, reachable(addr))
	_, err = os.Stat(filepath.Join(dir, "temporal.db"))
	assert.NoError(t, err, "its data file stays")
}
