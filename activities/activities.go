package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/telemetry"
	"github.com/agentchat/agentchat/wire"
)

// Activities are the agentchat activities. Safe for concurrent use. Their fields come
// from Config's parts, defaulted, grouped here the same way.
type Activities struct {
	registry *agents.Registry
	// kinds implement the agent kinds, by kind (newKinds).
	kinds map[wire.Kind]agentKind
	// identity is Config.WorkerIdentity, defaulted.
	identity string
	// unknownAgentWait is Config.UnknownAgentWait, defaulted.
	unknownAgentWait time.Duration
	// pollerAnswers keeps the task queues' pollers for a moment (unknownHere).
	pollerAnswers pollerAnswers
	// keys is Config.Keys; nil: encryption off.
	keys *keyring.Ring

	// Model calls (Config.Models): a client and a base URL per endpoint, by name (the
	// base URLs for the spans' server.address).
	models   map[string]*openai.Client
	baseURLs map[string]string

	// Go functions (Config.Functions) and the sessions with the config's MCP servers
	// (nil without any).
	functions FunctionConfig
	mcp       *mcpHub

	// Message stores (Config.Stores), sealed with keys.
	stores       map[string]msgstore.Store
	defaultStore string
	runs         *runCache

	// Transfer (Config.Transfer): the clusters' clients, this worker's cluster name,
	// the document store, and how documents are sealed (Documents.Ring defaulted to keys).
	clients     *clients
	clusterName string
	store       DocumentStore
	docs        envelope.Options

	// telemetry records model and tool calls (Config.Telemetry).
	telemetry *telemetry.Recorder
}

// ErrMissingAPIKey is returned by New when an endpoint on api.openai.com has no key.
var ErrMissingAPIKey = errors.New("API key not set")

// New builds the activities and a go-openai client per endpoint. It fails when the
// registry is missing, a tool of the agent config has no function, or an endpoint on
// api.openai.com has no key in its variable (unless Models.BaseURLOverride is set);
// endpoints elsewhere may go without a key (Ollama, vLLM), with a warning.
func New(cfg Config) (*Activities, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	rec, err := cfg.Telemetry.recorder(cfg.Keys != nil)
	if err != nil {
		return nil, err
	}
	a := &Activities{registry: cfg.Registry, identity: cfg.WorkerIdentity, unknownAgentWait: cfg.UnknownAgentWait,
		keys: cfg.Keys, functions: cfg.Functions, telemetry: rec}
	a.stores, a.defaultStore = sealStores(cfg.Stores.MessageStores, cfg.Keys), cfg.Stores.DefaultMessageStore
	a.runs = newRunCache(cfg.Stores.CachedRuns)
	a.clients, a.clusterName = newClients(cfg.Transfer, cfg.Keys), cfg.Transfer.ClusterName
	a.store, a.docs = cfg.Transfer.Store, cfg.Transfer.Documents
	a.kinds = newKinds(a)
	agentsCfg := cfg.Registry.Config()
	if len(agentsCfg.MCPServers) > 0 {
		if a.mcp, err = connectMCP(context.Background(), agentsCfg, cfg.Getenv, cfg.Telemetry.Logger); err != nil {
			return nil, err
		}
	}
	cfg.Models.HTTPClient = cfg.Telemetry.traced(cfg.Models.HTTPClient)
	if a.models, a.baseURLs, err = cfg.Models.clients(agentsCfg, cfg.Getenv, cfg.Telemetry.Logger); err != nil {
		_ = a.Close()
		return nil, err
	}
	return a, nil
}

// clients returns a go-openai client and the base URL of every endpoint of cfg, by
// name, the endpoints' keys read with getenv. An endpoint on api.openai.com without a
// key is an ErrMissingAPIKey error; one elsewhere is warned about on logger.
func (m ModelConfig) clients(cfg agents.Config, getenv func(string) string, logger *slog.Logger) (
	map[string]*openai.Client, map[string]string, error) {
	models, baseURLs := map[string]*openai.Client{}, map[string]string{}
	for name, e := range cfg.Endpoints {
		key := ""
		if e.APIKeyEnv != "" {
			key = getenv(e.APIKeyEnv)
			addSecret(key)
		}
		base := e.BaseURL
		if m.BaseURLOverride != "" {
			base = m.BaseURLOverride
			if key == "" || !m.SendKeysToOverride {
				key = "offline"
			}
		}
		if key == "" && e.APIKeyEnv != "" {
			if isOpenAI(base) {
				return nil, nil, fmt.Errorf("activities: endpoint %q (%s): %w: set %s, or run the worker with --offline",
					name, base, ErrMissingAPIKey, e.APIKeyEnv)
			}
			logger.Warn("endpoint has no API key; calling it without one", "endpoint", name, "baseURL", base, "variable", e.APIKeyEnv)
		}
		oc := openai.DefaultConfig(key)
		oc.BaseURL = base
		oc.HTTPClient = &doer{client: m.HTTPClient}
		models[name] = openai.NewClientWithConfig(oc)
		baseURLs[name] = base
	}
	return models, baseURLs, nil
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
