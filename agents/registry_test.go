package agents

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// chatHistoryKey is chat.ChannelKey("chat_history", "reducer=none"), from
// printf 'chat_history:reducer=none' | openssl dgst -sha256 -binary | base64
const chatHistoryKey = "VPhvGtW9akoov6Uj70Sea9zWv9a7V4qLKaV/VCpB15I="

func exampleRegistry(t *testing.T) *Registry {
	t.Helper()
	clearOpenAIEnv(t)
	cfg, err := ParseConfig(ExampleConfig)
	if err != nil {
		t.Fatalf("ParseConfig(ExampleConfig): %v", err)
	}
	return NewRegistry(cfg)
}

func ids(ps []wire.Participant) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func TestRegistryResolve(t *testing.T) {
	r := exampleRegistry(t)
	tests := [][]string{
		{"helper"},
		{"writer", "reviewer"},
		{"reviewer", "writer"},
		{"reviewer", "helper", "writer"},
	}
	for _, in := range tests {
		t.Run(strings.Join(in, ","), func(t *testing.T) {
			ps, err := r.Resolve(in)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", in, err)
			}
			if got := ids(ps); !reflect.DeepEqual(got, in) {
				t.Errorf("Resolve(%q) ids = %q, want the order asked", in, got)
			}
		})
	}
}

func TestRegistryResolveUnknown(t *testing.T) {
	r := exampleRegistry(t)
	known := []string{"clerk", "editor", "helper", "moderator", "reviewer", "writer"}
	tests := []struct {
		in      []string
		unknown []string
	}{
		{[]string{"nobody"}, []string{"nobody"}},
		{[]string{"zed", "writer", "alpha"}, []string{"zed", "alpha"}},
		{[]string{"helper", "Writer", "reviewer", ""}, []string{"Writer", ""}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, ","), func(t *testing.T) {
			ps, err := r.Resolve(tt.in)
			if ps != nil {
				t.Errorf("Resolve returned participants %v with an error", ids(ps))
			}
			var ue *UnknownAgentsError
			if !errors.As(err, &ue) {
				t.Fatalf("Resolve(%q) error = %v, want *UnknownAgentsError", tt.in, err)
			}
			if !reflect.DeepEqual(ue.Unknown, tt.unknown) || !reflect.DeepEqual(ue.Known, known) {
				t.Errorf("UnknownAgentsError = %+v, want unknown %q known %q", ue, tt.unknown, known)
			}
			for _, id := range append(append([]string(nil), tt.unknown...), known...) {
				if !strings.Contains(err.Error(), `"`+id+`"`) {
					t.Errorf("error %q does not name %q", err, id)
				}
			}
		})
	}
}

