package activities_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// setupServiceAgents starts an offline model and activities with a responses agent
// ("resp") and an assistant agent ("asst"), both with instructions, plus extra agent
// definitions (YAML flow mappings) on the same endpoint.
func setupServiceAgents(t *testing.T, extra ...string) (*activities.Activities, *offline.Server) {
	t.Helper()
	srv, err := offline.Start(offline.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	yaml := fmt.Sprintf(`
endpoints:
  default: {baseURL: %q, apiKeyEnv: TEST_KEY}
agents:
  - {id: resp, name: Resp, kind: responses, model: test-model, instructions: Be brief.}
  - {id: asst, name: Asst, kind: assistant, model: test-model, instructions: Be brief.}
`, srv.URL())
	for _, e := range extra {
		yaml += "  - " + e + "\n"
	}
	cfg, err := agents.ParseConfig([]byte(yaml))
	require.NoError(t, err)
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(cfg),
		Getenv: func(string) string { return "sk-test" }})
	require.NoError(t, err)
	return acts, srv
}

// conversation is a chat for agent (resp or asst): its own reply, another agent's
// (Writer), and a last user message asking for the name.
func conversation(agent string) []chat.Message {
	return []chat.Message{
		chat.TextMessage("m1", chat.RoleUser, "Alice", "Hello, how are you?"),
		{MessageID: "m1/1", Role: chat.RoleAssistant, AuthorName: "Self", AgentID: agent, Contents: []chat.Content{chat.Text("Fine.")}},
		chat.TextMessage("m2", chat.RoleUser, "Alice", "My name is Alice"),
		{MessageID: "m2/1", Role: chat.RoleAssistant, AuthorName: "Writer", AgentID: "writer", Contents: []chat.Content{chat.Text("Hi Alice.")}},
		chat.TextMessage("m3", chat.RoleUser, "Alice", "What's my name?"),
	}
}

var recap = chat.TextMessage("m4", chat.RoleUser, "Alice", "What did we talk about?")

// The first reply sees the instructions (as a system message) and the five messages:
// 6. The second sees them, the first reply and the new message, each once: 8.
const (
	firstReply = `received 6 messages. First user message: "Hello, how are you?". ` +
		`Last user message: "What's my name?". Your name is Alice: you said "My name is Alice".`
	secondReply = `received 8 messages. First user message: "Hello, how are you?". Last user message: ` +
		`"What did we talk about?". We talked about: "Hello, how are you?", "My name is Alice", "What's my name?".`
)

// appError requires err to be a Temporal application error and returns it.
func appError(t *testing.T, err error) *temporal.ApplicationError {
	t.Helper()
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	return app
}

func TestResponsesSendEveryMessageOnce(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	res, err, _ := invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: "resp", TurnID: "m3", ReplyID: "m3/1",
		History: conversation("resp"), ChannelState: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.Equal(t, []chat.Content{chat.Text("[offline] resp " + firstReply)}, res.Contents)
	assert.Equal(t, "test-model", res.Model)
	assert.Positive(t, res.PromptTokens)
	var st wire.ResponsesThreadState
	require.NoError(t, json.Unmarshal(res.ChannelState, &st))
	assert.Regexp(t, `^resp_`, st.PreviousResponseID)
	assert.Equal(t, "m3/1", st.SyncedThrough)

	req, ok := srv.LastResponseRequest("resp")
	require.True(t, ok)
	assert.Equal(t, "Be brief.", req.Instructions)
	assert.Equal(t, "test-model", req.Model)
	require.NotNil(t, req.Store)
	assert.True(t, *req.Store)
	assert.Empty(t, req.PreviousResponseID)
	assert.Equal(t, []any{
		map[string]any{"type": "message", "role": "user", "content": "Hello, how are you?"},
		map[string]any{"type": "message", "role": "assistant", "content": "Fine."},
		map[string]any{"type": "message", "role": "user", "content": "My name is Alice"},
		map[string]any{"type": "message", "role": "assistant", "content": "Writer: Hi Alice."},
		map[string]any{"type": "message", "role": "user", "content": "What's my name?"},
	}, req.Input, "the agent's own reply as it is, another agent's with its author")

	// The next call gets the state and only the message after the watermark.
	res2, err, _ := invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: "resp", TurnID: "m4", ReplyID: "m4/1",
		History: []chat.Message{recap}, HistoryFrom: 6, ChannelState: res.ChannelState})
	require.NoError(t, err)
	assert.Equal(t, []chat.Content{chat.Text("[offline] resp " + secondReply)}, res2.Contents)
	req, _ = srv.LastResponseRequest("resp")
	assert.Equal(t, st.PreviousResponseID, req.PreviousResponseID)
	assert.Equal(t, "Be brief.", req.Instructions, "instructions go with every call")
	assert.Len(t, req.Input, 1)
	var st2 wire.ResponsesThreadState
	require.NoError(t, json.Unmarshal(res2.ChannelState, &st2))
	assert.Equal(t, "m4/1", st2.SyncedThrough)
	assert.NotEqual(t, st.PreviousResponseID, st2.PreviousResponseID)
	assert.Equal(t, 2, srv.Requests("resp"))
}

