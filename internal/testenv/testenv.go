// Package testenv gives integration tests a real Temporal dev server, the offline
// model over HTTP and an in-process agentchat worker on a task queue of their own.
//
// The server is the one answering at TEMPORAL_ADDRESS when there is one (scripts/test starts
// it), else one this test binary starts on a free port (building the Temporal CLI first
// if needed) and stops when its tests end. Nothing is mocked except the model.
package testenv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/codec"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/hosting"
	"github.com/agentchat/agentchat/internal/devserver"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/postgres"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/msgstore/storeurl"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/telemetry"
	"github.com/agentchat/agentchat/tools"
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
	secondMu.Lock()
	if secondServer != nil {
		_ = secondServer.Stop()
	}
	secondMu.Unlock()
	storesMu.Lock()
	for _, s := range stores {
		_ = s.Close()
	}
	storesMu.Unlock()
	if pgDir != "" {
		if root, err := moduleRoot(); err == nil {
			_ = exec.Command(filepath.Join(root, "scripts", "postgres.sh"), "stop", pgDir).Run()
		}
	}
	if storePath != "" {
		_ = os.RemoveAll(storePath)
	}
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

// Namespace makes sure namespace ns exists on the shared server and returns it.
func Namespace(t testing.TB, ns string) string {
	t.Helper()
	registerNamespace(t, Address(t), ns)
	return ns
}

// registerNamespace registers ns on the server at address if it is missing, and waits
// until it is usable.
func registerNamespace(t testing.TB, address, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, devserver.EnsureNamespace(ctx, address, ns, 24*time.Hour))
}

var (
	secondMu      sync.Mutex
	secondAddress string
	secondServer  *devserver.Server
)