func TestRegistryResolveErrors(t *testing.T) {
	r := exampleRegistry(t)
	tests := []struct {
		name    string
		in      []string
		mention string
	}{
		{"nil", nil, "at least one"},
		{"empty", []string{}, "at least one"},
		{"repeated", []string{"writer", "reviewer", "writer"}, `"writer"`},
		{"repeated unknown", []string{"x", "x"}, `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := r.Resolve(tt.in)
			if err == nil {
				t.Fatalf("Resolve(%q) = %v, want an error", tt.in, ids(ps))
			}
			var ue *UnknownAgentsError
			if errors.As(err, &ue) {
				t.Errorf("Resolve(%q) = %v, an UnknownAgentsError", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
}

func TestRegistryLookups(t *testing.T) {
	r := exampleRegistry(t)
	if got, want := r.IDs(), []string{"clerk", "editor", "helper", "moderator", "reviewer", "writer"}; !reflect.DeepEqual(got, want) {
		t.Errorf("IDs() = %q, want %q", got, want)
	}
	d, ok := r.Get("writer")
	if !ok || d.Name != "Writer" {
		t.Errorf("Get(writer) = %+v, %v", d, ok)
	}
	if _, ok := r.Get("nobody"); ok {
		t.Error("Get(nobody) found an agent")
	}
	if got := r.Endpoint(d).BaseURL; got != "https://api.openai.com/v1" {
		t.Errorf("Endpoint(writer).BaseURL = %q", got)
	}
}

func TestParticipant(t *testing.T) {
	r := exampleRegistry(t)
	ps, err := r.Resolve([]string{"writer", "reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	wantCall := wire.CallSettings{}.WithDefaults()
	for _, p := range ps {
		if p.Kind != wire.KindChatCompletion || p.ChannelType != chat.ChannelChatHistory {
			t.Errorf("%s: kind %q channel type %q, want chat_completion, chat_history", p.ID, p.Kind, p.ChannelType)
		}
		if p.ChannelKey != chatHistoryKey {
			t.Errorf("%s: channel key %s, want %s", p.ID, p.ChannelKey, chatHistoryKey)
		}
		if p.Call != wantCall {
			t.Errorf("%s: call %+v, want defaults %+v", p.ID, p.Call, wantCall)
		}
	}
	if ps[0].Name != "Writer" || ps[1].Name != "Reviewer" {
		t.Errorf("names = %q, %q", ps[0].Name, ps[1].Name)
	}

	b, err := json.Marshal(ps[0])
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	if string(fields["id"]) != `"writer"` || string(fields["name"]) != `"Writer"` || string(fields["type"]) != `"chat_completion"` {
		t.Errorf("participant JSON %s: want id, name and type as in chat-state-v1.md", b)
	}
}

func TestParticipantKeepsCallSettings(t *testing.T) {
	d := Definition{ID: "a", Name: "A", Kind: wire.KindChatCompletion, Call: wire.CallSettings{Timeout: wire.Duration(time.Minute), MaxAttempts: 2}}
	p, err := d.Participant(Endpoint{BaseURL: "http://h/v1"})
	if err != nil {
		t.Fatal(err)
	}
	want := wire.CallSettings{Timeout: wire.Duration(time.Minute), MaxAttempts: 2}.WithDefaults()
	if p.Call != want {
		t.Errorf("call = %+v, want %+v", p.Call, want)
	}
	_, err = (Definition{ID: "b", Kind: "assistants"}).Participant(Endpoint{})
	if err == nil || !strings.Contains(err.Error(), `agent "b": unknown agent kind "assistants" (known: chat_completion, responses, assistant)`) {
		t.Errorf("Participant of an unknown kind: %v, want an error naming the agent, the kind and the known kinds", err)
	}
}

func TestKindChannel(t *testing.T) {
	ch, err := wire.KindChatCompletion.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if ch != (wire.Channel{Type: chat.ChannelChatHistory, Reducer: "none"}) {
		t.Errorf("chat_completion channel = %+v", ch)
	}
	for k, want := range map[wire.Kind]wire.Channel{
		wire.KindResponses: {Type: "responses_thread", ServiceThread: true},
		wire.KindAssistant: {Type: "assistant_thread", ServiceThread: true},
	} {
		ch, err := k.Channel()
		if err != nil || ch != want {
			t.Errorf("%s channel = %+v, %v; want %+v", k, ch, err, want)
		}
		if !k.ServiceThread() {
			t.Errorf("%s.ServiceThread() = false", k)
		}
	}
	if wire.KindChatCompletion.ServiceThread() || wire.Kind("nope").ServiceThread() {
		t.Error("chat_completion or an unknown kind reports a service thread")
	}
	for _, k := range []wire.Kind{"", "assistants", "Chat_Completion"} {
		_, err := k.Channel()
		if err == nil {
			t.Errorf("Kind(%q).Channel(): want an error", k)
			continue
		}
		for _, known := range wire.Kinds {
			if !strings.Contains(err.Error(), string(known)) {
				t.Errorf("Kind(%q).Channel() error = %v, want one listing %q", k, err, known)
			}
		}
	}
}

func TestServiceThreadParticipants(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
endpoints:
  a: {baseURL: "https://a.example/v1"}
  b: {baseURL: "https://b.example/v1"}
agents:
  - {id: r1, kind: responses, model: m, endpoint: a}
  - {id: r2, kind: responses, model: m, endpoint: a}
  - {id: r3, kind: responses, model: m, endpoint: b}
  - {id: as, kind: assistant, model: m, endpoint: a, assistantId: asst_123}
`))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := NewRegistry(cfg).Resolve([]string{"r1", "r2", "r3", "as"})
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].ChannelType != wire.ChannelResponsesThread || ps[3].ChannelType != wire.ChannelAssistantThread {
		t.Errorf("channel types %q, %q", ps[0].ChannelType, ps[3].ChannelType)
	}
	if want := chat.ChannelKey("responses_thread", "endpoint=https://a.example/v1", "agent=r1"); ps[0].ChannelKey != want {
		t.Errorf("r1 key %s, want %s", ps[0].ChannelKey, want)
	}
	if ps[0].ChannelKey == ps[1].ChannelKey {
		t.Error("two responses agents on one endpoint: want a thread each, never one shared")
	}
	if ps[0].ChannelKey == ps[2].ChannelKey {
		t.Error("responses agents on two endpoints share a channel key")
	}
	if ps[0].ChannelKey == ps[3].ChannelKey {
		t.Error("responses and assistant agents share a channel key")
	}
}

