package agents

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/wire"
)

// clearOpenAIEnv makes the example config's ${VAR:-fallback} take its fallbacks.
func clearOpenAIEnv(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_MODEL", "")
}

func TestParseExampleConfig(t *testing.T) {
	clearOpenAIEnv(t)
	cfg, err := ParseConfig(ExampleConfig)
	if err != nil {
		t.Fatalf("ParseConfig(ExampleConfig): %v", err)
	}
	def, ok := cfg.Endpoints[DefaultEndpoint]
	if !ok {
		t.Fatalf("endpoints = %v, want %q", cfg.Endpoints, DefaultEndpoint)
	}
	if def.BaseURL != "https://api.openai.com/v1" || def.APIKeyEnv != "OPENAI_API_KEY" || !def.Streaming() {
		t.Errorf("default endpoint = %+v, want OpenAI's URL, key in OPENAI_API_KEY, streaming", def)
	}

	want := []struct{ id, name string }{{"helper", "Helper"}, {"writer", "Writer"}, {"reviewer", "Reviewer"}, {"clerk", "Clerk"}, {"moderator", "Moderator"}, {"editor", "Editor"}}
	if len(cfg.Agents) != len(want) {
		t.Fatalf("agents = %d, want %d", len(cfg.Agents), len(want))
	}
	for i, w := range want {
		d := cfg.Agents[i]
		if d.ID != w.id || d.Name != w.name {
			t.Errorf("agents[%d] = %q %q, want %q %q", i, d.ID, d.Name, w.id, w.name)
		}
		if d.Kind != wire.KindChatCompletion || d.Endpoint != DefaultEndpoint || d.Model != "gpt-4o-mini" {
			t.Errorf("agent %s: kind %q endpoint %q model %q, want chat_completion, default, gpt-4o-mini",
				d.ID, d.Kind, d.Endpoint, d.Model)
		}
		if strings.TrimSpace(d.Instructions) == "" {
			t.Errorf("agent %s has no instructions", d.ID)
		}
		if d.Call != (wire.CallSettings{}) {
			t.Errorf("agent %s: call = %+v, want all defaults (zero)", d.ID, d.Call)
		}
	}

	if got := cfg.Agents[3].Tools; !slices.Equal(got, []string{"lookup_order", "refund", "calculate", "clock"}) {
		t.Errorf("clerk tools = %v", got)
	}
	if !cfg.Tools["refund"].Approval || cfg.Tools["lookup_order"].Approval {
		t.Errorf("refund needs approval and lookup_order none: %+v", cfg.Tools)
	}
	var script struct {
		Replies []struct {
			Text string `json:"text"`
		} `json:"replies"`
	}
	reviewer := cfg.Agents[2]
	if err := json.Unmarshal(reviewer.Offline, &script); err != nil {
		t.Fatalf("reviewer offline %s: %v", reviewer.Offline, err)
	}
	if n := len(script.Replies); n != 2 || script.Replies[n-1].Text != "APPROVED" {
		t.Errorf("reviewer offline replies = %+v, want 2 ending in APPROVED", script.Replies)
	}
	for _, d := range cfg.Agents[:2] {
		if len(d.Offline) != 0 {
			t.Errorf("agent %s: offline = %s, want none", d.ID, d.Offline)
		}
	}
}

func TestParseExampleConfigFromEnvironment(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
	t.Setenv("OPENAI_MODEL", "llama3.2")
	cfg, err := ParseConfig(ExampleConfig)
	if err != nil {
		t.Fatalf("ParseConfig(ExampleConfig): %v", err)
	}
	if got := cfg.Endpoints[DefaultEndpoint].BaseURL; got != "http://localhost:11434/v1" {
		t.Errorf("default baseURL = %q, want the environment's", got)
	}
	for _, d := range cfg.Agents {
		if d.Model != "llama3.2" {
			t.Errorf("agent %s model = %q, want llama3.2", d.ID, d.Model)
		}
	}
}