// SecondCluster returns the address of a second dev server (a second Temporal
// cluster), started on a free port once per test binary and stopped by Main.
func SecondCluster(t testing.TB) string {
	t.Helper()
	secondMu.Lock()
	defer secondMu.Unlock()
	if secondAddress != "" {
		return secondAddress
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := devserver.Start(ctx, devserver.Options{Address: "127.0.0.1:0", UIPort: devserver.Headless, Progress: os.Stderr})
	require.NoError(t, err, "start a second Temporal dev server")
	secondServer, secondAddress = s, s.Address
	return secondAddress
}

// Options shape a Harness.
type Options struct {
	// Namespace of the harness's worker and client; default "default". It is
	// registered if missing.
	Namespace string
	// Address of the Temporal cluster; default the shared server.
	Address string
	// Clusters are other clusters the worker may migrate chats to: name → address[/namespace].
	Clusters map[string]string
	// TaskQueue; default a fresh one per harness. Harnesses that must serve the same
	// chats in several namespaces share one.
	TaskQueue string
	// MessageStore is the worker's default message store: "sqlite" (default; one file
	// per test binary) or "postgres" (AGENTCHAT_TEST_POSTGRES, or a server started by
	// scripts/postgres.sh).
	MessageStore string
	// MessageStoreURL, if set, opens a store of the harness's own at this URL instead
	// (closed when the test ends).
	MessageStoreURL string
	// Tools (added to the built-in ones), Selectors and Judges for the worker.
	Tools     map[string]activities.ToolFunc
	Selectors map[string]activities.SelectFunc
	Judges    map[string]activities.JudgeFunc
	// Config is the agent registry YAML; its endpoints are pointed at the offline
	// model. Empty means DefaultConfig.
	Config string
	// Model tunes the offline model (scripts, latency).
	Model offline.Options
	// ExpectViolations is for a test that sends the model requests OpenAI refuses on
	// purpose. Otherwise the test fails at its end when the offline model refused any
	// request for breaking OpenAI's rules (offline.Server.Violations): a real provider
	// would have refused it too.
	ExpectViolations bool
	// Keys, when set, turn encryption at rest on: the harness's clients (its own, the
	// other clusters') get the ring's codec (codec.Apply) and the activities the ring.
	Keys *keyring.Ring
	// Documents say how the worker and the client seal and open documents (signing,
	// verification); a nil Ring defaults to Keys.
	Documents envelope.Options
	// Getenv reads the endpoints' API keys (activities.Config.Getenv); with it the keys
	// are sent to the model (activities.Config.Models.SendKeysToOverride).
	Getenv func(string) string
	// ModelFront, when set, is given the offline model's base URL and returns the base
	// URL the worker calls instead (a proxy in front of it).
	ModelFront func(offlineURL string) string
	// Logger receives the activities' and the Temporal SDK's logs; nil discards them.
	Logger *slog.Logger
	// TracerProvider and MeterProvider, when set, trace the harness's client and worker
	// with Temporal's OpenTelemetry interceptor and its activities' model and tool calls
	// (telemetry), and give the Temporal SDK's metrics and the gen_ai metrics to the
	// meter provider. CaptureContent is activities.Config.Telemetry.CaptureContent.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	CaptureContent bool
}

// DefaultConfig defines helper, writer and reviewer with fast retries, so tests of
// provider errors take milliseconds rather than the production backoff, and with the
// context budget of the offline model's window (1,000,000 of its 1,047,576 tokens), so
// tests of the payload limits send their replies of 1 MiB and more back to the model.
const DefaultConfig = `
agents:
  - {id: helper, name: Helper, model: offline, instructions: "You are a helpful assistant.", contextTokens: 1000000, call: {initialInterval: 50ms, maxInterval: 200ms, maxAttempts: 4}}
  - {id: writer, name: Writer, model: offline, contextTokens: 1000000, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: reviewer, name: Reviewer, model: offline, contextTokens: 1000000, call: {initialInterval: 50ms, maxAttempts: 4}}
`

// Harness is one test's world: an offline model, a worker on its own task queue, and
// a client bound to that queue.
type Harness struct {
	Client    *agentchat.Client
	Temporal  client.Client
	Model     *offline.Server
	Registry  *agents.Registry
	TaskQueue string
	Namespace string
	// MessageStore is the worker's message store (its rows sealed when Keys is set).
	MessageStore msgstore.Store
	// Keys is Options.Keys: the key ring of the harness's clients and worker, or nil.
	Keys *keyring.Ring

	acts   *activities.Activities
	config activities.Config
	worker worker.Worker
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
	if !opts.ExpectViolations {
		t.Cleanup(func() { failOnViolations(t, model) })
	}
	cfg, err := agents.ParseConfig([]byte(opts.Config))
	require.NoError(t, err)
	reg := agents.NewRegistry(cfg)
	if opts.Address == "" {
		opts.Address = Address(t)
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	registerNamespace(t, opts.Address, opts.Namespace)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	co := client.Options{HostPort: opts.Address, Namespace: opts.Namespace,
		Logger: tlog.NewStructuredLogger(opts.Logger)}
	codec.Apply(&co, opts.Keys)
	if opts.TracerProvider != nil {
		i, err := telemetry.TemporalInterceptor(opts.TracerProvider)
		require.NoError(t, err)
		co.Interceptors = append(co.Interceptors, i)
	}
	if opts.MeterProvider != nil {
		co.MetricsHandler = telemetry.TemporalMetrics(opts.MeterProvider)
	}
	tc, err := client.Dial(co)
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	clusters := map[string]activities.Cluster{}
	for name, spec := range opts.Clusters {
		addr, ns, _ := strings.Cut(spec, "/")
		if ns == "" {
			ns = "default"
		}
		cco := client.Options{HostPort: addr, Namespace: ns, Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))}
		codec.Apply(&cco, opts.Keys)
		cc, err := client.Dial(cco)
		require.NoError(t, err)
		t.Cleanup(cc.Close)
		clusters[name] = activities.Cluster{Client: cc, Namespace: ns, Address: addr}
	}
	store := activities.FileStore{Dir: storeDir(t)}
	msgs := messageStore(t, opts.MessageStore)
	if opts.MessageStoreURL != "" {
		msgs, err = storeurl.Open(context.Background(), opts.MessageStoreURL)
		require.NoError(t, err)
		t.Cleanup(func() { _ = msgs.Close() })
	}
	modelURL := model.URL()
	if opts.ModelFront != nil {
		modelURL = opts.ModelFront(modelURL)
	}
	acfg := activities.Config{Registry: reg, Getenv: opts.Getenv, Keys: opts.Keys,
		Models:    activities.ModelConfig{BaseURLOverride: modelURL, SendKeysToOverride: opts.Getenv != nil},
		Functions: activities.FunctionConfig{Tools: tools.Builtin(), Selectors: opts.Selectors, Judges: opts.Judges},
		Stores:    activities.StoreConfig{MessageStores: map[string]msgstore.Store{msgs.Name(): msgs}},
		Transfer:  activities.TransferConfig{Temporal: tc, Namespace: opts.Namespace, Clusters: clusters, Store: store, Documents: opts.Documents},
		Telemetry: activities.TelemetryConfig{Logger: opts.Logger, TracerProvider: opts.TracerProvider,
			MeterProvider: opts.MeterProvider, CaptureContent: opts.CaptureContent},
	}
	for name, f := range opts.Tools {
		acfg.Functions.Tools[name] = f
	}
	acts, err := activities.New(acfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = acts.Close() })

	tq := opts.TaskQueue
	if tq == "" {
		tq = TaskQueue(t)
	}
	h := &Harness{Client: agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: tq, Namespace: opts.Namespace, Keys: opts.Keys, Documents: opts.Documents}),
		Temporal: tc, Model: model, Registry: reg, TaskQueue: tq, Namespace: opts.Namespace, acts: acts,
		MessageStore: msgs, Keys: opts.Keys, config: acfg}
	h.StartWorker(t)
	return h
}

// TaskQueue returns a task queue name unique to this run of the test.
func TaskQueue(t testing.TB) string {
	return "test-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")) + "-" + uuid.NewString()[:8]
}