func TestChannelStates(t *testing.T) {
	for _, in := range []string{"", "null", "{}", " {} "} {
		var s wire.ResponsesThreadState
		if err := wire.DecodeChannelState(json.RawMessage(in), &s); err != nil || s != (wire.ResponsesThreadState{}) {
			t.Errorf("DecodeChannelState(%q) = %+v, %v; want a new channel", in, s, err)
		}
		if w, err := wire.SyncedThrough(json.RawMessage(in)); err != nil || w != "" {
			t.Errorf("SyncedThrough(%q) = %q, %v", in, w, err)
		}
	}
	var r wire.ResponsesThreadState
	if err := wire.DecodeChannelState(json.RawMessage(`{"previousResponseId":"resp_1","syncedThrough":"m2/1","extra":1}`), &r); err != nil ||
		r != (wire.ResponsesThreadState{PreviousResponseID: "resp_1", SyncedThrough: "m2/1"}) {
		t.Errorf("responses state = %+v, %v", r, err)
	}
	var a wire.AssistantThreadState
	if err := wire.DecodeChannelState(json.RawMessage(`{"threadId":"thread_1","syncedThrough":"m3"}`), &a); err != nil ||
		a != (wire.AssistantThreadState{ThreadID: "thread_1", SyncedThrough: "m3"}) {
		t.Errorf("assistant state = %+v, %v", a, err)
	}
	if w, err := wire.SyncedThrough(json.RawMessage(`{"threadId":"thread_1","syncedThrough":"m3"}`)); err != nil || w != "m3" {
		t.Errorf("SyncedThrough = %q, %v", w, err)
	}
	if err := wire.DecodeChannelState(json.RawMessage(`[1]`), &a); err == nil || !strings.Contains(err.Error(), "[1]") {
		t.Errorf("malformed state: error %v, want one quoting it", err)
	}
	b, _ := json.Marshal(wire.ResponsesThreadState{PreviousResponseID: "resp_1", SyncedThrough: "m1/1"})
	if string(b) != `{"previousResponseId":"resp_1","syncedThrough":"m1/1"}` {
		t.Errorf("responses state JSON %s", b)
	}
	b, _ = json.Marshal(wire.AssistantThreadState{ThreadID: "thread_1", SyncedThrough: "m1/1"})
	if string(b) != `{"threadId":"thread_1","syncedThrough":"m1/1"}` {
		t.Errorf("assistant state JSON %s", b)
	}
}

func TestChannelKey(t *testing.T) {
	a, b := Endpoint{BaseURL: "https://a/v1"}, Endpoint{BaseURL: "https://b/v1"}
	local := wire.Channel{Type: chat.ChannelChatHistory, Reducer: "none"}
	thread := wire.Channel{Type: wire.ChannelResponsesThread, ServiceThread: true, Agent: "r1"}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"chat history, pinned", local.Key(a.BaseURL), chatHistoryKey},
		{"chat history ignores the endpoint", local.Key(b.BaseURL), chatHistoryKey},
		{"reducer is part of the key", wire.Channel{Type: chat.ChannelChatHistory, Reducer: "summary"}.Key(a.BaseURL),
			chat.ChannelKey("chat_history", "reducer=summary")},
		{"service thread names the endpoint and agent", thread.Key(a.BaseURL),
			chat.ChannelKey("responses_thread", "endpoint=https://a/v1", "agent=r1")},
		{"service thread has no reducer part", wire.Channel{Type: wire.ChannelResponsesThread, Reducer: "none", ServiceThread: true, Agent: "r1"}.Key(a.BaseURL),
			chat.ChannelKey("responses_thread", "endpoint=https://a/v1", "agent=r1")},
		{"assistant thread names the endpoint and agent", wire.Channel{Type: wire.ChannelAssistantThread, ServiceThread: true, Agent: "as"}.Key(b.BaseURL),
			chat.ChannelKey("assistant_thread", "endpoint=https://b/v1", "agent=as")},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: key %s, want %s", tt.name, tt.got, tt.want)
		}
	}
	if thread.Key(a.BaseURL) == thread.Key(b.BaseURL) {
		t.Error("service-thread keys of two endpoints are equal")
	}
}