func TestParseConfigDefaults(t *testing.T) {
	clearOpenAIEnv(t)
	tests := []struct {
		name string
		in   string
	}{
		{"yaml", "agents:\n  - id: solo\n    model: m\n"},
		{"json", `{"agents":[{"id":"solo","model":"m"}]}`},
		{"other endpoints only", "endpoints:\n  local:\n    baseURL: http://localhost:8000/v1\nagents:\n  - id: solo\n    model: m\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			def, ok := cfg.Endpoints[DefaultEndpoint]
			if !ok {
				t.Fatalf("no %q endpoint added: %v", DefaultEndpoint, cfg.Endpoints)
			}
			if want := (Endpoint{BaseURL: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_API_KEY"}); def != want {
				t.Errorf("default endpoint = %+v, want %+v", def, want)
			}
			want := Definition{ID: "solo", Name: "solo", Kind: wire.KindChatCompletion, Model: "m", Endpoint: DefaultEndpoint}
			if len(cfg.Agents) != 1 || cfg.Agents[0].ID != want.ID || cfg.Agents[0].Name != want.Name ||
				cfg.Agents[0].Kind != want.Kind || cfg.Agents[0].Endpoint != want.Endpoint || cfg.Agents[0].Model != want.Model {
				t.Errorf("agents = %+v, want [%+v]", cfg.Agents, want)
			}
		})
	}
}

