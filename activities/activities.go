package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/telemetry"
	"github.com/agentchat/agentchat/wire"
)

// Config is what the activities need; New validates it.
type Config struct {
	// Registry holds the agent definitions; required.
	Registry *agents.Registry
	// BaseURLOverride, when set, sends every endpoint's calls to this base URL instead
	// (the offline model); API keys are then not required, and not sent.
	BaseURLOverride string
	// SendKeysToOverride sends the endpoints' keys to BaseURLOverride all the same
	// (tests of what becomes of a key).
	SendKeysToOverride bool
	// Getenv reads API keys by the names the endpoints give; nil means os.Getenv.
	Getenv func(string) string
	// HTTPClient carries the model calls; nil means a client on http.DefaultTransport.
	// It must not retry: Temporal does. Per-call deadlines come from the activity context.
	HTTPClient *http.Client
	// Logger receives warnings at start; nil means slog.Default().
	Logger *slog.Logger

	// Temporal is the worker's own client (its namespace in Namespace); export and
	// migration need it, model calls do not.
	Temporal  client.Client
	Namespace string
	// ClusterName is what this worker calls its own cluster; default "local".
	ClusterName string
	// Clusters are other Temporal clusters a chat may migrate to, by name.
	Clusters map[string]Cluster
	// Store holds documents too large to travel inline; nil means a FileStore in
	// $TMPDIR/agentchat-exports.
	Store DocumentStore
	// MessageStores hold the bodies of older messages of long chats, by name ("sqlite",
	// "postgres"); DefaultMessageStore names the one chats on the workflow store spill
	// into (default: the only one, if there is exactly one).
	MessageStores       map[string]msgstore.Store
	DefaultMessageStore string
	// CachedRuns is how many chat runs' histories the model calls cache; default 256.
	CachedRuns int
	// Tools are the Go functions behind the config's tools, by name; every tool the
	// config declares needs one.
	Tools map[string]ToolFunc
	// Selectors and Judges are the Go functions of "function" selection and
	// termination strategies, by name.
	Selectors map[string]SelectFunc
	Judges    map[string]JudgeFunc
	// UnknownAgentWait is how long a chat tries the other workers of its task queue
	// for an agent this worker does not know, or a tool, selection or termination
	// function it does not register (a rolling deploy that adds or removes one),
	// before the call fails with UnknownAgent (UnknownFunction); zero means
	// wire.DefaultUnknownAgentWait (2m). The chat stops earlier once every worker
	// polling the queue has said it lacks it.
	UnknownAgentWait time.Duration
	// WorkerIdentity is the identity of the worker these activities run on, as the
	// server lists its pollers: worker.Options.Identity (hosting.NewWorker polls
	// with this one when that option is empty). It names the worker in UnknownAgent
	// and UnknownFunction answers, so that a chat knows when every poller has
	// answered. "" means Temporal's default, "<pid>@<host>@".
	WorkerIdentity string
	// Keys, when set, encrypt chat content at rest: Temporal payloads of the clients
	// these activities make for other namespaces and clusters (package codec), and
	// message store bodies and documents (envelopes, docs/chat-state-v1.md). Config.Temporal
	// and Clusters must then be clients made with codec.Apply of the same ring.
	Keys *keyring.Ring
	// Documents say how exported documents are sealed (encrypted with Documents.Ring,
	// else Keys; signed with Documents.Signer) and how imported ones are opened and
	// verified (package envelope). The zero value with Keys nil writes and reads plain
	// v1 documents.
	Documents envelope.Options
	// TracerProvider and MeterProvider receive a span and the gen_ai.client.* metrics
	// per model call and per tool call (package telemetry), and, for tracing, the model
	// calls' HTTP spans (otelhttp); nil means none.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// CaptureContent puts message content (a call's messages, a tool's arguments and
	// result) into the spans: telemetry.CaptureContentFromEnv; false by default, and
	// ignored when Keys is set (encrypted chats' content never goes into a span).
	CaptureContent bool
}