// A caller that sends messages the service already has (up to and including the
// watermark) still sends each once.
func TestResponsesSkipMessagesUpToTheWatermark(t *testing.T) {
	acts, _ := setupServiceAgents(t)
	history := conversation("resp")
	res, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "resp", ReplyID: "m3/1", History: history})
	require.NoError(t, err)
	history = append(history, chat.Message{MessageID: "m3/1", Role: chat.RoleAssistant, AgentID: "resp",
		Contents: res.Contents}, recap)
	res, err, _ = invoke(t, acts, wire.InvokeInput{AgentID: "resp", ReplyID: "m4/1", History: history, ChannelState: res.ChannelState})
	require.NoError(t, err)
	assert.Equal(t, "[offline] resp "+secondReply, res.Contents[0].Text)
}

// Fault 12: a previous_response_id the service no longer knows (404) is ServiceThreadLost,
// not retried as is; sent again as a new chain (wire.LostThreadState, with the whole
// history), the call answers and its state keeps the record of the lost chain.
func TestResponsesUnknownPreviousResponseIsAChainLost(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	_, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "resp", ReplyID: "m4/1", History: []chat.Message{recap},
		ChannelState: json.RawMessage(`{"previousResponseId":"resp_gone","syncedThrough":"m3/1"}`)})
	app := appError(t, err)
	assert.Equal(t, wire.ErrTypeThreadLost, app.Type())
	assert.True(t, app.NonRetryable())
	assert.Contains(t, err.Error(), `responses_thread: previous response "resp_gone": the service no longer knows this response`)
	assert.Contains(t, err.Error(), `Previous response with id 'resp_gone' not found.`)

	res, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "resp", ReplyID: "m4/1",
		History: append(conversation("resp"), recap), ChannelState: wire.LostThreadState(wire.ChannelResponsesThread,
			json.RawMessage(`{"previousResponseId":"resp_gone","syncedThrough":"m3/1"}`))})
	require.NoError(t, err)
	req, ok := srv.LastResponseRequest("resp")
	require.True(t, ok)
	assert.Empty(t, req.PreviousResponseID, "a new chain")
	assert.Len(t, req.Input, 6, "with the whole history")
	var st wire.ResponsesThreadState
	require.NoError(t, json.Unmarshal(res.ChannelState, &st))
	assert.Regexp(t, `^resp_`, st.PreviousResponseID)
	assert.Equal(t, "m4/1", st.SyncedThrough)
	assert.Equal(t, "resp_gone", st.LostResponseID, "the record of the lost chain stays")
}

func TestResponsesServerErrorIsRetryable(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	srv.SetScript("resp", []offline.Reply{{Status: 500, Message: "boom"}, {Status: 429, Message: "slow down", RetryAfter: 4}})
	_, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "resp", ReplyID: "m1/1", History: conversation("resp")[:1]})
	app := appError(t, err)
	assert.Equal(t, wire.ErrTypeModelUnavailable, app.Type())
	assert.False(t, app.NonRetryable())
	assert.Contains(t, err.Error(), "responses_thread: new chain: model endpoint answered 500 Internal Server Error: boom")
	_, err, _ = invoke(t, acts, wire.InvokeInput{AgentID: "resp", ReplyID: "m1/1", History: conversation("resp")[:1]})
	app = appError(t, err)
	assert.False(t, app.NonRetryable())
	assert.Equal(t, "4s", app.NextRetryDelay().String())
}

