// Package testenv gives integration tests a real Temporal dev server, the offline
// model over HTTP and an in-process agentchat worker on a task queue of their own.
//
// The server is the one answering at TEMPORAL_ADDRESS when there is one (.ci/run starts
// it), else one this test binary starts on a free port (building the Temporal CLI first
// if needed) and stops when its tests end. Nothing is mocked except the model.
package testenv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/internal/devserver"
	"github.com/agentchat/agentchat/offline"
)

var (
	mu      sync.Mutex
	address string
	started *devserver.Server
)

// Main runs the tests of a package and stops the dev server this binary started, if
// any. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	if started != nil {
		_ = started.Stop()
	}
	mu.Unlock()
	os.Exit(code)
}

// Address returns the frontend address of the shared dev server, starting one if
// none answers at TEMPORAL_ADDRESS.
func Address(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if address != "" {
		return address
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if a := os.Getenv("TEMPORAL_ADDRESS"); a != "" && devserver.Reachable(ctx, a, 3*time.Second) {
		address = a
		return address
	}
	s, err := devserver.Start(ctx, devserver.Options{Address: "127.0.0.1:0", UIPort: devserver.Headless,
		Progress: os.Stderr})
	require.NoError(t, err, "start a Temporal dev server for the tests")
	started, address = s, s.Address
	return address
}

// Dial connects a Temporal client to the shared server's namespace ns ("" = default).
func Dial(t testing.TB, ns string) client.Client {
	t.Helper()
	tc, err := client.Dial(client.Options{HostPort: Address(t), Namespace: ns,
		Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	return tc
}

// Options shape a Harness.
type Options struct {
	// Config is the agent registry YAML; its endpoints are pointed at the offline
	// model. Empty means DefaultConfig.
	Config string
	// Model tunes the offline model (scripts, latency).
	Model offline.Options
}

// DefaultConfig defines helper, writer and reviewer with fast retries, so tests of
// provider errors take milliseconds rather than the production backoff.
const DefaultConfig = `
agents:
  - {id: helper, name: Helper, model: offline, instructions: "You are a helpful assistant.", call: {initialInterval: 50ms, maxInterval: 200ms, maxAttempts: 4}}
  - {id: writer, name: Writer, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: reviewer, name: Reviewer, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
`

// Harness is one test's world: an offline model, a worker on its own task queue, and
// a client bound to that queue.
type Harness struct {
	Client    *agentchat.Client
	Temporal  client.Client
	Model     *offline.Server
	Registry  *agents.Registry
	TaskQueue string
}

// New starts a Harness; everything stops when the test ends.
func New(t testing.TB, opts Options) *Harness {
	t.Helper()
	if opts.Config == "" {
		opts.Config = DefaultConfig
	}
	model, err := offline.Start(opts.Model)
	require.NoError(t, err)
	t.Cleanup(func() { _ = model.Close() })
	cfg, err := agents.ParseConfig([]byte(opts.Config))
	require.NoError(t, err)
	reg := agents.NewRegistry(cfg)
	acts, err := activities.New(activities.Config{Registry: reg, BaseURLOverride: model.URL()})
	require.NoError(t, err)

	tc := Dial(t, "")
	tq := "test-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")) + "-" + uuid.NewString()[:8]
	w := agentchat.NewWorker(tc, tq, acts, worker.Options{})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return &Harness{Client: agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: tq}),
		Temporal: tc, Model: model, Registry: reg, TaskQueue: tq}
}

// ChatID returns a chat id unique to this run of the test.
func ChatID(t testing.TB) string {
	return fmt.Sprintf("%s-%s", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), uuid.NewString()[:8])
}
