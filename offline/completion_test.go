package offline_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
)

// seed is the conversation of the demo: the last turn asks for a name told two turns before.
var seed = []string{"Hello, how are you?", "I am fine, thanks.", "My name is Alice", "Nice to meet you, Alice.", "What's my name?"}

func TestDefaultReplyQuotesTheConversation(t *testing.T) {
	s := startServer(t, offline.Options{})
	resp := complete(t, newClient(s, "planner"), chatRequest(seed...))

	choice := resp.Choices[0]
	assert.Equal(t, openai.ChatMessageRoleAssistant, choice.Message.Role)
	assert.Equal(t, openai.FinishReasonStop, choice.FinishReason)
	assert.Equal(t,
		`[offline] planner received 5 messages. First user message: "Hello, how are you?". `+
			`Last user message: "What's my name?". Your name is Alice: you said "My name is Alice".`,
		choice.Message.Content)
	assert.Equal(t, "chatcmpl-offline-1", resp.ID)
	assert.Equal(t, "chat.completion", resp.Object)
	assert.Equal(t, offline.ModelID, resp.Model)
	assert.Equal(t, 4+4+4+5+3, resp.Usage.PromptTokens) // words of the five messages
	assert.Equal(t, len(strings.Fields(choice.Message.Content)), resp.Usage.CompletionTokens)
	assert.Equal(t, resp.Usage.PromptTokens+resp.Usage.CompletionTokens, resp.Usage.TotalTokens)
}

func TestRequestsWithoutAgentHeaderAreAnsweredAsAssistant(t *testing.T) {
	s := startServer(t, offline.Options{})
	resp := complete(t, newClient(s, ""), chatRequest("hi"))
	assert.True(t, strings.HasPrefix(resp.Choices[0].Message.Content, "[offline] assistant received 1 message."))
	assert.Equal(t, 1, s.Requests(offline.DefaultAgent))
}

func TestModelIsEchoed(t *testing.T) {
	s := startServer(t, offline.Options{})
	req := chatRequest("hi")
	req.Model = "gpt-4o-mini"
	assert.Equal(t, "gpt-4o-mini", complete(t, newClient(s, "a"), req).Model)
}

func TestStreamingAndNonStreamingGiveTheSameText(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "planner")
	for _, texts := range [][]string{
		seed,
		{"Tell me about Temporal", "ok", "What did we talk about?"},
		{"  leading   and\ttrailing spaces  \n"},
	} {
		whole := complete(t, c, chatRequest(texts...)).Choices[0].Message.Content
		got := completeStream(t, c, chatRequest(texts...))
		assert.Equal(t, whole, got.text)
		assert.Equal(t, openai.FinishReasonStop, got.finish)
		assert.GreaterOrEqual(t, got.content, 3, "content chunks")
	}
}

func TestRecapThroughTheClient(t *testing.T) {
	s := startServer(t, offline.Options{})
	resp := complete(t, newClient(s, "a"), chatRequest(append(seed[:4:4], "What did we talk about?")...))
	assert.True(t, strings.HasSuffix(resp.Choices[0].Message.Content,
		` We talked about: "Hello, how are you?", "My name is Alice".`), resp.Choices[0].Message.Content)
}

func TestScriptedRepliesInOrderThenDefault(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{
		"writer": {{Text: "first draft"}, {Text: "second draft"}},
	}})
	c := newClient(s, "writer")
	other := newClient(s, "reviewer")

	assert.Equal(t, "[offline] writer: first draft", complete(t, c, chatRequest("go")).Choices[0].Message.Content)
	// Another agent neither consumes nor sees the writer's script.
	assert.True(t, strings.HasPrefix(complete(t, other, chatRequest("go")).Choices[0].Message.Content,
		"[offline] reviewer received 1 message."))
	assert.Equal(t, "[offline] writer: second draft", completeStream(t, c, chatRequest("go")).text)
	assert.Equal(t, `[offline] writer received 1 message. First user message: "again". Last user message: "again".`,
		complete(t, c, chatRequest("again")).Choices[0].Message.Content)
	assert.Equal(t, 3, s.Requests("writer"))
	assert.Equal(t, 1, s.Requests("reviewer"))
	assert.Equal(t, 4, s.TotalRequests())
}

func TestZeroReplyIsTheDefaultReply(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"a": {{}, {Text: "scripted"}}}})
	c := newClient(s, "a")
	assert.True(t, strings.HasPrefix(complete(t, c, chatRequest("x")).Choices[0].Message.Content, "[offline] a received"))
	assert.Equal(t, "[offline] a: scripted", complete(t, c, chatRequest("x")).Choices[0].Message.Content)
}

func TestScriptedServerErrorIsAnAPIError(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{
		"a": {{Status: http.StatusInternalServerError, Message: "the GPU caught fire"}, {Status: http.StatusServiceUnavailable}},
	}})
	c := newClient(s, "a")

	_, err := c.CreateChatCompletion(context.Background(), chatRequest("x"))
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusInternalServerError, apiErr.HTTPStatusCode)
	assert.Equal(t, "the GPU caught fire", apiErr.Message)
	assert.Equal(t, "server_error", apiErr.Type)

	// Streaming requests get the same error before any event.
	_, err = c.CreateChatCompletionStream(context.Background(), chatRequest("x"))
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusServiceUnavailable, apiErr.HTTPStatusCode)
	assert.Equal(t, "Service Unavailable", apiErr.Message)

	// Errors count as requests, and the script moves on past them.
	assert.Equal(t, 2, s.Requests("a"))
	assert.True(t, strings.HasPrefix(complete(t, c, chatRequest("x")).Choices[0].Message.Content, "[offline] a received"))
}

