package activities

import (
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// Config is what the activities need: the registry and what every concern shares, then
// one part per concern (model calls, Go functions, message stores, transfer between
// namespaces and clusters, telemetry). New checks each part and builds each concern.
type Config struct {
	// Registry holds the agent definitions; required.
	Registry *agents.Registry
	// Getenv reads secrets by the names the agent config gives: the endpoints' API keys
	// and the MCP servers' Env and HeadersEnv variables; nil means os.Getenv.
	Getenv func(string) string
	// Keys, when set, encrypt chat content at rest: Temporal payloads of the clients
	// these activities make for other namespaces and clusters (package codec), and
	// message store bodies and documents (envelopes, docs/chat-state-v1.md).
	// Transfer.Temporal and Transfer.Clusters must then be clients made with codec.Apply
	// of the same ring.
	Keys *keyring.Ring
	// WorkerIdentity is the identity of the worker these activities run on, as the
	// server lists its pollers: worker.Options.Identity (hosting.NewWorker polls
	// with this one when that option is empty). It names the worker in UnknownAgent
	// and UnknownFunction answers, so that a chat knows when every poller has
	// answered. "" means Temporal's default, "<pid>@<host>@".
	WorkerIdentity string
	// UnknownAgentWait is how long a chat tries the other workers of its task queue
	// for an agent this worker does not know, or a tool, selection or termination
	// function it does not register (a rolling deploy that adds or removes one),
	// before the call fails with UnknownAgent (UnknownFunction); zero means
	// wire.DefaultUnknownAgentWait (2m). The chat stops earlier once every worker
	// polling the queue has said it lacks it.
	UnknownAgentWait time.Duration

	Models    ModelConfig
	Functions FunctionConfig
	Stores    StoreConfig
	Transfer  TransferConfig
	Telemetry TelemetryConfig
}

// check reports the first part of c that New cannot build from.
func (c Config) check() error {
	if c.Registry == nil {
		return errors.New("activities: Config.Registry is required")
	}
	return c.Functions.check(c.Registry.Config())
}

// withDefaults returns c with every part's zero fields defaulted.
func (c Config) withDefaults() Config {
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.WorkerIdentity == "" {
		c.WorkerIdentity = defaultIdentity()
	}
	if c.UnknownAgentWait <= 0 {
		c.UnknownAgentWait = wire.DefaultUnknownAgentWait
	}
	c.Models = c.Models.withDefaults()
	c.Stores = c.Stores.withDefaults()
	c.Transfer = c.Transfer.withDefaults(c.Keys)
	c.Telemetry = c.Telemetry.withDefaults()
	return c
}

// ModelConfig is how the model calls reach the endpoints of the agent config.
type ModelConfig struct {
	// BaseURLOverride, when set, sends every endpoint's calls to this base URL instead
	// (the offline model); API keys are then not required, and not sent.
	BaseURLOverride string
	// SendKeysToOverride sends the endpoints' keys to BaseURLOverride all the same
	// (tests of what becomes of a key).
	SendKeysToOverride bool
	// HTTPClient carries the model calls; nil means a client on http.DefaultTransport.
	// It must not retry: Temporal does. Per-call deadlines come from the activity context.
	HTTPClient *http.Client
}

func (m ModelConfig) withDefaults() ModelConfig {
	if m.HTTPClient == nil {
		m.HTTPClient = &http.Client{}
	}
	return m
}

// FunctionConfig holds the Go functions that the agent config names, by name.
type FunctionConfig struct {
	// Tools are the Go functions behind the config's tools, by name; every tool the
	// config declares needs one.
	Tools map[string]ToolFunc
	// Selectors and Judges are the Go functions of "function" selection and
	// termination strategies, by name.
	Selectors map[string]SelectFunc
	Judges    map[string]JudgeFunc
}

// check fails when a tool of cfg has no function in f.Tools.
func (f FunctionConfig) check(cfg agents.Config) error {
	return checkTools(cfg, f.Tools)
}

// StoreConfig is where the bodies of long chats' older messages live.
type StoreConfig struct {
	// MessageStores hold the bodies of older messages of long chats, by name ("sqlite",
	// "postgres"); DefaultMessageStore names the one chats on the workflow store spill
	// into (default: the only one, if there is exactly one).
	MessageStores       map[string]msgstore.Store
	DefaultMessageStore string
	// CachedRuns is how many chat runs' histories the model calls cache; default 256.
	CachedRuns int
}

func (s StoreConfig) withDefaults() StoreConfig {
	if s.DefaultMessageStore == "" && len(s.MessageStores) == 1 {
		for name := range s.MessageStores {
			s.DefaultMessageStore = name
		}
	}
	if s.CachedRuns <= 0 {
		s.CachedRuns = 256
	}
	return s
}

// TransferConfig is what export, import and migration need: this worker's Temporal
// client and cluster, the other clusters, and how documents are kept and sealed.
type TransferConfig struct {
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
	// Documents say how exported documents are sealed (encrypted with Documents.Ring,
	// else Config.Keys; signed with Documents.Signer) and how imported ones are opened
	// and verified (package envelope). The zero value with Config.Keys nil writes and
	// reads plain v1 documents.
	Documents envelope.Options
}

// withDefaults returns t defaulted, its Documents.Ring to keys.
func (t TransferConfig) withDefaults(keys *keyring.Ring) TransferConfig {
	if t.ClusterName == "" {
		t.ClusterName = "local"
	}
	if t.Store == nil {
		t.Store = FileStore{Dir: filepath.Join(os.TempDir(), "agentchat-exports")}
	}
	if t.Documents.Ring == nil {
		t.Documents.Ring = keys
	}
	return t
}

// TelemetryConfig is where the activities' spans, metrics and start-up warnings go.
type TelemetryConfig struct {
	// TracerProvider and MeterProvider receive a span and the gen_ai.client.* metrics
	// per model call and per tool call (package telemetry), and, for tracing, the model
	// calls' HTTP spans (otelhttp); nil means none.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// CaptureContent puts message content (a call's messages, a tool's arguments and
	// result) into the spans: telemetry.CaptureContentFromEnv; false by default, and
	// ignored when Config.Keys is set (encrypted chats' content never goes into a span).
	CaptureContent bool
	// Logger receives warnings at start; nil means slog.Default().
	Logger *slog.Logger
}

func (t TelemetryConfig) withDefaults() TelemetryConfig {
	if t.Logger == nil {
		t.Logger = slog.Default()
	}
	return t
}
