package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/hosting"
	"github.com/agentchat/agentchat/internal/idspill"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/offline"
)

// AgentConfig is the registry of the benchmark's worker: three chat_completion agents
// on the default endpoint, which the offline model answers (streamed, as by default).
const AgentConfig = `
agents:
  - {id: helper, name: Helper, model: offline, instructions: "You are a helpful assistant."}
  - {id: writer, name: Writer, model: offline}
  - {id: reviewer, name: Reviewer, model: offline}
`

// The pprof label that tells the benchmark's own goroutines from the workers'.
const (
	roleLabel  = "role"
	roleDriver = "driver" // the goroutines that send turns, and their Temporal client
	roleModel  = "model"  // the offline model's HTTP server
)

// cleanupTimeout bounds the termination of the workflows a run started.
const cleanupTimeout = 2 * time.Minute

// EnvOptions say where the benchmark runs.
type EnvOptions struct {
	// Address of the Temporal frontend; required.
	Address string
	// Namespace; default "default".
	Namespace string
	// ServerPID is the dev server's process id, whose CPU time is then reported; zero
	// means a dev server on this machine listening on Address's port, if any.
	ServerPID int
	// KeepWorkflows leaves the workflows of the run open at Close. By default Close
	// terminates them, so a shared server is not left with thousands of chats.
	KeepWorkflows bool
	// Logger receives the Temporal SDK's warnings and errors; nil discards them.
	Logger *slog.Logger

	// What-if knobs, for trying an option before proposing it; the zero values are
	// what the product uses.
	//
	// AgentConfig replaces the worker's agent registry (YAML); "" means AgentConfig.
	// It must define helper, writer and reviewer.
	AgentConfig string
	// WorkerOptions are given to both workers.
	WorkerOptions worker.Options
	// ClientOptions, if set, adjusts the options of every Temporal connection.
	ClientOptions func(*client.Options)
}

// Env is a benchmark's world: an offline model with zero latency, an agentchat worker
// and a floor worker (each on a task queue of its own, with default worker options),
// and a driver client, all in this process.
type Env struct {
	// Chats drives agentchat on ChatQueue; Temporal is the driver's Temporal client.
	Chats    *agentchat.Client
	Temporal client.Client
	// Model is the offline model.
	Model                 *offline.Server
	ChatQueue, FloorQueue string
	Namespace             string
	ServerPID             int

	opts        EnvOptions
	dir         string
	workerTC    client.Client
	store       msgstore.Store
	chatWorker  worker.Worker
	floorWorker worker.Worker

	mu      sync.Mutex
	started []string // workflow ids, terminated by Close
}

// NewEnv starts the model and both workers and dials the driver's client. Close stops
// everything.
func NewEnv(ctx context.Context, opts EnvOptions) (e *Env, err error) {
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.ServerPID == 0 {
		opts.ServerPID = localServerPID(opts.Address)
	}
	suffix := uuid.NewString()[:8]
	e = &Env{opts: opts, Namespace: opts.Namespace, ServerPID: opts.ServerPID,
		ChatQueue: "bench-chat-" + suffix, FloorQueue: "bench-floor-" + suffix}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	if e.dir, err = os.MkdirTemp("", "agentchat-bench-"); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	// The model's HTTP server goroutines inherit the label of the goroutine that starts it.
	pprof.Do(ctx, pprof.Labels(roleLabel, roleModel), func(context.Context) {
		e.Model, err = offline.Start(offline.Options{})
	})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	co := client.Options{HostPort: opts.Address, Namespace: opts.Namespace, Logger: tlog.NewStructuredLogger(logger)}
	if opts.ClientOptions != nil {
		opts.ClientOptions(&co)
	}
	if e.workerTC, err = client.DialContext(ctx, co); err != nil {
		return nil, fmt.Errorf("bench: connect to Temporal at %s: %w", opts.Address, err)
	}
	// A connection of its own for the drivers, dialled under their label, so that its
	// gRPC goroutines are told apart from the workers' in a profile.
	pprof.Do(ctx, pprof.Labels(roleLabel, roleDriver), func(ctx context.Context) {
		e.Temporal, err = client.DialContext(ctx, co)
	})
	if err != nil {
		return nil, fmt.Errorf("bench: connect to Temporal at %s: %w", opts.Address, err)
	}
	e.Chats = agentchat.NewClient(e.Temporal, agentchat.ClientOptions{TaskQueue: e.ChatQueue, Namespace: opts.Namespace,
		ImportSpill: idspill.Opener("")})
	if err := e.startWorkers(ctx, logger); err != nil {
		return nil, err
	}
	return e, nil
}

