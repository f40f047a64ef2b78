package offline_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
)

func user(text string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text}
}

func calls(ids ...string) openai.ChatCompletionMessage {
	m := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: id, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "lookup", Arguments: "{}"}})
	}
	return m
}

func result(id string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: "42"}
}

// ruleCases are requests OpenAI refuses, each with the param and the start of the
// message it answers.
var ruleCases = []struct {
	name     string
	messages []openai.ChatCompletionMessage
	tools    []openai.Tool
	param    string
	message  string
}{
	{"a tool message with no call before it", []openai.ChatCompletionMessage{user("hi"), result("c1")},
		nil, "messages.[1].role", "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."},
	{"a tool message answering another call", []openai.ChatCompletionMessage{user("hi"), calls("c1"), result("c2")},
		nil, "messages.[2].role", "Invalid parameter: messages with role 'tool'"},
	{"a tool message after a user message", []openai.ChatCompletionMessage{user("hi"), calls("c1"), result("c1"), user("and?"), result("c1")},
		nil, "messages.[4].role", "Invalid parameter: messages with role 'tool'"},
	{"a call answered twice", []openai.ChatCompletionMessage{user("hi"), calls("c1"), result("c1"), result("c1")},
		nil, "messages.[3].role", "Invalid parameter: messages with role 'tool'"},
	{"a call left open before the next message", []openai.ChatCompletionMessage{user("hi"), calls("c1", "c2"), result("c2"), user("and?")},
		nil, "messages.[1].role", "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: c1"},
	{"a call left open at the end", []openai.ChatCompletionMessage{user("hi"), calls("c1")},
		nil, "messages.[1].role", "An assistant message with 'tool_calls' must be followed by tool messages"},
	{"an empty assistant message", []openai.ChatCompletionMessage{user("hi"), {Role: openai.ChatMessageRoleAssistant}, user("and?")},
		nil, "messages.[1].content", "Invalid value for 'content': expected a string, got null."},
	{"an unknown role", []openai.ChatCompletionMessage{{Role: "robot", Content: "beep"}},
		nil, "messages[0].role", "Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'."},
	{"a message name with a space", []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Name: "Ada Lovelace", Content: "hi"}},
		nil, "messages[0].name", "Invalid 'messages[0].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."},
	{"a message name over 64", []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Name: strings.Repeat("a", 65), Content: "hi"}},
		nil, "messages[0].name", "Invalid 'messages[0].name': string too long. Expected a string with maximum length 64, but got a string with length 65 instead."},
	{"a tool call's function name", []openai.ChatCompletionMessage{user("hi"), {Role: openai.ChatMessageRoleAssistant,
		ToolCalls: []openai.ToolCall{{ID: "c1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "look.up"}}}}, result("c1")},
		nil, "messages[1].tool_calls[0].function.name", "Invalid 'messages[1].tool_calls[0].function.name': string does not match pattern."},
	{"a tool's function name", []openai.ChatCompletionMessage{user("hi")},
		[]openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "get weather"}}},
		"tools[0].function.name", "Invalid 'tools[0].function.name': string does not match pattern."},
	{"a tool call id over 40", []openai.ChatCompletionMessage{user("hi"), calls(strings.Repeat("c", 41)), result(strings.Repeat("c", 41))},
		nil, "messages[1].tool_calls[0].id", "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 41 instead."},
	{"an image in a system message", []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, MultiContent: []openai.ChatMessagePart{
		{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "https://example.com/a.png"}}}}, user("hi")},
		nil, "messages.[0].content", "Image URLs are only allowed for messages with role 'user'"},
	{"messages over the context window", []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: "Be brief."},
		user(strings.Repeat("x", 4*offline.ContextWindowTokens))},
		nil, "messages", "This model's maximum context length is 1047576 tokens. However, your messages resulted in"},
}

// The context window holds at its limit and refuses one token over it, as OpenAI does
// (context_length_exceeded).
func TestContextWindowAtItsLimit(t *testing.T) {
	at := func(extra int) openai.ChatCompletionRequest {
		frame, _ := json.Marshal([]openai.ChatCompletionMessage{user("x")})
		msgs := []openai.ChatCompletionMessage{user(strings.Repeat("x", 4*offline.ContextWindowTokens-(len(frame)-1)+extra))}
		return openai.ChatCompletionRequest{Model: offline.ModelID, Messages: msgs}
	}
	require.Equal(t, offline.ContextWindowTokens, offline.ContextTokens(at(3).Messages))
	require.NoError(t, offline.Validate(at(3)))
	err := offline.Validate(at(4))
	var v *offline.Violation
	require.ErrorAs(t, err, &v)
	assert.Equal(t, "context_length_exceeded", v.Code)
	assert.Contains(t, v.Message, "resulted in 1047577 tokens")
}