// Activities are the agentchat activities. Safe for concurrent use.
type Activities struct {
	registry     *agents.Registry
	models       map[string]*openai.Client // by endpoint name
	clients      *clients
	clusterName  string
	store        DocumentStore
	stores       map[string]msgstore.Store
	defaultStore string
	runs         *runCache
	tools        map[string]ToolFunc
	selectors    map[string]SelectFunc
	judges       map[string]JudgeFunc
	// unknownAgentWait is Config.UnknownAgentWait, defaulted.
	unknownAgentWait time.Duration
	// identity is Config.WorkerIdentity, defaulted.
	identity string
	// pollerAnswers keeps the task queues' pollers for a moment (unknownHere).
	pollerAnswers pollerAnswers
	// kinds implement the agent kinds, by kind (newKinds).
	kinds map[wire.Kind]agentKind
	// keys is Config.Keys; nil: encryption off.
	keys *keyring.Ring
	// docs is Config.Documents, its Ring defaulted to Keys.
	docs envelope.Options
	// mcp holds the sessions with the config's MCP servers; nil without any.
	mcp *mcpHub
	// telemetry records model and tool calls (Config.TracerProvider, MeterProvider).
	telemetry *telemetry.Recorder
	// baseURLs are the endpoints' base URLs, by name, for the spans' server.address.
	baseURLs map[string]string
}

// ErrMissingAPIKey is returned by New when an endpoint on api.openai.com has no key.
var ErrMissingAPIKey = errors.New("API key not set")

