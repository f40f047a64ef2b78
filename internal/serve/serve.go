// Package serve assembles a running agentchat worker from its parts: the agent
// registry, the model (a real endpoint or the in-process offline model), the
// activities and the Temporal worker. The worker command and the demo share it.
package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

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
	"github.com/agentchat/agentchat/internal/logx"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/storeurl"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/tools"
	"github.com/agentchat/agentchat/wire"
)

// AgentsEnv names the environment variable with the agent config path.
const AgentsEnv = "AGENTCHAT_AGENTS"

// StopTimeout is how long a stopping worker lets running activities finish.
const StopTimeout = 30 * time.Second

// Options configure Start.
type Options struct {
	// AgentsPath is the agent config file; "" means $AGENTCHAT_AGENTS, then the
	// embedded example (agents.ExampleConfig).
	AgentsPath string
	// Offline serves every agent with the in-process offline model.
	Offline bool
	// TaskQueue defaults to wire.TaskQueue.
	TaskQueue string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Namespace is the namespace tc is bound to; default "default".
	Namespace string
	// ClusterName is what this worker calls its own cluster; default "local".
	ClusterName string
	// Clusters are other Temporal clusters chats may migrate to: name → "host:port" or
	// "host:port/namespace".
	Clusters map[string]string
	// StoreDir holds exported documents too large to travel inline; default
	// $AGENTCHAT_DATA_DIR/exports, else .agentchat/exports.
	StoreDir string
	// MessageStores are message store URLs ("sqlite:///path/messages.db",
	// "postgres://..."); the first is where chats on the workflow store spill. Default:
	// SQLite in $AGENTCHAT_DATA_DIR/messages.db.
	MessageStores []string
	// Tools, Selectors and Judges are Go functions for the config's tools and
	// "function" strategies, added to the built-in tools (package tools).
	Tools     map[string]activities.ToolFunc
	Selectors map[string]activities.SelectFunc
	Judges    map[string]activities.JudgeFunc
	// UnknownAgentWait is activities.Config.UnknownAgentWait: how long a chat tries the
	// queue's other workers for an agent or Go function this one lacks; zero means 2m.
	UnknownAgentWait time.Duration
	// Identity is the worker identity it polls with (worker.Options.Identity), and
	// names it in UnknownAgent and UnknownFunction answers; "" means Temporal's
	// default, "<pid>@<host>@".
	Identity string
	// Keys is the key ring of tc's codec (codec.Apply), if any: the clients of other
	// clusters get the same codec, and the activities seal store bodies and
	// documents with it. Nil: encryption off.
	Keys *keyring.Ring
	// Documents say how documents are sealed and opened (activities.Config.Transfer.Documents);
	// nil: envelope.FromEnv with Keys (AGENTCHAT_SIGNING_KEY, AGENTCHAT_VERIFY_KEYS,
	// AGENTCHAT_REQUIRE_SIGNATURE).
	Documents *envelope.Options
	// TracerProvider, MeterProvider and CaptureContent are activities.Config.Telemetry's: spans
	// and gen_ai metrics of model and tool calls (package telemetry); nil means none.
	// CaptureContent (message content in spans) must stay false when chats are
	// encrypted, whatever the environment asks (set it after SetupTelemetry).
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	CaptureContent bool
}

// Worker is a started worker and what it runs on.
type Worker struct {
	Worker    worker.Worker
	Registry  *agents.Registry
	Model     *offline.Server // nil unless offline
	TaskQueue string
	// ModelInfo says in one line which model answers, for the user.
	ModelInfo string
	// AgentsSource says where the agent config came from.
	AgentsSource string
	// MessageStoreURLs are the message stores' URLs (passwords hidden), the default
	// first: where long chats' stored bodies and history pages go.
	MessageStoreURLs []string

	clusters map[string]activities.Cluster
	stores   map[string]msgstore.Store
	acts     *activities.Activities
}

// MessageStores are the worker's message stores by name, for a client in the same
// process that reads long chats' pages (the MCP server's).
func (w *Worker) MessageStores() map[string]msgstore.Store { return w.stores }

