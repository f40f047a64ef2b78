package testenv

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/internal/devserver"
)

// RestartableServer is a file-backed Temporal dev server of one test's own, on a free
// port, that the test stops and starts again: what it stored (chats, namespaces)
// survives, as on a real cluster's restart. The test's Cleanup stops it; create it
// before the harnesses that use it, so that it stops after their workers.
type RestartableServer struct {
	// Address is the frontend address, the same across restarts.
	Address string

	t    testing.TB
	opts devserver.Options
	srv  *devserver.Server
}

// NewRestartableServer starts a RestartableServer with its database and log in a
// temporary folder of the test.
func NewRestartableServer(t testing.TB) *RestartableServer {
	t.Helper()
	dir := t.TempDir()
	addr, err := devserver.FreeAddress()
	require.NoError(t, err)
	s := &RestartableServer{Address: addr, t: t, opts: devserver.Options{Address: addr,
		DBFile: filepath.Join(dir, "temporal.db"), UIPort: devserver.Headless, LogFile: filepath.Join(dir, "server.log")}}
	s.Start()
	t.Cleanup(func() {
		if s.srv != nil {
			_ = s.srv.Stop()
		}
	})
	return s
}

// Start starts the server (again), failing the test if it does not answer within 2
// minutes.
func (s *RestartableServer) Start() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := devserver.Start(ctx, s.opts)
	require.NoError(s.t, err, "start the dev server")
	s.srv = srv
}

// Stop stops the server, failing the test if it does not stop cleanly.
func (s *RestartableServer) Stop() {
	s.t.Helper()
	require.NoError(s.t, s.srv.Stop())
	s.srv = nil
}
