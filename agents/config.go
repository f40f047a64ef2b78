package agents

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// ExampleConfig is the commented example registry (agents.example.yaml): agents helper,
// writer and reviewer on the "default" endpoint. The worker and the demo use it when no
// config file is given.
//
//go:embed agents.example.yaml
var ExampleConfig []byte

// DefaultEndpoint is the endpoint an agent uses when it names none. Unless the config
// defines it, it is OpenAI at ${OPENAI_BASE_URL:-https://api.openai.com/v1} with the key
// in OPENAI_API_KEY, added only when some agent uses it.
const DefaultEndpoint = "default"

// Config is the agent registry file: endpoints by name and agent definitions.
type Config struct {
	Endpoints map[string]Endpoint `json:"endpoints,omitempty"`
	// Tools agents may call, by name; each needs a Go function of that name registered
	// on the worker (activities.Config.Functions.Tools).
	Tools map[string]wire.Tool `json:"tools,omitempty"`
	// MCPServers are MCP servers whose tools agents may call, by name (MCPServer).
	MCPServers map[string]MCPServer `json:"mcpServers,omitempty"`
	Agents     []Definition         `json:"agents"`
	// Prices are the optional prices of models, by model name (an agent's model, or the
	// model a provider reports answering), for the cost estimate of usage (Price.Cost).
	Prices map[string]Price `json:"prices,omitempty"`
}

// Endpoint is an OpenAI-compatible API. BaseURL and the key's variable name are all a
// config holds: the key is read from the worker's environment (APIKeyEnv) when the
// worker starts, and never enters a chat.
type Endpoint struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1" or
	// "http://localhost:11434/v1" (Ollama). ${VAR} and ${VAR:-fallback} are expanded.
	BaseURL string `json:"baseURL"`
	// APIKeyEnv is the name of the environment variable holding the API key; empty for
	// endpoints that need none (a local Ollama or vLLM).
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// Stream selects streaming (SSE) Chat Completions; nil means true. Streaming lets a
	// long answer heartbeat on every chunk. Kinds responses and assistant never stream:
	// they heartbeat while they wait.
	Stream *bool `json:"stream,omitempty"`
	// PublishInterval is how often a streamed reply's text deltas are published to the
	// chat's event stream (one signal per interval, wire.StreamPublishSignal); zero means
	// DefaultPublishInterval, a negative one publishes none (subscribers get the whole
	// text when the message is done). An agent's own PublishInterval wins.
	PublishInterval wire.Duration `json:"publishInterval,omitempty"`
}

// DefaultPublishInterval is the interval between two publications of text deltas when
// neither agent nor endpoint sets one: 50 ms, chosen by BenchmarkStream (README,
// "Performance"): chunk to subscriber p50 48-54 ms, p99 78-95 ms; at 100 ms the p50
// (66-93 ms) comes to the 100 ms goal on a busy machine, for a third less history.
const DefaultPublishInterval = 50 * time.Millisecond

// Streaming reports whether e streams; true unless Stream is set to false.
func (e Endpoint) Streaming() bool { return e.Stream == nil || *e.Stream }

// Definition is one agent.
type Definition struct {
	// ID is what chats use to name the agent: 1-64 of [a-z0-9_-], starting with a letter
	// or digit.
	ID string `json:"id"`
	// Name is the display name, written as authorName on the agent's messages; default ID.
	Name string `json:"name,omitempty"`
	// Kind selects the model API; default chat_completion.
	Kind wire.Kind `json:"kind,omitempty"`
	// Model is the provider's model name; ${VAR:-fallback} is expanded.
	Model string `json:"model"`
	// Endpoint names an entry of Config.Endpoints; default "default".
	Endpoint string `json:"endpoint,omitempty"`
	// Instructions become the system message of every model call (for kind responses
	// the request's instructions, sent on every call because the Responses API does not
	// carry them across previous_response_id; for kind assistant the run's instructions,
	// overriding the assistant's); they are never part of the chat's history or its
	// exported state.
	Instructions string `json:"instructions,omitempty"`
	// AssistantID, for kind assistant only, is an existing assistant ("asst_…") on the
	// agent's endpoint that runs use. Empty: the worker creates one assistant per agent
	// and endpoint on first use (with the agent's name, model and instructions) and
	// remembers it in memory until it stops.
	AssistantID string `json:"assistantId,omitempty"`
	// Call tunes the activity that calls the model.
	Call wire.CallSettings `json:"call,omitzero"`
	// Reducer shortens the history sent to the model; the zero value sends it all. Only
	// kind chat_completion has one: the other kinds' history lives in the service.
	Reducer strategies.Reducer `json:"reducer,omitzero"`
	// ContextTokens is the most the history sent to the model may count, in tokens as
	// strategies.EstimateTokens counts them (encoded bytes / 4, plus 8 a message), after
	// the reducer: the oldest messages beyond it are left out, never a tool result
	// without its call (strategies.Budget). Zero means strategies.DefaultContextTokens
	// (100,000); at least strategies.MinContextTokens (1,000). Set it to the model's
	// context window less the reply's room. A chat never fails on its own length.
	ContextTokens int `json:"contextTokens,omitempty"`
	// Tools names the tools this agent may call: the config's Go tools by name, and MCP
	// servers' tools as "server/tool" or "server/*" (all of its tools).
	Tools []string `json:"tools,omitempty"`
	// Approval names MCP tools of this agent ("server/tool", or "server/*") whose every
	// call waits for a person's approval, as a Go tool with approval: true does.
	Approval []string `json:"approval,omitempty"`
	// MaxToolRounds bounds the rounds of tool calls in one reply; default 5.
	MaxToolRounds int `json:"maxToolRounds,omitempty"`
	// Offline scripts the offline model's replies for this agent: {"replies": [...]} of
	// offline.Reply objects. Ignored with a real endpoint.
	Offline json.RawMessage `json:"offline,omitempty"`
	// PublishInterval overrides the endpoint's Endpoint.PublishInterval for this agent.
	PublishInterval wire.Duration `json:"publishInterval,omitempty"`
}

var agentIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ErrInvalidConfig is wrapped by every config error.
var ErrInvalidConfig = errors.New("invalid agent config")

// LoadConfig reads a registry file (YAML or JSON) and parses it with ParseConfig.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("agents: %w", err)
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig decodes a registry (YAML or JSON; unknown fields are errors), expands
// ${VAR} and ${VAR:-fallback} in base URLs and models from the environment, fills
// defaults and validates it. Errors wrap ErrInvalidConfig and name the agent or endpoint.
func ParseConfig(b []byte) (Config, error) {
	var cfg Config
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		return Config{}, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if cfg.Endpoints == nil {
		cfg.Endpoints = map[string]Endpoint{}
	}
	if _, ok := cfg.Endpoints[DefaultEndpoint]; !ok && usesDefaultEndpoint(cfg.Agents) {
		cfg.Endpoints[DefaultEndpoint] = Endpoint{BaseURL: "${OPENAI_BASE_URL:-https://api.openai.com/v1}", APIKeyEnv: "OPENAI_API_KEY"}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Endpoints)) {
		e := cfg.Endpoints[name]
		e.BaseURL = Expand(e.BaseURL)
		if e.BaseURL == "" {
			return Config{}, fmt.Errorf("%w: endpoint %q has no baseURL", ErrInvalidConfig, name)
		}
		if holdsCredentials(e.BaseURL) {
			return Config{}, fmt.Errorf("%w: endpoint %q: baseURL must not hold credentials (user info or a query); "+
				"put the key in the environment variable apiKeyEnv names", ErrInvalidConfig, name)
		}
		cfg.Endpoints[name] = e
	}
	if len(cfg.Agents) == 0 {
		return Config{}, fmt.Errorf("%w: no agents defined", ErrInvalidConfig)
	}
	if err := checkPrices(cfg.Prices); err != nil {
		return Config{}, err
	}
	seen := map[string]bool{}
	for i := range cfg.Agents {
		d := &cfg.Agents[i]
		d.fillDefaults()
		if err := d.validate(cfg.Endpoints); err != nil {
			return Config{}, fmt.Errorf("%w: agents[%d] %q: %w", ErrInvalidConfig, i, d.ID, err)
		}
		if seen[d.ID] {
			return Config{}, fmt.Errorf("%w: agent id %q is defined twice", ErrInvalidConfig, d.ID)
		}
		seen[d.ID] = true
	}
	if err := validateTools(cfg.Tools, cfg.Agents); err != nil {
		return Config{}, err
	}
	if err := validateMCP(&cfg); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// usesDefaultEndpoint reports whether an agent names DefaultEndpoint or no endpoint.
// Only then is OpenAI added as DefaultEndpoint: a config whose agents all use other
// endpoints (Ollama, vLLM) must not need an OpenAI key.
func usesDefaultEndpoint(defs []Definition) bool {
	for _, d := range defs {
		if d.Endpoint == "" || d.Endpoint == DefaultEndpoint {
			return true
		}
	}
	return false
}

func (d *Definition) fillDefaults() {
	if d.Name == "" {
		d.Name = d.ID
	}
	if d.Kind == "" {
		d.Kind = wire.KindChatCompletion
	}
	if d.Endpoint == "" {
		d.Endpoint = DefaultEndpoint
	}
	d.Model = Expand(d.Model)
}

func (d *Definition) validate(endpoints map[string]Endpoint) error {
	if !agentIDPattern.MatchString(d.ID) {
		return errors.New("id must be 1-64 of a-z, 0-9, _ and -, starting with a letter or digit")
	}
	ch, err := d.Kind.Channel()
	if err != nil {
		return err
	}
	if d.AssistantID != "" && d.Kind != wire.KindAssistant {
		return fmt.Errorf("assistantId is only for kind %q, not %q", wire.KindAssistant, d.Kind)
	}
	if ch.ServiceThread && d.Reducer.Key() != strategies.ReducerNone {
		return fmt.Errorf("kind %q keeps its history in the service and takes no reducer", d.Kind)
	}
	if d.Model == "" {
		return errors.New("model is empty")
	}
	if _, ok := endpoints[d.Endpoint]; !ok {
		return fmt.Errorf("endpoint %q is not defined", d.Endpoint)
	}
	if err := d.Reducer.Validate(); err != nil {
		return err
	}
	if d.ContextTokens != 0 && d.ContextTokens < strategies.MinContextTokens {
		return fmt.Errorf("contextTokens %d is under %d; leave it out for the default %d",
			d.ContextTokens, strategies.MinContextTokens, strategies.DefaultContextTokens)
	}
	if d.Call.MaxAttempts < 0 {
		return errors.New("call.maxAttempts must not be negative")
	}
	return d.Call.Validate()
}

// Expand replaces ${VAR} and ${VAR:-fallback} (and $VAR) in s from the environment.
func Expand(s string) string {
	return os.Expand(s, func(name string) string {
		key, fallback, hasFallback := strings.Cut(name, ":-")
		if v := os.Getenv(key); v != "" || !hasFallback {
			return v
		}
		return fallback
	})
}

// holdsCredentials reports whether a base URL carries user info or a query: a key
// there would reach logs and errors unredacted (only apiKeyEnv's value is), and
// go-openai appends the API's paths after the base URL, so a query cannot work.
func holdsCredentials(base string) bool {
	u, err := url.Parse(base)
	return err == nil && (u.User != nil || u.RawQuery != "" || u.ForceQuery)
}