// startWorkers starts the agentchat and floor workers and waits until the server has
// seen both poll.
func (e *Env) startWorkers(ctx context.Context, logger *slog.Logger) error {
	yaml := e.opts.AgentConfig
	if yaml == "" {
		yaml = AgentConfig
	}
	cfg, err := agents.ParseConfig([]byte(yaml))
	if err != nil {
		return fmt.Errorf("bench: agent config: %w", err)
	}
	if e.store, err = sqlite.Open(filepath.Join(e.dir, "messages.db")); err != nil {
		return fmt.Errorf("bench: message store: %w", err)
	}
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(cfg),
		Models: activities.ModelConfig{BaseURLOverride: e.Model.URL()},
		Stores: activities.StoreConfig{MessageStores: map[string]msgstore.Store{e.store.Name(): e.store}},
		Transfer: activities.TransferConfig{Temporal: e.workerTC, Namespace: e.Namespace,
			Store: activities.FileStore{Dir: filepath.Join(e.dir, "exports")}},
		Telemetry: activities.TelemetryConfig{Logger: logger},
	})
	if err != nil {
		return fmt.Errorf("bench: activities: %w", err)
	}
	e.chatWorker = hosting.NewWorker(e.workerTC, e.ChatQueue, acts, e.opts.WorkerOptions)
	e.floorWorker = worker.New(e.workerTC, e.FloorQueue, e.opts.WorkerOptions)
	RegisterFloor(e.floorWorker)
	for _, w := range []worker.Worker{e.chatWorker, e.floorWorker} {
		if err := w.Start(); err != nil {
			return fmt.Errorf("bench: start worker: %w", err)
		}
	}
	for _, tq := range []string{e.ChatQueue, e.FloorQueue} {
		if err := e.Chats.CheckWorker(ctx, tq); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	return nil
}

// track records a workflow id for Close to terminate.
func (e *Env) track(id string) {
	e.mu.Lock()
	e.started = append(e.started, id)
	e.mu.Unlock()
}

// Close terminates the run's workflows (unless KeepWorkflows), stops the workers and
// the model, and removes the temporary folder.
func (e *Env) Close() {
	if e.Temporal != nil && !e.opts.KeepWorkflows {
		e.terminateAll()
	}
	for _, w := range []worker.Worker{e.chatWorker, e.floorWorker} {
		if w != nil {
			w.Stop()
		}
	}
	if e.Model != nil {
		_ = e.Model.Close()
	}
	for _, c := range []client.Client{e.Temporal, e.workerTC} {
		if c != nil {
			c.Close()
		}
	}
	if e.store != nil {
		_ = e.store.Close()
	}
	if e.dir != "" {
		_ = os.RemoveAll(e.dir)
	}
}

// terminateAll terminates every tracked workflow, 16 at a time; workflows already
// closed are skipped.
func (e *Env) terminateAll() {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	e.mu.Lock()
	ids := e.started
	e.started = nil
	e.mu.Unlock()
	_ = parallel(ctx, len(ids), 16, func(ctx context.Context, i int) error {
		_ = e.Temporal.TerminateWorkflow(ctx, ids[i], "", "benchmark over")
		return nil
	})
}

// parallel runs f(0..n-1) with at most width running at once, and returns the first
// error (the others still run to the end). It starts no more calls once ctx ends.
func parallel(ctx context.Context, n, width int, f func(ctx context.Context, i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, max(width, 1))
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
loop:
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			fail(ctx.Err())
			break loop
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(ctx, i); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}