// Each rule is refused over HTTP as OpenAI refuses it (400, invalid_request_error, the
// param, OpenAI's message), the model is never asked, and the refusal is a Violation;
// Validate finds the same breach without a server.
func TestRequestsOpenAIRefusesAreRefused(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "helper")
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			req := openai.ChatCompletionRequest{Model: offline.ModelID, Messages: tc.messages, Tools: tc.tools}
			err := offline.Validate(req)
			var v *offline.Violation
			require.True(t, errors.As(err, &v), "%v", err)
			assert.Equal(t, tc.param, v.Param)
			assert.Equal(t, http.StatusBadRequest, v.Status)
			assert.True(t, strings.HasPrefix(v.Message, tc.message), v.Message)

			before := len(s.Violations())
			_, err = c.CreateChatCompletion(context.Background(), req)
			var api *openai.APIError
			require.True(t, errors.As(err, &api), "%v", err)
			assert.Equal(t, http.StatusBadRequest, api.HTTPStatusCode)
			assert.Equal(t, "invalid_request_error", api.Type)
			require.NotNil(t, api.Param)
			assert.Equal(t, tc.param, *api.Param)
			assert.True(t, strings.HasPrefix(api.Message, tc.message), api.Message)
			got := s.Violations()
			require.Len(t, got, before+1)
			assert.Equal(t, "/v1/chat/completions", got[before].Path)
			assert.Equal(t, "helper", got[before].Agent)
			assert.Equal(t, tc.param, got[before].Param)
		})
	}
	_, ok := s.LastRequest("helper")
	assert.False(t, ok, "no refused request reaches the model")
}

// What OpenAI accepts passes: parallel calls answered in any order, results split over
// several tool messages, names within the pattern and of 64 bytes, call ids of 40 bytes,
// tool calls with null content.
func TestValidRequestsPass(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "helper")
	req := openai.ChatCompletionRequest{Model: offline.ModelID, Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "Be brief."},
		{Role: openai.ChatMessageRoleUser, Name: "Ada_Lovelace-1", Content: "hi"},
		calls("c1", "c2"), result("c2"), result("c1"),
		calls(strings.Repeat("c", 40)), result(strings.Repeat("c", 40)),
		{Role: openai.ChatMessageRoleAssistant, Name: "Clerk", Content: "Both done."},
		{Role: openai.ChatMessageRoleUser, Name: strings.Repeat("a", 64), Content: "thanks"},
	}, Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "lookup"}}}}
	require.NoError(t, offline.Validate(req))
	complete(t, c, req)
	assert.Empty(t, s.Violations())
}

// The Responses API's rules: an output without its call, a call without its output,
// function names, roles, and an unknown previous_response_id (404) are refused and
// recorded.
func TestResponsesRulesAreViolations(t *testing.T) {
	s := startServer(t, offline.Options{})
	for _, tc := range []struct {
		body, param string
		status      int
	}{
		{`{"model":"m","input":[{"type":"function_call_output","call_id":"c9","output":"x"}]}`, "input", http.StatusBadRequest},
		{`{"model":"m","input":[{"type":"function_call","call_id":"c1","name":"f"},{"role":"user","content":"x"}]}`, "input", http.StatusBadRequest},
		{`{"model":"m","input":[{"type":"function_call","call_id":"c1","name":"f g"}]}`, "input[0].name", http.StatusBadRequest},
		{`{"model":"m","input":[{"role":"tool","content":"x"}]}`, "input[0].role", http.StatusBadRequest},
		{`{"model":"m","input":"hi","previous_response_id":"resp_gone"}`, "previous_response_id", http.StatusNotFound},
	} {
		before := len(s.Violations())
		resp, e := do(t, s, http.MethodPost, "/v1/responses", tc.body)
		assert.Equal(t, tc.status, resp.StatusCode, tc.body)
		assert.Equal(t, "invalid_request_error", e.Error.Type, tc.body)
		if assert.NotNil(t, e.Error.Param, tc.body) {
			assert.Equal(t, tc.param, *e.Error.Param, tc.body)
		}
		got := s.Violations()
		if assert.Len(t, got, before+1, tc.body) {
			assert.Equal(t, tc.param, got[before].Param)
			assert.Equal(t, "/v1/responses", got[before].Path)
		}
	}
}

// A body that is not JSON is refused (400) and recorded as a violation on every
// endpoint that takes one, the Assistants endpoints too.
func TestMalformedBodiesAreViolationsOnEveryEndpoint(t *testing.T) {
	s := startServer(t, offline.Options{})
	_, th := newAssistant(t, newClient(s, "raw"), "be brief")
	for _, path := range []string{"/v1/chat/completions", "/v1/responses", "/v1/assistants", "/v1/threads",
		"/v1/threads/" + th.ID + "/messages", "/v1/threads/" + th.ID + "/runs"} {
		before := len(s.Violations())
		resp, e := do(t, s, http.MethodPost, path, `{"model":`)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, path)
		assert.Equal(t, "invalid_request_error", e.Error.Type, path)
		got := s.Violations()
		if assert.Len(t, got, before+1, path) {
			assert.Equal(t, path, got[before].Path)
		}
	}
}