// Start loads the registry, starts the offline model if asked, builds the activities
// (which checks API keys) and starts a worker on tc.
func Start(tc client.Client, opts Options) (*Worker, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.TaskQueue == "" {
		opts.TaskQueue = wire.TaskQueue
	}
	path := opts.AgentsPath
	if path == "" {
		path = os.Getenv(AgentsEnv)
	}
	reg, err := hosting.LoadRegistry(path)
	if err != nil {
		return nil, err
	}
	w := &Worker{Registry: reg, TaskQueue: opts.TaskQueue, AgentsSource: path}
	if path == "" {
		w.AgentsSource = "built-in example (agents/agents.example.yaml)"
	}
	clusters, err := dialClusters(opts.Clusters, opts.Logger, opts.Keys)
	if err != nil {
		return nil, err
	}
	w.clusters = clusters
	stores, first, err := openStores(opts.MessageStores)
	if err != nil {
		w.stopModel()
		return nil, err
	}
	w.stores = stores
	w.MessageStoreURLs = storeURLs(opts.MessageStores)
	docs, err := documents(opts)
	if err != nil {
		w.stopModel()
		return nil, err
	}
	cfg := activities.Config{Registry: reg, UnknownAgentWait: opts.UnknownAgentWait, WorkerIdentity: opts.Identity, Keys: opts.Keys,
		Functions: activities.FunctionConfig{Tools: tools.Builtin(), Selectors: opts.Selectors, Judges: opts.Judges},
		Stores:    activities.StoreConfig{MessageStores: stores, DefaultMessageStore: first},
		Transfer: activities.TransferConfig{Temporal: tc, Namespace: opts.Namespace, ClusterName: opts.ClusterName,
			Clusters: clusters, Store: activities.FileStore{Dir: storeDir(opts.StoreDir)}, Documents: docs},
		Telemetry: activities.TelemetryConfig{Logger: opts.Logger, TracerProvider: opts.TracerProvider,
			MeterProvider: opts.MeterProvider, CaptureContent: opts.CaptureContent},
	}
	for name, f := range opts.Tools {
		cfg.Functions.Tools[name] = f
	}
	if opts.Offline {
		mopts, err := hosting.OfflineOptions(reg)
		if err != nil {
			return nil, err
		}
		mopts.Logger = opts.Logger
		if w.Model, err = offline.Start(mopts); err != nil {
			return nil, fmt.Errorf("start the offline model: %w", err)
		}
		cfg.Models.BaseURLOverride = w.Model.URL()
		w.ModelInfo = fmt.Sprintf("offline model (built-in, deterministic, at %s); no real model is called", w.Model.URL())
	} else {
		w.ModelInfo = describeEndpoints(reg)
	}
	acts, err := activities.New(cfg)
	if err != nil {
		w.stopModel()
		return nil, err
	}
	w.acts = acts
	registerSearchAttributes(tc, cmpOr(opts.Namespace, client.DefaultNamespace), opts.Logger)
	w.Worker = hosting.NewWorker(tc, opts.TaskQueue, acts, worker.Options{
		WorkerStopTimeout: StopTimeout,
	})
	if err := w.Worker.Start(); err != nil {
		w.stopModel()
		return nil, fmt.Errorf("start worker on task queue %q: %w", opts.TaskQueue, err)
	}
	return w, nil
}

// Stop stops the worker (letting running activities finish for up to StopTimeout), its
// MCP servers' sessions and the offline model.
func (w *Worker) Stop() {
	w.Worker.Stop()
	w.stopModel()
}

func (w *Worker) stopModel() {
	if w.acts != nil {
		_ = w.acts.Close() // the MCP servers' sessions and processes
	}
	if w.Model != nil {
		_ = w.Model.Close()
	}
	for _, c := range w.clusters {
		c.Client.Close()
	}
	for _, s := range w.stores {
		_ = s.Close()
	}
}

// documents returns opts.Documents, else the environment's.
func documents(opts Options) (envelope.Options, error) {
	if opts.Documents != nil {
		return *opts.Documents, nil
	}
	return envelope.FromEnv(opts.Keys)
}

// ReaderStores opens the message stores a client reads older messages from (history
// pages, stored bodies): urls when given, else the worker's default SQLite file in the
// data folder when it exists and is not empty (nil without it). It never creates a
// store: a sqlite URL whose file does not exist is an error wrapping
// msgstore.ErrNoStore that names the path (storeurl.OpenExisting).
func ReaderStores(urls []string) (map[string]msgstore.Store, error) {
	if len(urls) == 0 {
		path, err := filepath.Abs(filepath.Join(DataDir(), "messages.db"))
		if err != nil {
			return nil, err
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			return nil, nil
		}
	}
	stores, _, err := openStoresWith(urls, storeurl.OpenExisting)
	return stores, err
}

// openStores opens the message stores by URL, creating a missing SQLite file, and
// names the first; with none given, SQLite in the data folder.
func openStores(urls []string) (map[string]msgstore.Store, string, error) {
	return openStoresWith(urls, storeurl.Open)
}

