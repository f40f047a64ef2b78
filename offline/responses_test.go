package offline_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
)

// msgItem is a Responses input message item.
func msgItem(role, text string) openai.ResponseInputMessage {
	return openai.ResponseInputMessage{Type: "message", Role: role, Content: text}
}

// respond creates a response and requires it to succeed.
func respond(t *testing.T, c *openai.Client, req openai.CreateResponseRequest) openai.CreateResponseResponse {
	t.Helper()
	resp, err := c.CreateResponse(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, openai.ResponseStatusCompleted, resp.Status)
	return resp
}

// outputItems decodes a response's output items.
func outputItems(t *testing.T, resp openai.CreateResponseResponse) []openai.ResponseOutputItem {
	t.Helper()
	var items []openai.ResponseOutputItem
	for _, raw := range resp.Output {
		var it openai.ResponseOutputItem
		b, err := json.Marshal(raw)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &it))
		items = append(items, it)
	}
	return items
}

func TestResponsesChainCarriesTheWholeConversation(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "r")

	first := respond(t, c, openai.CreateResponseRequest{Model: "m", Instructions: "Be brief.",
		Input: []any{msgItem("user", "Hello, how are you?")}})
	assert.Equal(t, `[offline] r received 2 messages. First user message: "Hello, how are you?". Last user message: "Hello, how are you?".`,
		first.GetOutputText())
	assert.True(t, strings.HasPrefix(first.ID, "resp_"), first.ID)
	assert.Equal(t, "response", first.Object)
	assert.Equal(t, "m", first.Model)
	assert.True(t, first.Store)

	second := respond(t, c, openai.CreateResponseRequest{Model: "m", Instructions: "Be brief.", PreviousResponseID: first.ID,
		Input: []any{msgItem("user", "My name is Alice")}})
	// system + the first user message + the first reply + this one
	assert.Contains(t, second.GetOutputText(), "r received 4 messages.")
	assert.Equal(t, first.ID, second.PreviousResponseID)

	// Input as a plain string is one user message.
	third := respond(t, c, openai.CreateResponseRequest{Model: "m", Instructions: "Be brief.", PreviousResponseID: second.ID,
		Input: "What's my name?"})
	assert.Equal(t, `[offline] r received 6 messages. First user message: "Hello, how are you?". `+
		`Last user message: "What's my name?". Your name is Alice: you said "My name is Alice".`, third.GetOutputText())
	assert.Equal(t, 3, s.Requests("r"))

	// Instructions are not carried across previous_response_id: without them, no system message.
	bare := respond(t, c, openai.CreateResponseRequest{Model: "m", PreviousResponseID: third.ID, Input: []any{}})
	assert.Contains(t, bare.GetOutputText(), "r received 6 messages.")

	got, err := c.GetResponse(context.Background(), third.ID)
	require.NoError(t, err)
	assert.Equal(t, third.GetOutputText(), got.GetOutputText())
	assert.Equal(t, third.ID, got.ID)

	items := outputItems(t, third)
	require.Len(t, items, 1)
	assert.Equal(t, "message", items[0].Type)
	assert.Equal(t, "assistant", items[0].Role)
	assert.Equal(t, "output_text", items[0].Content[0].Type)
	require.NotNil(t, third.Usage)
	assert.Equal(t, len(strings.Fields(third.GetOutputText())), third.Usage.OutputTokens)
}

// A message sent twice is counted twice: this is what lets tests prove a client sends
// every message exactly once.
func TestResponsesCountAMessageSentTwiceTwice(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "r")
	first := respond(t, c, openai.CreateResponseRequest{Model: "m", Input: []any{msgItem("user", "Hi")}})
	again := respond(t, c, openai.CreateResponseRequest{Model: "m", PreviousResponseID: first.ID,
		Input: []any{msgItem("user", "Hi")}})
	assert.Contains(t, again.GetOutputText(), "received 3 messages.")
}

