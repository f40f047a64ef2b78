package devserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"
)

// testTimeout bounds one server test, including a first build of the CLI.
const testTimeout = 10 * time.Minute

// testContext is a context bounded by testTimeout and ended with the test.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// startServer starts a server with opts, progress into the test log, and
// stops it when the test ends. Tests never skip when the CLI is missing:
// Start builds it (EnsureCLI).
func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.Progress == nil {
		opts.Progress = t.Output()
	}
	s, err := Start(testContext(t), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// freeAddress is FreeAddress that fails the test on error.
func freeAddress(t *testing.T) string {
	t.Helper()
	a, err := FreeAddress()
	require.NoError(t, err)
	return a
}

// describeNamespace returns the error of describing ns on the server at address.
func describeNamespace(t *testing.T, address, ns string) error {
	t.Helper()
	nc, err := client.NewNamespaceClient(clientOptions(address, DefaultNamespace, 5*time.Second))
	require.NoError(t, err)
	defer nc.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err = nc.Describe(ctx, ns)
	return err
}

// reachable is Reachable with a short timeout.
func reachable(t *testing.T, address string) bool {
	return Reachable(t.Context(), address, 2*time.Second)
}

// requireNoConversionWarnings fails when the server log says it ignored a
// dynamic config value it could not convert to the setting's type.
func requireNoConversionWarnings(t *testing.T, logFile string) {
	t.Helper()
	b, err := os.ReadFile(logFile)
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		require.NotContains(t, line, "Failed to convert value", "server rejected a dynamic config value")
	}
}

// fakeCLI writes an executable stand-in for the CLI and returns its path.
func fakeCLI(t *testing.T, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "temporal")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), mode))
	require.NoError(t, os.Chmod(p, mode))
	return p
}

// registerRequest registers a namespace with one day of retention.
func registerRequest(name string) *workflowservice.RegisterNamespaceRequest {
	return &workflowservice.RegisterNamespaceRequest{
		Namespace:                        name,
		WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	}
}