// openStoresWith is openStores, each URL opened by open.
func openStoresWith(urls []string, open func(context.Context, string) (msgstore.Store, error)) (map[string]msgstore.Store, string, error) {
	if len(urls) == 0 {
		path, err := filepath.Abs(filepath.Join(DataDir(), "messages.db"))
		if err != nil {
			return nil, "", err
		}
		urls = []string{"sqlite://" + path}
	}
	stores := map[string]msgstore.Store{}
	first := ""
	for _, u := range urls {
		st, err := open(context.Background(), u)
		if err != nil {
			for _, s := range stores {
				_ = s.Close()
			}
			return nil, "", fmt.Errorf("message store %s: %w", redact(u), err)
		}
		if _, dup := stores[st.Name()]; dup {
			_ = st.Close()
			return nil, "", fmt.Errorf("two message stores of kind %q; give one of each", st.Name())
		}
		stores[st.Name()] = st
		if first == "" {
			first = st.Name()
		}
	}
	return stores, first, nil
}

// storeURLs returns the message store URLs openStores opens for urls, passwords hidden.
func storeURLs(urls []string) []string {
	if len(urls) == 0 {
		path, _ := filepath.Abs(filepath.Join(DataDir(), "messages.db"))
		return []string{"sqlite://" + path}
	}
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = redact(u)
	}
	return out
}

// redact hides a URL's password.
func redact(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return "(unparsable URL)"
}

// dialClusters connects to each named cluster ("host:port" or "host:port/namespace").
func dialClusters(specs map[string]string, logger *slog.Logger, keys *keyring.Ring) (map[string]activities.Cluster, error) {
	out := map[string]activities.Cluster{}
	for name, spec := range specs {
		addr, ns, _ := strings.Cut(spec, "/")
		if ns == "" {
			ns = "default"
		}
		co := client.Options{HostPort: addr, Namespace: ns, Logger: QuietTemporalLogger(logger)}
		codec.Apply(&co, keys)
		tc, err := client.Dial(co)
		if err != nil {
			for _, c := range out {
				c.Client.Close()
			}
			return nil, fmt.Errorf("cluster %q at %s: %w", name, addr, err)
		}
		out[name] = activities.Cluster{Client: tc, Namespace: ns, Address: addr}
	}
	return out, nil
}

// DataDirEnv names the environment variable of the local data folder.
const DataDirEnv = "AGENTCHAT_DATA_DIR"

// DefaultDataDir holds the local dev server's files and exported documents.
const DefaultDataDir = ".agentchat"

// DataDir returns $AGENTCHAT_DATA_DIR, or DefaultDataDir.
func DataDir() string {
	if d := os.Getenv(DataDirEnv); d != "" {
		return d
	}
	return DefaultDataDir
}

// storeDir returns dir, or the exports folder of the data folder.
func storeDir(dir string) string {
	if dir != "" {
		return dir
	}
	return filepath.Join(DataDir(), "exports")
}

// describeEndpoints names the endpoints and models the registry's agents use.
func describeEndpoints(reg *agents.Registry) string {
	seen := map[string]bool{}
	out := ""
	for _, id := range reg.IDs() {
		d, _ := reg.Get(id)
		e := reg.Endpoint(d)
		key := d.Endpoint + " " + d.Model
		if seen[key] {
			continue
		}
		seen[key] = true
		if out != "" {
			out += "; "
		}
		out += fmt.Sprintf("model %s at %s", d.Model, e.BaseURL)
		switch {
		case e.APIKeyEnv != "" && os.Getenv(e.APIKeyEnv) != "":
			out += fmt.Sprintf(" (key from %s)", e.APIKeyEnv)
		case e.APIKeyEnv != "":
			out += fmt.Sprintf(" (no key: %s is not set)", e.APIKeyEnv)
		}
	}
	return out
}

// QuietTemporalLogger returns a Temporal SDK logger that passes on warnings and errors
// only, so command output stays readable.
func QuietTemporalLogger(l *slog.Logger) tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(logx.MinLevel(l.Handler(), slog.LevelWarn)))
}

// searchAttributesTimeout bounds the worker's registration of the chats' search
// attributes.
const searchAttributesTimeout = 10 * time.Second

// registerSearchAttributes registers the chats' search attributes in namespace ns
// (agentchat.RegisterSearchAttributes), so that starter list shows agents and turns
// and filters by them. Where the server does not allow it, the worker says so and
// how to add them, and goes on: chats work without them.
func registerSearchAttributes(tc client.Client, ns string, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), searchAttributesTimeout)
	defer cancel()
	if err := agentchat.RegisterSearchAttributes(ctx, tc, ns); err != nil {
		logger.Warn("chats are listed without agents and turns", "error", err)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