func TestResponsesUnknownPreviousResponseIsNotFound(t *testing.T) {
	s := startServer(t, offline.Options{})
	_, err := newClient(s, "r").CreateResponse(context.Background(), openai.CreateResponseRequest{Model: "m",
		PreviousResponseID: "resp_nope", Input: []any{msgItem("user", "Hi")}})
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatusCode)
	assert.Equal(t, "Previous response with id 'resp_nope' not found.", apiErr.Message)
	assert.Equal(t, "previous_response_not_found", apiErr.Code)
	require.NotNil(t, apiErr.Param)
	assert.Equal(t, "previous_response_id", *apiErr.Param)

	_, err = newClient(s, "r").GetResponse(context.Background(), "resp_nope")
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatusCode)
}

func TestResponsesNotStoredAreNotKept(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "r")
	off := false
	resp := respond(t, c, openai.CreateResponseRequest{Model: "m", Store: &off, Input: "Hi"})
	assert.False(t, resp.Store)
	_, err := c.CreateResponse(context.Background(), openai.CreateResponseRequest{Model: "m", PreviousResponseID: resp.ID, Input: "Again"})
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatusCode)
}

func TestResponsesToolCallsRoundTrip(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"r": {
		{Text: "checking", ToolCalls: []offline.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Oslo"}`}, {Name: "time"}}},
	}}})
	c := newClient(s, "r")
	calls := respond(t, c, openai.CreateResponseRequest{Model: "m", Input: "Weather in Oslo?"})
	items := outputItems(t, calls)
	require.Len(t, items, 3)
	assert.Equal(t, "[offline] r: checking", calls.GetOutputText())
	assert.Equal(t, openai.ResponseOutputItem{ID: items[1].ID, Type: "function_call", Status: "completed",
		CallID: "c1", Name: "weather", Arguments: `{"city":"Oslo"}`}, items[1])
	assert.Equal(t, "function_call", items[2].Type)
	assert.Equal(t, "time", items[2].Name)
	second := items[2].CallID
	assert.True(t, strings.HasPrefix(second, "call_offline_"), second)

	// The next request must answer every call, and only calls that were made.
	_, err := c.CreateResponse(context.Background(), openai.CreateResponseRequest{Model: "m", PreviousResponseID: calls.ID,
		Input: []any{openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: "c1", Output: "sunny"}}})
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.HTTPStatusCode)
	assert.Equal(t, "No tool output found for function call "+second+".", apiErr.Message)

	_, err = c.CreateResponse(context.Background(), openai.CreateResponseRequest{Model: "m", PreviousResponseID: calls.ID,
		Input: []any{openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: "c9", Output: "?"}}})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "No tool call found for function call output with call_id c9.", apiErr.Message)

	done := respond(t, c, openai.CreateResponseRequest{Model: "m", PreviousResponseID: calls.ID, Input: []any{
		openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: "c1", Output: "sunny"},
		openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: second, Output: "noon"},
	}})
	// user, assistant (text and both calls), two tool results
	assert.Equal(t, `[offline] r received 4 messages. First user message: "Weather in Oslo?". `+
		`Last user message: "Weather in Oslo?". Tool results: c1=sunny; `+second+`=noon.`, done.GetOutputText())
}

// Function calls sent as input join the assistant message before them, so a message
// with calls counts once, as it does in a chat completion.
func TestResponsesInputFunctionCallsJoinTheirMessage(t *testing.T) {
	s := startServer(t, offline.Options{})
	resp := respond(t, newClient(s, "r"), openai.CreateResponseRequest{Model: "m", Input: []any{
		msgItem("developer", "Be brief."),
		msgItem("user", "Weather?"),
		msgItem("assistant", "Writer: let me look"),
		openai.ResponseOutputItem{Type: "function_call", CallID: "c1", Name: "weather", Arguments: "{}"},
		openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: "c1", Output: "rain"},
		openai.ResponseInputMessage{Role: "user", Content: []any{
			openai.ResponseInputText{Type: "input_text", Text: "And"},
			openai.ResponseInputImage{Type: "input_image", ImageURL: "https://example.com/a.png"},
			openai.ResponseInputText{Type: "input_text", Text: "tomorrow?"}}},
	}})
	assert.Equal(t, `[offline] r received 5 messages. First user message: "Weather?". `+
		`Last user message: "And tomorrow?". Tool results: c1=rain.`, resp.GetOutputText())
}

