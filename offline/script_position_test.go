package offline_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// authorTransport sets the headers agentchat's model activity sets on an agent's own
// model call: the agent, the chat and the name its replies carry.
type authorTransport struct{ agent, chat, author string }

func (a authorTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(offline.AgentHeader, a.agent)
	r.Header.Set(wire.ChatHeader, a.chat)
	r.Header.Set(offline.AuthorHeader, a.author)
	return http.DefaultTransport.RoundTrip(r)
}

// authorClient is a go-openai client for s calling as the clerk of chat c1.
func authorClient(s *offline.Server) *openai.Client {
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = s.URL()
	cfg.HTTPClient = &http.Client{Transport: authorTransport{agent: "clerk", chat: "c1", author: "Clerk"}}
	return openai.NewClientWithConfig(cfg)
}

// The example clerk's script: look the order up, ask for the refund, then answer.
var clerkScript = []offline.Reply{
	{ToolCalls: []offline.ToolCall{{ID: "call_lookup", Name: "lookup_order", Arguments: `{"order":"1002"}`}}},
	{ToolCalls: []offline.ToolCall{{ID: "call_refund", Name: "refund", Arguments: `{"order":"1002"}`}}},
	{Text: "The kettle of order 1002 is refunded."},
}

// Fault 13: the script position was a per-process counter, so a worker restart (a new
// offline server) after an approval started the clerk's script again and asked for the
// refund a second time. The position is now a function of the conversation: a second
// server, which never saw the first requests, answers the approved refund's result
// with the script's last reply, and asking again gets the same answer.
func TestScriptFollowsTheConversationInAnyProcess(t *testing.T) {
	first := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"clerk": clerkScript}})
	turn := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Refund order 1002, please"}}
	reply := complete(t, authorClient(first), openai.ChatCompletionRequest{Model: offline.ModelID, Messages: turn}).Choices[0].Message
	require.Len(t, reply.ToolCalls, 1)
	assert.Equal(t, "call_lookup", reply.ToolCalls[0].ID)
	reply.Name = "Clerk"
	turn = append(turn, reply, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "call_lookup", Content: "a kettle"})
	reply = complete(t, authorClient(first), openai.ChatCompletionRequest{Model: offline.ModelID, Messages: turn}).Choices[0].Message
	require.Len(t, reply.ToolCalls, 1)
	assert.Equal(t, "call_refund", reply.ToolCalls[0].ID)
	reply.Name = "Clerk"
	turn = append(turn, reply, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "call_refund", Content: "refunded"})

	// The worker restarts while the refund waits for approval: a new process, a new server.
	second := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"clerk": clerkScript}})
	for range 2 {
		got := complete(t, authorClient(second), openai.ChatCompletionRequest{Model: offline.ModelID, Messages: turn}).Choices[0].Message
		assert.Empty(t, got.ToolCalls, "the refund is not asked for again")
		assert.Equal(t, "[offline] clerk: The kettle of order 1002 is refunded.", got.Content)
	}
	// The next turn goes on after the script's end; another agent's replies do not count.
	next := append(turn, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Name: "Clerk", Content: "done"},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "And order 1003?"},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Name: "Other", Content: "I am another agent."})
	got := complete(t, authorClient(second), openai.ChatCompletionRequest{Model: offline.ModelID, Messages: next}).Choices[0].Message
	assert.Empty(t, got.ToolCalls)
	assert.Contains(t, got.Content, "[offline] clerk received 8 messages.", "the default reply")
	// Three of the clerk's replies left out (a reducer): the script is back at its start.
	got = complete(t, authorClient(second), openai.ChatCompletionRequest{Model: offline.ModelID, Messages: next[6:]}).Choices[0].Message
	require.Len(t, got.ToolCalls, 1)
	assert.Equal(t, "call_lookup", got.ToolCalls[0].ID)
	assert.Empty(t, second.Violations())
}

// A scripted error is an attempt: it is answered once for its place in the
// conversation, and the retry of the same request gets the answer after it.
func TestScriptedErrorsAreAnsweredOncePerPosition(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
		{Status: http.StatusServiceUnavailable, Message: "try later"}, {Text: "first"},
		{Status: http.StatusTooManyRequests}, {Status: http.StatusInternalServerError}, {Text: "second"},
	}}})
	c := authorClient(s)
	turn := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}}
	statusOf := func() (int, string) {
		resp, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: offline.ModelID, Messages: turn})
		var api *openai.APIError
		if errors.As(err, &api) {
			return api.HTTPStatusCode, ""
		}
		require.NoError(t, err)
		return http.StatusOK, resp.Choices[0].Message.Content
	}
	code, _ := statusOf()
	assert.Equal(t, http.StatusServiceUnavailable, code)
	code, text := statusOf()
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "[offline] clerk: first", text)
	turn = append(turn, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Name: "Clerk", Content: text},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "again"})
	// Position 1: the clerk's second reply; its two errors come first.
	code, _ = statusOf()
	assert.Equal(t, http.StatusTooManyRequests, code)
	code, _ = statusOf()
	assert.Equal(t, http.StatusInternalServerError, code)
	code, text = statusOf()
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "[offline] clerk: second", text)
	assert.Equal(t, 5, s.Requests("clerk"), "every attempt counts")
	turn = turn[:1]
	code, text = statusOf()
	assert.Equal(t, http.StatusOK, code, "position 0 again: its error was answered")
	assert.Equal(t, "[offline] clerk: first", text)
}