// StartWorker starts a worker (again) for the harness; StopWorker stops it, as a
// crashed worker would be gone.
func (h *Harness) StartWorker(t testing.TB) {
	t.Helper()
	w := hosting.NewWorker(h.Temporal, h.TaskQueue, h.acts, worker.Options{})
	require.NoError(t, w.Start())
	h.worker = w
	t.Cleanup(func() { h.StopWorker() })
	// Wait until the server has seen the worker poll, as a user's worker would have. A
	// namespace registered a moment ago may take the server a few seconds to know
	// everywhere (its namespace cache), so keep looking for a while.
	var err error
	require.Eventually(t, func() bool {
		err = h.Client.CheckWorker(context.Background(), h.TaskQueue)
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "worker never polled: %v", err)
}

// RestartWorkerCold stops the worker and starts a new one with new activities (empty
// caches), as a restarted worker process would have.
func (h *Harness) RestartWorkerCold(t testing.TB) {
	t.Helper()
	h.StopWorker()
	acts, err := activities.New(h.config)
	require.NoError(t, err)
	t.Cleanup(func() { _ = acts.Close() })
	h.acts = acts
	h.StartWorker(t)
}

// StopWorker stops the harness's worker, if running.
func (h *Harness) StopWorker() {
	if h.worker != nil {
		h.worker.Stop()
		h.worker = nil
	}
}

var (
	storeOnce sync.Once
	storePath string
)

// storeDir is one document store folder for every harness of the test binary, so
// that workers in different namespaces and clusters share it, as they would share a
// volume or a bucket.
func storeDir(t testing.TB) string {
	storeOnce.Do(func() {
		var err error
		storePath, err = os.MkdirTemp("", "agentchat-test-store-")
		require.NoError(t, err)
	})
	return storePath
}

// ChatID returns a chat id unique to this run of the test.
func ChatID(t testing.TB) string {
	return fmt.Sprintf("%s-%s", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), uuid.NewString()[:8])
}

var (
	storesMu sync.Mutex
	stores   = map[string]msgstore.Store{}
	pgDir    string
	pgDSN    string // PostgresDSN's answer, once
)

// SharedPostgresDSN returns the DSN of the test binary's PostgreSQL database, the one
// of Options{MessageStore: msgstore.NamePostgres} (PostgresDSN, asked once), for a
// worker process and a test that share it.
func SharedPostgresDSN(t testing.TB) string {
	t.Helper()
	storesMu.Lock()
	defer storesMu.Unlock()
	return sharedDSN(t)
}

// sharedDSN is SharedPostgresDSN with storesMu held.
func sharedDSN(t testing.TB) string {
	if pgDSN == "" {
		pgDSN = PostgresDSN(t)
	}
	return pgDSN
}

// messageStore returns the test binary's message store of the kind asked for.
func messageStore(t testing.TB, kind string) msgstore.Store {
	t.Helper()
	if kind == "" {
		kind = msgstore.NameSQLite
	}
	storesMu.Lock()
	defer storesMu.Unlock()
	if st, ok := stores[kind]; ok {
		return st
	}
	var (
		st  msgstore.Store
		err error
	)
	switch kind {
	case msgstore.NameSQLite:
		st, err = sqlite.Open(filepath.Join(storeDir(t), "messages.db"))
	case msgstore.NamePostgres:
		st, err = postgres.Open(context.Background(), sharedDSN(t))
	default:
		t.Fatalf("unknown message store %q", kind)
	}
	require.NoError(t, err)
	stores[kind] = st
	return st
}

// PostgresDSN returns $AGENTCHAT_TEST_POSTGRES, or starts a throwaway server with
// scripts/postgres.sh (installing PostgreSQL from Debian's packages if needed) and
// stops it in Main. Call with storesMu held.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv("AGENTCHAT_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	root, err := moduleRoot()
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "agentchat-test-pg-")
	require.NoError(t, err)
	port, err := devserver.FreeAddress()
	require.NoError(t, err)
	_, p, _ := strings.Cut(port, ":")
	cmd := exec.Command(filepath.Join(root, "scripts", "postgres.sh"), "start", dir, p)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "scripts/postgres.sh start")
	pgDir = dir
	return strings.TrimSpace(string(out))
}

// moduleRoot finds the folder holding go.mod, from the test's working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// failOnViolations fails t when model refused a request for breaking OpenAI's rules,
// listing the refusals.
func failOnViolations(t testing.TB, model *offline.Server) {
	t.Helper()
	for _, v := range model.Violations() {
		t.Errorf("the offline model refused a request OpenAI refuses too: %s %s (agent %q, chat %q): %d %s (param %q)",
			"POST", v.Path, v.Agent, v.Chat, v.Status, v.Message, v.Param)
	}
}

// StoreClient returns a client of the harness's namespace and task queue that reads
// long chats' pages and stored bodies from the worker's message store, as a client on
// the worker's machine does (Client has no store: it reads through the worker, or
// fails with ErrStoredMessages).
func (h *Harness) StoreClient() *agentchat.Client {
	return agentchat.NewClient(h.Temporal, agentchat.ClientOptions{TaskQueue: h.TaskQueue, Namespace: h.Namespace, Keys: h.Keys,
		Documents: h.config.Transfer.Documents, MessageStores: map[string]msgstore.Store{h.MessageStore.Name(): h.MessageStore}})
}
