package devserver

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

func TestStartStopAndRestartOnSameFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "temporal.db") // folder does not exist yet
	logFile := filepath.Join(dir, "server.log")
	addr := freeAddress(t)

	s := startServer(t, Options{Address: addr, DBFile: db, LogFile: logFile, Namespaces: []string{"default", "second"}})
	assert.Equal(t, addr, s.Address)
	assert.True(t, reachable(t, s.Address))
	assert.NoError(t, describeNamespace(t, s.Address, "default"))
	assert.NoError(t, describeNamespace(t, s.Address, "second"))
	assert.Error(t, describeNamespace(t, s.Address, "never-registered"), "unknown namespaces do not describe")
	assert.Equal(t, []string{"default", "second"}, s.Namespaces)
	assert.Empty(t, s.PIDFile, "only detached servers write a PID file")

	// The web UI answers on gRPC port + 1000 unless that was taken.
	require.NotEmpty(t, s.UIURL)
	assert.Eventually(t, func() bool {
		resp, err := http.Get(s.UIURL)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 200*time.Millisecond, "UI at %s", s.UIURL)

	require.NoError(t, s.Stop())
	assert.False(t, reachable(t, s.Address), "stopped server still answers")
	assert.NoError(t, s.Stop(), "Stop twice is fine")
	select {
	case <-s.Exited():
	default:
		t.Fatal("process still running after Stop")
	}
	fi, err := os.Stat(db)
	require.NoError(t, err, "the data file stays")
	assert.Positive(t, fi.Size())
	requireNoConversionWarnings(t, logFile)

	// Restart on the same file without naming "second": it was persisted.
	s2 := startServer(t, Options{Address: addr, DBFile: db, LogFile: logFile, UIPort: Headless})
	assert.Empty(t, s2.UIURL)
	assert.NoError(t, describeNamespace(t, s2.Address, "second"), "namespace survives a restart")
	require.NoError(t, s2.Stop())
	assert.False(t, reachable(t, s2.Address))
}

func TestTwoServersSideBySide(t *testing.T) {
	t.Parallel()
	a := startServer(t, Options{Address: "127.0.0.1:0"})
	b := startServer(t, Options{Address: "127.0.0.1:0"})
	require.NotEqual(t, a.Address, b.Address)
	require.NotEqual(t, a.UIURL, b.UIURL)
	assert.NotEqual(t, a.HTTPAddress, b.HTTPAddress)
	assert.NotEqual(t, a.MetricsURL, b.MetricsURL)
	assert.True(t, reachable(t, a.Address))
	assert.True(t, reachable(t, b.Address))

	// They are separate clusters: a namespace registered on one is unknown
	// to the other.
	nc, err := client.NewNamespaceClient(a.ClientOptions(DefaultNamespace))
	require.NoError(t, err)
	defer nc.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, nc.Register(ctx, registerRequest("only-on-a")))
	require.Eventually(t, func() bool { return describeNamespace(t, a.Address, "only-on-a") == nil },
		10*time.Second, 100*time.Millisecond)
	assert.Error(t, describeNamespace(t, b.Address, "only-on-a"))

	require.NoError(t, a.Stop())
	assert.False(t, reachable(t, a.Address))
	assert.True(t, reachable(t, b.Address), "stopping one leaves the other running")
}

func TestStartFailsWithLogTailWhenPortTaken(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	logFile := filepath.Join(t.TempDir(), "server.log")
	start := time.Now()
	_, err = Start(testContext(t), Options{Address: l.Addr().String(), UIPort: Headless, LogFile: logFile, Progress: t.Output()})
	require.ErrorIs(t, err, ErrNotReady)
	assert.ErrorContains(t, err, "exited during start")
	assert.ErrorContains(t, err, "can't set frontend port", "the error quotes the server's own words")
	assert.Less(t, time.Since(start), 30*time.Second, "an exited server fails fast, not at ReadyTimeout")
}

func TestStartFailsWhenNotReadyInTime(t *testing.T) {
	t.Parallel()
	_, err := Start(testContext(t), Options{Address: "127.0.0.1:0", UIPort: Headless, ReadyTimeout: time.Millisecond, Progress: t.Output()})
	require.ErrorIs(t, err, ErrNotReady)
	assert.ErrorContains(t, err, "not ready after 1ms")
}

func TestReachableFalseWhenNothingListens(t *testing.T) {
	t.Parallel()
	addr := freeAddress(t)
	start := time.Now()
	assert.False(t, Reachable(t.Context(), addr, 2*time.Second))
	assert.Less(t, time.Since(start), 3*time.Second, "timeout bounds the probe")

	// Something that is not Temporal is not reachable either.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	start = time.Now()
	assert.False(t, Reachable(t.Context(), l.Addr().String(), time.Second))
	assert.Less(t, time.Since(start), 2*time.Second, "timeout bounds the probe")
}