func TestResponsesScriptedRepliesAndErrors(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"r": {
		{Status: http.StatusTooManyRequests, Message: "slow down", RetryAfter: 3},
		{Status: http.StatusInternalServerError},
		{Text: "scripted"},
	}}})
	c := newClient(s, "r")
	req := openai.CreateResponseRequest{Model: "m", Input: "Hi"}
	_, err := c.CreateResponse(context.Background(), req)
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusTooManyRequests, apiErr.HTTPStatusCode)
	assert.Equal(t, "slow down", apiErr.Message)
	_, err = c.CreateResponse(context.Background(), req)
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusInternalServerError, apiErr.HTTPStatusCode)
	assert.Equal(t, "[offline] r: scripted", respond(t, c, req).GetOutputText())
	assert.True(t, strings.HasPrefix(respond(t, c, req).GetOutputText(), "[offline] r received 1 message."))
	assert.Equal(t, 4, s.Requests("r"))
}

func TestResponsesLastRequest(t *testing.T) {
	s := startServer(t, offline.Options{})
	_, ok := s.LastResponseRequest("r")
	assert.False(t, ok)
	on := true
	respond(t, newClient(s, "r"), openai.CreateResponseRequest{Model: "m", Instructions: "Be brief.", Store: &on,
		Input: []any{msgItem("user", "Hi")}})
	req, ok := s.LastResponseRequest("r")
	require.True(t, ok)
	assert.Equal(t, "Be brief.", req.Instructions)
	require.NotNil(t, req.Store)
	assert.True(t, *req.Store)
	assert.Equal(t, []any{map[string]any{"type": "message", "role": "user", "content": "Hi"}}, req.Input)
}

func TestResponsesMalformedRequests(t *testing.T) {
	s := startServer(t, offline.Options{})
	for _, tc := range []struct{ body, message string }{
		{`{"model":"m"}`, "Missing required parameter: 'input'."},
		{`{"model":"m","input":null}`, "Missing required parameter: 'input'."},
		{`{"model":"m","input":"hi","stream":true}`, "streamed Responses are not supported"},
		{`{"model":"m","input":[{"type":"reasoning"}]}`, `input item type "reasoning" is not supported`},
		{`{"model":"m","input":[{"role":"robot","content":"x"}]}`, "Invalid value: 'robot'. Supported values are: 'assistant', 'system', 'developer', and 'user'."},
		{`{"model":"m","input":[{"role":"user","content":7}]}`, "content must be a string or a list of parts"},
		{`{"model":"m","input":[{"type":"function_call","name":"f"}]}`, "Missing required parameter: 'input[0].call_id'."},
		{`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"get weather"}]}`, "Invalid 'input[0].name': string does not match pattern."},
		{`{"model":"m","input":[{"type":"function_call_output"}]}`, "Missing required parameter: 'input[0].call_id'."},
		{`{"model":"m","input":"hi","tools":[{"type":"function","name":""}]}`, "Invalid 'tools[0].name': empty string."},
		{`{"model":"m","input":7}`, "a string or a list of items"},
		{`{"model":`, "could not parse the JSON body"},
	} {
		resp, e := do(t, s, http.MethodPost, "/v1/responses", tc.body)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, tc.body)
		assert.Contains(t, e.Error.Message, tc.message, tc.body)
	}
	resp, e := do(t, s, http.MethodPost, "/v1/responses", `{"model":"m","input":"hi","stream":true}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "invalid_request_error", e.Error.Type)
	assert.Equal(t, "invalid_value", e.Error.Code)
	if assert.NotNil(t, e.Error.Param) {
		assert.Equal(t, "stream", *e.Error.Param)
	}
	resp, e = do(t, s, http.MethodGet, "/v1/responses/resp_nope", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "Response with id 'resp_nope' not found.", e.Error.Message)
	assert.Equal(t, "not_found", e.Error.Code)
	assert.Nil(t, e.Error.Param)
	resp, _ = do(t, s, http.MethodGet, "/v1/responses", "")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, _ = do(t, s, http.MethodDelete, "/v1/responses/resp_1", "")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, _ = do(t, s, http.MethodGet, "/v1/responses/resp_1/input_items", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}
