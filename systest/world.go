package systest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
)

// fleetSize is how many workers each namespace runs: two in the first (so a killed one
// leaves another to take over), one in the migration target.
var fleetSize = [2]int{2, 1}

// World is what every round runs on: two namespaces of one dev server, the model
// behind its recorder, worker processes on one task queue in both namespaces, and a
// client per namespace.
type World struct {
	Address    string
	TaskQueue  string
	Dir        string
	Namespaces [2]string
	Model      *Recorder

	temporal [2]client.Client
	clients  [2]*agentchat.Client
	store    msgstore.Store
	configs  map[string]string // variant → agent config file

	mu      sync.Mutex
	workers [2][]*Process
	retired []*Process // stopped or killed, for their logs
}

// WorldOptions say where the world runs.
type WorldOptions struct {
	Address    string
	Namespaces [2]string
	TaskQueue  string
	// Dir is a folder the world may fill; it must outlive the world.
	Dir string
}

// NewWorld starts the model and the fleet. Close stops them.
func NewWorld(ctx context.Context, opts WorldOptions) (*World, error) {
	w := &World{Address: opts.Address, TaskQueue: opts.TaskQueue, Dir: opts.Dir, Namespaces: opts.Namespaces,
		configs: map[string]string{}}
	model, err := startRecorder(offlineOptions())
	if err != nil {
		return nil, err
	}
	w.Model = model
	if w.store, err = sqlite.Open(filepath.Join(w.Dir, "messages.db")); err != nil {
		w.Close()
		return nil, err
	}
	for _, v := range []string{variantA, variantB, variantC} {
		path := filepath.Join(w.Dir, "agents-"+v+".yaml")
		if err := os.WriteFile(path, []byte(agentConfig(v)), 0o600); err != nil {
			w.Close()
			return nil, err
		}
		w.configs[v] = path
	}
	for i, ns := range w.Namespaces {
		tc, err := client.Dial(client.Options{HostPort: w.Address, Namespace: ns,
			Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
		if err != nil {
			w.Close()
			return nil, err
		}
		w.temporal[i] = tc
		w.clients[i] = agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: w.TaskQueue, Namespace: ns,
			MessageStores: map[string]msgstore.Store{w.store.Name(): w.store}})
	}
	for ns, n := range fleetSize {
		for i := 0; i < n; i++ {
			v := variantA
			if i == 1 {
				v = variantB
			}
			if _, err := w.startWorker(ctx, ns, v); err != nil {
				w.Close()
				return nil, err
			}
		}
	}
	return w, nil
}

// Client returns the agentchat client of namespace ns (an index into Namespaces).
func (w *World) Client(ns int) *agentchat.Client { return w.clients[ns] }

// Temporal returns the Temporal client of namespace ns.
func (w *World) Temporal(ns int) client.Client { return w.temporal[ns] }

// NamespaceIndex returns the index of namespace name.
func (w *World) NamespaceIndex(name string) int {
	if name == w.Namespaces[1] {
		return 1
	}
	return 0
}

func (w *World) startWorker(ctx context.Context, ns int, variant string) (*Process, error) {
	spec := WorkerSpec{Address: w.Address, Namespace: w.Namespaces[ns], TaskQueue: w.TaskQueue,
		Config: w.configs[variant], ModelURL: w.Model.URL(), Dir: w.Dir}
	p, err := startProcess(ctx, spec, variant)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.workers[ns] = append(w.workers[ns], p)
	w.mu.Unlock()
	return p, nil
}

// take removes worker i (modulo their number) of namespace ns from the fleet.
func (w *World) take(ns, i int) *Process {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws := w.workers[ns]
	if len(ws) == 0 {
		return nil
	}
	p := ws[i%len(ws)]
	w.workers[ns] = append(ws[:i%len(ws):i%len(ws)], ws[i%len(ws)+1:]...)
	w.retired = append(w.retired, p)
	return p
}

// keepFull returns variant, or variantA when variant lacks agents and no other worker
// of namespace ns would run a config with every agent: an agent that no worker knows
// fails its turns by design.
func (w *World) keepFull(ns int, variant string) string {
	if variant != variantC {
		return variant
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.workers[ns] {
		if p.Variant != variantC {
			return variant
		}
	}
	return variantA
}

// Kill kills worker i of namespace ns with SIGKILL, then starts a new one with variant.
// It returns what it did, for the action log.
func (w *World) Kill(ctx context.Context, ns, i int, variant string) (string, error) {
	old := w.take(ns, i)
	variant = w.keepFull(ns, variant)
	if old != nil {
		old.Kill()
	}
	p, err := w.startWorker(ctx, ns, variant)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("killed %v; started %v", old, p), nil
}

// Restart starts a new worker of namespace ns with variant, then stops worker i
// gracefully (SIGTERM): one step of a rolling deploy.
func (w *World) Restart(ctx context.Context, ns, i int, variant string) (string, error) {
	old := w.take(ns, i)
	variant = w.keepFull(ns, variant)
	p, err := w.startWorker(ctx, ns, variant)
	if err != nil {
		return "", err
	}
	if old != nil {
		old.Stop()
	}
	return fmt.Sprintf("started %v; stopped %v", p, old), nil
}

// CheckFleet reports workers that died by themselves (a panic, a data race).
func (w *World) CheckFleet() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var bad []string
	for _, ws := range w.workers {
		for _, p := range ws {
			if done, err := p.Exited(); done {
				bad = append(bad, fmt.Sprintf("%v exited by itself (%v); log:\n%s", p, err, p.Logs()))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("systest: %s", strings.Join(bad, "\n"))
	}
	return nil
}

// WorkerLogs returns the logs of every worker, for a failed test.
func (w *World) WorkerLogs() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, ws := range append(w.workers[:], w.retired) {
		for _, p := range ws {
			fmt.Fprintf(&b, "--- %v\n%s\n", p, p.Logs())
		}
	}
	return b.String()
}

// Close kills every worker and stops the model.
func (w *World) Close() {
	w.mu.Lock()
	for _, ws := range w.workers {
		for _, p := range ws {
			p.Kill()
		}
	}
	w.mu.Unlock()
	for _, tc := range w.temporal {
		if tc != nil {
			tc.Close()
		}
	}
	if w.store != nil {
		_ = w.store.Close()
	}
	if w.Model != nil {
		_ = w.Model.Close()
	}
}