func TestResponsesToolCallsRoundTrip(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	srv.SetScript("resp", []offline.Reply{{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"q":"weather"}`}}}})
	history := conversation("resp")[:1]
	res, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "resp", ReplyID: "m1/1", History: history})
	require.NoError(t, err)
	assert.Equal(t, []chat.Content{{Type: chat.ContentFunctionCall, CallID: "c1", Name: "lookup", Arguments: `{"q":"weather"}`}},
		res.Contents)

	// The tool's result goes as a function_call_output item; the call itself is in the chain.
	result := chat.Message{MessageID: "m1/2", Role: chat.RoleTool, Contents: []chat.Content{
		{Type: chat.ContentFunctionResult, CallID: "c1", Result: "sunny"}}}
	res, err, _ = invoke(t, acts, wire.InvokeInput{AgentID: "resp", ReplyID: "m1/3", History: []chat.Message{result},
		ChannelState: res.ChannelState})
	require.NoError(t, err)
	// system, user, the call, its result
	assert.Equal(t, `[offline] resp received 4 messages. First user message: "Hello, how are you?". `+
		`Last user message: "Hello, how are you?". Tool results: c1=sunny.`, res.Contents[0].Text)
	req, _ := srv.LastResponseRequest("resp")
	assert.Equal(t, []any{map[string]any{"type": "function_call_output", "call_id": "c1", "output": "sunny"}}, req.Input)

	// A new channel sends the call and its result as items of their own.
	full := append(append(history, chat.Message{MessageID: "m1/1", Role: chat.RoleAssistant, AuthorName: "Writer", AgentID: "writer",
		Contents: []chat.Content{chat.Text("Let me look."), {Type: chat.ContentFunctionCall, CallID: "c1", Name: "lookup", Arguments: "{}"}}}),
		chat.Message{MessageID: "m1/2", Role: chat.RoleTool, Contents: []chat.Content{
			{Type: chat.ContentFunctionResult, CallID: "c1", Error: "no network"}}})
	res, err, _ = invoke(t, acts, wire.InvokeInput{AgentID: "resp", ReplyID: "m1/3", History: full})
	require.NoError(t, err)
	assert.Contains(t, res.Contents[0].Text, "received 4 messages.")
	assert.Contains(t, res.Contents[0].Text, "Tool results: c1=error: no network.")
	req, _ = srv.LastResponseRequest("resp")
	items, ok := req.Input.([]any)
	require.True(t, ok, "input %v", req.Input)
	require.Len(t, items, 4)
	assert.Equal(t, map[string]any{"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"}, items[2])
}

func TestServiceThreadInputIsChecked(t *testing.T) {
	acts, _ := setupServiceAgents(t)
	for _, agent := range []string{"resp", "asst"} {
		_, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: agent, ReplyID: "m1/1", History: conversation(agent)[:1],
			ChannelState: json.RawMessage(`[1]`)})
		app := appError(t, err)
		assert.Equal(t, wire.ErrTypeInvalidInput, app.Type(), agent)
		assert.True(t, app.NonRetryable())
		assert.Contains(t, err.Error(), "channel state [1]")

		_, err, _ = invoke(t, acts, wire.InvokeInput{AgentID: agent, History: conversation(agent)[:1]})
		app = appError(t, err)
		assert.Equal(t, wire.ErrTypeInvalidInput, app.Type(), agent)
		assert.Contains(t, err.Error(), "replyId is required")
	}
}

// Images go as the same URLs to Chat Completions and to the Responses API: the URI, or
// a data: URL of the inline data; text-only messages as plain text.
func TestImagesGoAsTheSameURLsToBothAPIs(t *testing.T) {
	m := chat.Message{MessageID: "m1", Role: chat.RoleUser, Contents: []chat.Content{chat.Text("Look:"),
		{Type: chat.ContentImage, URI: "https://x/y.png"}, {Type: chat.ContentImage, MediaType: "image/png", Data: "iVBO"}}}
	want := []string{"https://x/y.png", "data:image/png;base64,iVBO"}

	cc := activities.ChatMessages("", []chat.Message{m, chat.TextMessage("m2", chat.RoleUser, "", "plain")})
	require.Len(t, cc, 2)
	require.Len(t, cc[0].MultiContent, 3)
	assert.Equal(t, "Look:", cc[0].MultiContent[0].Text)
	assert.Equal(t, want, []string{cc[0].MultiContent[1].ImageURL.URL, cc[0].MultiContent[2].ImageURL.URL})
	assert.Nil(t, cc[1].MultiContent)
	assert.Equal(t, "plain", cc[1].Content)

	items := activities.ResponsesInput("a", []chat.Message{m, chat.TextMessage("m2", chat.RoleUser, "", "plain")})
	require.Len(t, items, 2)
	b, err := json.Marshal(items)
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"message","role":"user","content":[{"type":"input_text","text":"Look:"},`+
		`{"type":"input_image","image_url":"`+want[0]+`"},{"type":"input_image","image_url":"`+want[1]+`"}]},`+
		`{"type":"message","role":"user","content":"plain"}]`, string(b))
}

// A previous_response_id answered by a 404 whose body is not OpenAI's JSON (a proxy's
// page) is a chain lost too, as an Assistants thread answered so is.
func TestResponsesPlainNotFoundIsAChainLost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "404 page not found", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	cfg, err := agents.ParseConfig(fmt.Appendf(nil, `
endpoints:
  default: {baseURL: %q, apiKeyEnv: TEST_KEY}
agents:
  - {id: resp, name: Resp, kind: responses, model: test-model}
`, srv.URL+"/v1"))
	require.NoError(t, err)
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(cfg), Getenv: func(string) string { return "sk-test" }})
	require.NoError(t, err)
	_, err, _ = invoke(t, acts, wire.InvokeInput{AgentID: "resp", ReplyID: "m4/1", History: []chat.Message{recap},
		ChannelState: json.RawMessage(`{"previousResponseId":"resp_gone","syncedThrough":"m3/1"}`)})
	app := appError(t, err)
	assert.Equal(t, wire.ErrTypeThreadLost, app.Type())
	assert.True(t, app.NonRetryable())
	assert.Contains(t, err.Error(), `the service no longer knows this response`)
	assert.Contains(t, err.Error(), `404 page not found`)
}