func TestParseConfigServiceThreadKinds(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"endpoints": {"e": {"baseURL": "http://h/v1"}}, "agents": [
		{"id": "r", "kind": "responses", "model": "m", "endpoint": "e", "instructions": "Be brief."},
		{"id": "a", "kind": "assistant", "model": "m", "endpoint": "e", "assistantId": "asst_42"},
		{"id": "b", "kind": "assistant", "model": "m", "endpoint": "e"}]}`))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	got := cfg.Agents
	if got[0].Kind != wire.KindResponses || got[1].Kind != wire.KindAssistant || got[2].Kind != wire.KindAssistant {
		t.Errorf("kinds %q, %q, %q", got[0].Kind, got[1].Kind, got[2].Kind)
	}
	if got[1].AssistantID != "asst_42" || got[2].AssistantID != "" {
		t.Errorf("assistantIds %q, %q; want asst_42 and none", got[1].AssistantID, got[2].AssistantID)
	}
	if got[0].Instructions != "Be brief." {
		t.Errorf("instructions %q", got[0].Instructions)
	}
}

// A config whose agents all use their own endpoint gets no OpenAI endpoint, so a
// worker for a local model (Ollama, vLLM) does not ask for OPENAI_API_KEY.
func TestParseConfigAddsNoDefaultEndpointNoAgentUses(t *testing.T) {
	cfg, err := ParseConfig([]byte("endpoints:\n  local: {baseURL: http://localhost:11434/v1}\nagents:\n  - {id: solo, model: m, endpoint: local}\n"))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if _, ok := cfg.Endpoints[DefaultEndpoint]; ok || len(cfg.Endpoints) != 1 {
		t.Errorf("endpoints = %v, want only %q", cfg.Endpoints, "local")
	}
}

func TestParseConfigExpandsEnvironment(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string // "" sets the variable empty, which counts as unset
		baseURL   string
		model     string
		wantURL   string
		wantModel string
	}{
		{"plain values", nil, "http://h/v1", "m", "http://h/v1", "m"},
		{"${VAR} set", map[string]string{"AC_URL": "http://set/v1", "AC_MODEL": "set-model"},
			"${AC_URL}", "${AC_MODEL}", "http://set/v1", "set-model"},
		{"$VAR set", map[string]string{"AC_MODEL": "bare"}, "http://h/v1", "$AC_MODEL", "http://h/v1", "bare"},
		{"${VAR:-fallback} set", map[string]string{"AC_URL": "http://set/v1", "AC_MODEL": "set-model"},
			"${AC_URL:-http://fallback/v1}", "${AC_MODEL:-fb}", "http://set/v1", "set-model"},
		{"${VAR:-fallback} unset", map[string]string{"AC_URL": "", "AC_MODEL": ""},
			"${AC_URL:-http://fallback/v1}", "${AC_MODEL:-fb-model}", "http://fallback/v1", "fb-model"},
		{"inside a longer string", map[string]string{"AC_HOST": "gpu-1", "AC_SIZE": ""},
			"http://${AC_HOST}:8000/v1", "llama-${AC_SIZE:-8b}", "http://gpu-1:8000/v1", "llama-8b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			in := "endpoints:\n  e:\n    baseURL: \"" + tt.baseURL + "\"\nagents:\n  - id: a\n    endpoint: e\n    model: \"" + tt.model + "\"\n"
			cfg, err := ParseConfig([]byte(in))
			if err != nil {
				t.Fatalf("ParseConfig:\n%s\n%v", in, err)
			}
			if got := cfg.Endpoints["e"].BaseURL; got != tt.wantURL {
				t.Errorf("baseURL = %q, want %q", got, tt.wantURL)
			}
			if got := cfg.Agents[0].Model; got != tt.wantModel {
				t.Errorf("model = %q, want %q", got, tt.wantModel)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Setenv("AC_UNSET", "")
	agent := func(fields string) string { return "agents:\n  - id: good\n    model: m\n  - " + fields + "\n" }
	tests := []struct {
		name    string
		in      string
		mention []string // substrings the error must contain
	}{
		{"unknown top-level field", "agent:\n  - id: a\n    model: m\n", []string{"agent"}},
		{"unknown agent field", agent("{id: a, model: m, modle: x}"), []string{"modle"}},
		{"unknown endpoint field", "endpoints:\n  e: {baseURL: http://h, apiKey: sk-123}\nagents: [{id: a, model: m}]\n", []string{"apiKey"}},
		{"unknown call field", agent("{id: a, model: m, call: {retries: 3}}"), []string{"retries"}},
		{"duplicate yaml key", agent("{id: a, model: m, id: b}"), []string{"id"}},
		{"no agents", "endpoints: {}\n", []string{"no agents"}},
		{"empty agents", "agents: []\n", []string{"no agents"}},
		{"empty document", "", []string{"no agents"}},
		{"duplicate ids", agent("{id: good, model: m2}"), []string{`"good"`, "twice"}},
		{"id with capitals", agent("{id: Writer, model: m}"), []string{"agents[1]", `"Writer"`, "id must be"}},
		{"id starting with dash", agent("{id: -x, model: m}"), []string{"agents[1]", `"-x"`}},
		{"id with a space", agent("{id: 'a b', model: m}"), []string{"agents[1]", `"a b"`}},
		{"empty id", agent("{model: m}"), []string{"agents[1]", `""`}},
		{"id too long", agent("{id: " + strings.Repeat("a", 65) + ", model: m}"), []string{"agents[1]", strings.Repeat("a", 65)}},
		{"unknown kind", agent("{id: asst, kind: assistants, model: m}"),
			[]string{"agents[1]", `"asst"`, `"assistants"`, "known: chat_completion, responses, assistant"}},
		{"unknown endpoint", agent("{id: local, model: m, endpoint: ollama}"), []string{`"local"`, `"ollama"`}},
		{"assistantId on another kind", agent("{id: cc, model: m, assistantId: asst_1}"), []string{`"cc"`, "assistantId", "chat_completion"}},
		{"assistantId on responses", agent("{id: r, kind: responses, model: m, assistantId: asst_1}"), []string{`"r"`, "assistantId", `"responses"`}},
		{"reducer on responses", agent("{id: r, kind: responses, model: m, reducer: {type: truncate, maxMessages: 4}}"), []string{`"r"`, "reducer", `"responses"`}},
		{"reducer on assistant", agent("{id: a, kind: assistant, model: m, reducer: {type: truncate, maxMessages: 4}}"), []string{`"a"`, "reducer", `"assistant"`}},
		{"empty model", agent("{id: nomodel}"), []string{`"nomodel"`, "model"}},
		{"model expands to empty", agent("{id: envmodel, model: '${AC_UNSET}'}"), []string{`"envmodel"`, "model"}},
		{"negative maxAttempts", agent("{id: neg, model: m, call: {maxAttempts: -1}}"), []string{`"neg"`, "maxAttempts"}},
		{"negative timeout", agent("{id: neg, model: m, call: {timeout: -5s}}"), []string{`"neg"`, "call.timeout"}},
		{"negative heartbeat seconds", agent("{id: neg, model: m, call: {heartbeatTimeout: -1}}"), []string{`"neg"`, "heartbeatTimeout"}},
		{"initialInterval over default maxInterval", agent("{id: slow, model: m, call: {initialInterval: 1m}}"),
			[]string{`"slow"`, "maxInterval", "initialInterval"}},
		{"maxInterval under initialInterval", agent("{id: slow, model: m, call: {initialInterval: 10s, maxInterval: 5s}}"),
			[]string{`"slow"`, "maxInterval"}},
		{"garbage duration", agent("{id: a, model: m, call: {timeout: soon}}"), []string{"soon"}},
		{"out of range duration", agent("{id: a, model: m, call: {timeout: 1e300}}"), []string{"range"}},
		{"endpoint without baseURL", "endpoints:\n  local: {apiKeyEnv: K}\nagents: [{id: a, model: m, endpoint: local}]\n", []string{`"local"`, "baseURL"}},
		{"endpoint baseURL expands to empty", "endpoints:\n  local: {baseURL: '${AC_UNSET}'}\nagents: [{id: a, model: m}]\n", []string{`"local"`, "baseURL"}},
		{"contextTokens under the least", agent("{id: tiny, model: m, contextTokens: 999}"), []string{`"tiny"`, "contextTokens 999", "1000"}},
		{"negative contextTokens", agent("{id: neg, model: m, contextTokens: -1}"), []string{`"neg"`, "contextTokens"}},
		{"not yaml", "agents: [\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseConfig(%q) = %+v, want an error", tt.in, cfg)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %q does not wrap ErrInvalidConfig", err)
			}
			for _, s := range tt.mention {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestParseConfigCallSettings(t *testing.T) {
	in := "agents:\n  - id: a\n    model: m\n    call:\n      timeout: 2m\n      heartbeatTimeout: 15\n" +
		"      maxAttempts: 3\n      initialInterval: 0.5\n      maxInterval: 1m30s\n"
	cfg, err := ParseConfig([]byte(in))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	want := wire.CallSettings{
		Timeout: wire.Duration(2 * time.Minute), HeartbeatTimeout: wire.Duration(15 * time.Second), MaxAttempts: 3,
		InitialInterval: wire.Duration(500 * time.Millisecond), MaxInterval: wire.Duration(90 * time.Second),
	}
	if got := cfg.Agents[0].Call; got != want {
		t.Errorf("call = %+v, want %+v", got, want)
	}
}

func TestCallSettingsWithDefaults(t *testing.T) {
	defaults := wire.CallSettings{
		Timeout: wire.Duration(5 * time.Minute), HeartbeatTimeout: wire.Duration(15 * time.Second), MaxAttempts: 5,
		InitialInterval: wire.Duration(time.Second), MaxInterval: wire.Duration(30 * time.Second),
	}
	set := wire.CallSettings{
		Timeout: wire.Duration(time.Minute), HeartbeatTimeout: wire.Duration(10 * time.Second), MaxAttempts: 2,
		InitialInterval: wire.Duration(2 * time.Second), MaxInterval: wire.Duration(time.Minute),
	}
	tests := []struct {
		name string
		in   wire.CallSettings
		want wire.CallSettings
	}{
		{"zero takes every default", wire.CallSettings{}, defaults},
		{"set values kept", set, set},
		{"some set", wire.CallSettings{Timeout: wire.Duration(time.Minute), MaxAttempts: 1},
			wire.CallSettings{Timeout: wire.Duration(time.Minute), HeartbeatTimeout: defaults.HeartbeatTimeout, MaxAttempts: 1,
				InitialInterval: defaults.InitialInterval, MaxInterval: defaults.MaxInterval}},
		{"negative maxAttempts takes the default", wire.CallSettings{MaxAttempts: -3}, defaults},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.WithDefaults(); got != tt.want {
				t.Errorf("WithDefaults() = %+v, want %+v", got, tt.want)
			}
			if again := tt.want.WithDefaults(); again != tt.want {
				t.Errorf("WithDefaults is not idempotent: %+v", again)
			}
		})
	}
}

func TestEndpointStreaming(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		stream *bool
		want   bool
	}{{nil, true}, {&yes, true}, {&no, false}}
	for _, tt := range tests {
		if got := (Endpoint{Stream: tt.stream}).Streaming(); got != tt.want {
			t.Errorf("Streaming() with stream %v = %v, want %v", tt.stream, got, tt.want)
		}
	}
}

// A config file that names an unknown kind does not load: the error names the file,
// the agent, the kind and the kinds there are, so no agent of it takes another kind's
// path.
func TestLoadConfigRefusesAnUnknownKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(path, []byte("agents:\n  - {id: helper, kind: chat_completions, model: m}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path)
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("LoadConfig: %v, want ErrInvalidConfig", err)
	}
	for _, want := range []string{path, `"helper"`, `unknown agent kind "chat_completions"`, "known: chat_completion, responses, assistant"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