func TestScriptedToolCalls(t *testing.T) {
	calls := []offline.ToolCall{
		{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Malmö","unit":"celsius","days":[1,2,3]}`},
		{Name: "get_time", Arguments: `{"tz":"Europe/Stockholm"}`},
	}
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"a": {{ToolCalls: calls}, {ToolCalls: calls}}}})
	c := newClient(s, "a")

	whole := complete(t, c, chatRequest("weather?"))
	require.Equal(t, openai.FinishReasonToolCalls, whole.Choices[0].FinishReason)
	got := whole.Choices[0].Message.ToolCalls
	require.Len(t, got, 2)
	assert.Equal(t, "call_w", got[0].ID)
	assert.Regexp(t, `^call_offline_[0-9a-f]{12}_1$`, got[1].ID, "a missing id is filled in")
	for i, call := range got {
		assert.Equal(t, openai.ToolTypeFunction, call.Type)
		assert.Equal(t, calls[i].Name, call.Function.Name)
		assert.Equal(t, calls[i].Arguments, call.Function.Arguments)
	}
	assert.Empty(t, whole.Choices[0].Message.Content)

	streamedCalls := completeStream(t, c, chatRequest("weather?"))
	assert.Equal(t, openai.FinishReasonToolCalls, streamedCalls.finish)
	require.Len(t, streamedCalls.toolCalls, 2)
	assert.Equal(t, "call_w", streamedCalls.toolCalls[0].ID)
	assert.Equal(t, got[1].ID, streamedCalls.toolCalls[1].ID, "the same conversation gets the same id, a function of the request")
	for i, call := range streamedCalls.toolCalls {
		assert.Equal(t, openai.ToolTypeFunction, call.Type)
		assert.Equal(t, calls[i].Name, call.Function.Name)
		assert.JSONEq(t, calls[i].Arguments, call.Function.Arguments, "arguments reassembled from fragments")
		assert.Equal(t, calls[i].Arguments, call.Function.Arguments)
	}
}

func TestToolResultsRoundTrip(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{
		"a": {{ToolCalls: []offline.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":"x"}`}}}},
	}})
	c := newClient(s, "a")
	req := chatRequest("look it up")
	first := complete(t, c, req)
	req.Messages = append(req.Messages, first.Choices[0].Message, openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleTool, ToolCallID: first.Choices[0].Message.ToolCalls[0].ID, Content: "found 42",
	})
	second := complete(t, c, req)
	assert.Equal(t,
		`[offline] a received 3 messages. First user message: "look it up". Last user message: "look it up". Tool results: call_1=found 42.`,
		second.Choices[0].Message.Content)
}

func TestEmptyMessagesIsABadRequest(t *testing.T) {
	s := startServer(t, offline.Options{})
	_, err := newClient(s, "a").CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: offline.ModelID})
	var apiErr *openai.APIError
	require.True(t, errors.As(err, &apiErr), "got %v", err)
	assert.Equal(t, http.StatusBadRequest, apiErr.HTTPStatusCode)
	assert.Equal(t, "invalid_request_error", apiErr.Type)
	assert.Contains(t, apiErr.Message, "messages")
	_, ok := s.LastRequest("a")
	assert.False(t, ok, "a rejected request is not recorded")
	assert.Equal(t, 1, s.Requests("a"), "but it is counted")
}

// TestRequestMessagesDecodeAsGoOpenAISendsThem checks the server reads every field of
// the messages go-openai sends, text and multi-part content alike.
func TestRequestMessagesDecodeAsGoOpenAISendsThem(t *testing.T) {
	s := startServer(t, offline.Options{})
	req := openai.ChatCompletionRequest{Model: offline.ModelID, Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "be brief"},
		{Role: openai.ChatMessageRoleUser, Name: "al", MultiContent: []openai.ChatMessagePart{
			{Type: openai.ChatMessagePartTypeText, Text: "what is this"},
			{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "https://x/y.png"}},
		}},
		{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{ID: "c1", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "look", Arguments: `{"q":1}`}}}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "c1", Content: "a cat"},
	}}
	complete(t, newClient(s, "a"), req)
	got, ok := s.LastRequest("a")
	require.True(t, ok)
	assert.Equal(t, req.Messages, got.Messages)
}

func TestContentOfTheWrongTypeIsABadRequest(t *testing.T) {
	for _, content := range []string{`42`, `{"text":"x"}`, `[1,2]`} {
		rec := httptest.NewRecorder()
		body := `{"model":"m","messages":[{"role":"user","content":"ok"},{"role":"user","content":` + content + `}]}`
		offline.New(offline.Options{}).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
		assert.Equal(t, http.StatusBadRequest, rec.Code, content)
		assert.Contains(t, rec.Body.String(), "could not parse the JSON body of the request: messages[1]", content)
	}
}

// TestBodyTooLarge: every endpoint that reads a body answers 413 past 8 MiB.
func TestBodyTooLarge(t *testing.T) {
	body := `{"model":"m","input":"` + strings.Repeat("x", 8<<20) + `"}`
	for _, path := range []string{"/v1/chat/completions", "/v1/responses", "/v1/threads"} {
		rec := httptest.NewRecorder()
		offline.New(offline.Options{}).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, path)
		assert.Contains(t, rec.Body.String(), "request body larger than 8388608 bytes", path)
	}
}