// New builds the activities and a go-openai client per endpoint. It fails when the
// registry is missing or an endpoint on api.openai.com has no key in its variable
// (unless BaseURLOverride is set); endpoints elsewhere may go without a key (Ollama,
// vLLM), with a warning.
func New(cfg Config) (*Activities, error) {
	if cfg.Registry == nil {
		return nil, errors.New("activities: Config.Registry is required")
	}
	if err := checkTools(cfg.Registry.Config(), cfg.Tools); err != nil {
		return nil, err
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	// Spans leave the worker in plain text: with encryption on, no content goes into
	// them, whatever CaptureContent asks.
	rec, err := telemetry.NewRecorder(cfg.TracerProvider, cfg.MeterProvider, cfg.CaptureContent && cfg.Keys == nil)
	if err != nil {
		return nil, fmt.Errorf("activities: telemetry: %w", err)
	}
	if cfg.TracerProvider != nil { // a span per model HTTP request, child of the call's
		hc := *cfg.HTTPClient
		base := hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		hc.Transport = otelhttp.NewTransport(base, otelhttp.WithTracerProvider(cfg.TracerProvider),
			otelhttp.WithMeterProvider(orNoopMeter(cfg.MeterProvider)))
		cfg.HTTPClient = &hc
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ClusterName == "" {
		cfg.ClusterName = "local"
	}
	if cfg.Store == nil {
		cfg.Store = FileStore{Dir: filepath.Join(os.TempDir(), "agentchat-exports")}
	}
	if cfg.DefaultMessageStore == "" && len(cfg.MessageStores) == 1 {
		for name := range cfg.MessageStores {
			cfg.DefaultMessageStore = name
		}
	}
	if cfg.CachedRuns <= 0 {
		cfg.CachedRuns = 256
	}
	if cfg.UnknownAgentWait <= 0 {
		cfg.UnknownAgentWait = wire.DefaultUnknownAgentWait
	}
	if cfg.WorkerIdentity == "" {
		cfg.WorkerIdentity = defaultIdentity()
	}
	a := &Activities{registry: cfg.Registry, models: map[string]*openai.Client{}, baseURLs: map[string]string{},
		clusterName: cfg.ClusterName, store: cfg.Store, stores: sealStores(cfg.MessageStores, cfg.Keys),
		defaultStore: cfg.DefaultMessageStore, runs: newRunCache(cfg.CachedRuns), tools: cfg.Tools,
		selectors: cfg.Selectors, judges: cfg.Judges, unknownAgentWait: cfg.UnknownAgentWait, identity: cfg.WorkerIdentity,
		keys: cfg.Keys, docs: cfg.Documents,
		clients: &clients{self: cfg.ClusterName, clusters: map[string]Cluster{}, byNS: map[[2]string]client.Client{}, keys: cfg.Keys}}
	a.kinds = newKinds(a)
	if a.docs.Ring == nil {
		a.docs.Ring = cfg.Keys
	}
	a.telemetry = rec
	for name, c := range cfg.Clusters {
		a.clients.clusters[name] = c
	}
	if cfg.Temporal != nil {
		a.clients.clusters[cfg.ClusterName] = Cluster{Client: cfg.Temporal, Namespace: cfg.Namespace}
	}
	if servers := cfg.Registry.Config().MCPServers; len(servers) > 0 {
		hub, err := connectMCP(context.Background(), cfg.Registry.Config(), cfg.Getenv, cfg.Logger)
		if err != nil {
			return nil, err
		}
		a.mcp = hub
	}
	for name, e := range cfg.Registry.Config().Endpoints {
		key := ""
		if e.APIKeyEnv != "" {
			key = cfg.Getenv(e.APIKeyEnv)
			addSecret(key)
		}
		base := e.BaseURL
		if cfg.BaseURLOverride != "" {
			base = cfg.BaseURLOverride
			if key == "" || !cfg.SendKeysToOverride {
				key = "offline"
			}
		}
		if key == "" && e.APIKeyEnv != "" {
			if isOpenAI(base) {
				_ = a.Close()
				return nil, fmt.Errorf("activities: endpoint %q (%s): %w: set %s, or run the worker with --offline",
					name, base, ErrMissingAPIKey, e.APIKeyEnv)
			}
			cfg.Logger.Warn("endpoint has no API key; calling it without one", "endpoint", name, "baseURL", base, "variable", e.APIKeyEnv)
		}
		oc := openai.DefaultConfig(key)
		oc.BaseURL = base
		oc.HTTPClient = &doer{client: cfg.HTTPClient}
		a.models[name] = openai.NewClientWithConfig(oc)
		a.baseURLs[name] = base
	}
	return a, nil
}

// Close ends the sessions with the config's MCP servers, stopping the stdio servers'
// processes. Call it after the worker stopped.
func (a *Activities) Close() error {
	if a.mcp == nil {
		return nil
	}
	return a.mcp.close()
}

func isOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Hostname() == "api.openai.com"
}

// ResolveParticipants looks the chat's agent ids up in the registry. Unknown ids give
// a non-retryable error of type UnknownAgent that names them, with
// wire.UnknownAgentDetails (see unknownHere).
func (a *Activities) ResolveParticipants(ctx context.Context, in wire.ResolveInput) (wire.ResolveResult, error) {
	ps, err := a.registry.Resolve(in.AgentIDs)
	if err != nil {
		var unknown *agents.UnknownAgentsError
		if errors.As(err, &unknown) {
			return wire.ResolveResult{}, a.unknownHere(ctx, wire.KindAgent, unknown.Unknown, a.registry.IDs(), err.Error())
		}
		return wire.ResolveResult{}, temporal.NewNonRetryableApplicationError(err.Error(), wire.ErrTypeInvalidInput, nil)
	}
	for i := range ps {
		d, _ := a.registry.Get(ps[i].ID)
		ps[i].Tools = append(ps[i].Tools, a.mcpSpecs(d)...)
	}
	return wire.ResolveResult{Participants: ps}, nil
}

// sealStores wraps each store so that its bodies are encrypted with keys
// (msgstore.Sealed); keys nil returns them as they are.
func sealStores(stores map[string]msgstore.Store, keys *keyring.Ring) map[string]msgstore.Store {
	if keys == nil {
		return stores
	}
	out := make(map[string]msgstore.Store, len(stores))
	for name, st := range stores {
		out[name] = msgstore.Sealed(st, keys)
	}
	return out
}
