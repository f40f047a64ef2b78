package integration_test

import (
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/strategies"
)

// reducerConfig has a truncating agent with a tool and a summarizing agent.
const reducerConfig = `
tools:
  clock: {description: "The time now, in UTC"}
agents:
  - {id: trunc, name: Trunc, model: offline, instructions: "Answer in one line.", tools: [clock], reducer: {type: truncate, maxMessages: 3}}
  - {id: scribe, name: Scribe, model: offline, reducer: {type: summarize, maxMessages: 4, keep: 2}}
`

// roles lists the roles of a request's messages.
func roles(req openai.ChatCompletionRequest) []string {
	var out []string
	for _, m := range req.Messages {
		out = append(out, m.Role)
	}
	return out
}

// assertNoOrphanResults checks that every tool message of a request follows the
// assistant message that made its call, as OpenAI requires.
func assertNoOrphanResults(t *testing.T, req openai.ChatCompletionRequest) {
	t.Helper()
	calls := map[string]bool{}
	for i, m := range req.Messages {
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
		if m.Role == openai.ChatMessageRoleTool {
			assert.True(t, calls[m.ToolCallID], "message %d is the result of call %s, which the request does not hold: %v", i, m.ToolCallID, roles(req))
		}
	}
}

func TestTruncateNeverStartsWithAToolResult(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: reducerConfig})

	t.Run("history with a system message", func(t *testing.T) {
		// [system, user A, assistant call c1, tool result c1], restored from a document.
		empty := testenv.ChatID(t) + "-empty"
		_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: empty, Participants: []string{"trunc"}})
		require.NoError(t, err)
		b, _, err := h.Client.Export(ctxFor(t), empty)
		require.NoError(t, err)
		doc, _, err := chatstate.Decode(b)
		require.NoError(t, err)
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		doc.History = []chat.Message{
			{MessageID: "s0", Role: chat.RoleSystem, CreatedAt: at, Contents: []chat.Content{chat.Text("Times are in UTC.")}},
			{MessageID: "a", Role: chat.RoleUser, AuthorName: "Alice", CreatedAt: at, Contents: []chat.Content{chat.Text("What time is it?")}},
			{MessageID: "a/1", Role: chat.RoleAssistant, AuthorName: "Trunc", AgentID: "trunc", CreatedAt: at,
				Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "c1", Name: "clock", Arguments: "{}"}}},
			{MessageID: "a/2", Role: chat.RoleTool, AuthorName: "tools", AgentID: "trunc", CreatedAt: at,
				Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "c1", Result: "2026-01-02T03:04:05Z"}}},
		}
		b, _, err = chatstate.Encode(doc)
		require.NoError(t, err)
		id := testenv.ChatID(t)
		_, err = h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Document: b})
		require.NoError(t, err)

		h.Model.SetScript("trunc", []offline.Reply{{Text: "done"}})
		res := send(t, h, id, "b", "And the date?")
		assert.Equal(t, "[offline] trunc: done", res.Messages[0].Text())
		req, ok := h.Model.LastRequest("trunc")
		require.True(t, ok)
		// The latest 2 besides the system message would start at the result of c1, whose
		// call was cut off: the cut moves past it.
		assert.Equal(t, []string{"system", "system", "user"}, roles(req))
		assert.Equal(t, "Times are in UTC.", req.Messages[1].Content)
		assert.Equal(t, "And the date?", req.Messages[2].Content)
		assertNoOrphanResults(t, req)

		// The history is now [system, A, call c1, result c1, B, "done"].
		res = send(t, h, id, "c", "Thanks")
		req, _ = h.Model.LastRequest("trunc")
		assert.Equal(t, []string{"system", "system", "assistant", "user"}, roles(req))
		assert.Contains(t, res.Messages[0].Text(), "received 4 messages")
		assertNoOrphanResults(t, req)
	})

	t.Run("a live tool round", func(t *testing.T) {
		h.Model.SetScript("trunc", []offline.Reply{
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "clock", Arguments: "{}"}}}, {Text: "checked"}, {Text: "done"}})
		id := testenv.ChatID(t)
		_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"trunc"}})
		require.NoError(t, err)
		first := send(t, h, id, "a", "What time is it?")
		require.Len(t, first.Messages, 3)
		req, _ := h.Model.LastRequest("trunc")
		assert.Equal(t, []string{"system", "user", "assistant", "tool"}, roles(req), "3 messages fit whole")

		// [A, call c1, result c1, "checked", B]: the latest 3 would start at the result.
		// The agent is sent one of its replies ("checked"), so its script is at 1.
		h.Model.SetScript("trunc", []offline.Reply{{}, {Text: "done"}})
		res := send(t, h, id, "b", "And the date?")
		assert.Equal(t, "[offline] trunc: done", res.Messages[0].Text())
		req, _ = h.Model.LastRequest("trunc")
		assert.Equal(t, []string{"system", "assistant", "user"}, roles(req))
		assert.Equal(t, "[offline] trunc: checked", req.Messages[1].Content)
		assertNoOrphanResults(t, req)
	})
}

func TestSummarizeKeepsASummaryInTheChannel(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: reducerConfig})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"scribe"}})
	require.NoError(t, err)
	lastRequest := func() openai.ChatCompletionRequest {
		req, ok := h.Model.LastRequest("scribe")
		require.True(t, ok)
		return req
	}
	summary := func() strategies.SummaryState {
		return decodeState[strategies.SummaryState](t, channelState(t, h, id, chat.ChannelChatHistory))
	}

	send(t, h, id, "m1", "Hello, how are you?")
	send(t, h, id, "m2", "My name is Alice")
	assert.Equal(t, []string{"user", "assistant", "user"}, roles(lastRequest()), "4 messages or fewer: no summary yet")
	assert.Equal(t, strategies.SummaryState{}, summary())
	assert.Equal(t, 2, h.Model.Requests("scribe"))

	// 5 messages: m1, m1/1 and m2 are summarized (by the agent's own model), the
	// latest 2 stay.
	send(t, h, id, "m3", "What's my name?")
	assert.Equal(t, 4, h.Model.Requests("scribe"), "a summary call, then the reply")
	first := summary()
	assert.Equal(t, strategies.SummaryState{SummarizedThrough: "m2", Summary: `[offline] scribe received 4 messages. ` +
		`First user message: "Hello, how are you?". Last user message: "My name is Alice".`}, first)
	req := lastRequest()
	assert.Equal(t, []string{"system", "assistant", "user"}, roles(req))
	assert.Equal(t, strategies.SummaryPrefix+first.Summary, req.Messages[0].Content, "the request starts with the summary")
	assert.Equal(t, "What's my name?", req.Messages[2].Content)

	send(t, h, id, "m4", "What did we talk about?")
	assert.Equal(t, 5, h.Model.Requests("scribe"), "4 unsummarized messages: no new summary")
	assert.Equal(t, []string{"system", "assistant", "user", "assistant", "user"}, roles(lastRequest()))

	// 6 unsummarized: m2/1 to m4 are folded into the summary, with the previous one.
	send(t, h, id, "m5", "Thanks")
	assert.Equal(t, 7, h.Model.Requests("scribe"))
	second := summary()
	assert.Equal(t, "m4", second.SummarizedThrough)
	assert.Contains(t, second.Summary, "received 6 messages", "prompt + previous summary + the 4 messages it folds in")
	assert.Contains(t, second.Summary, `First user message: "What's my name?"`)
	req = lastRequest()
	assert.Equal(t, []string{"system", "assistant", "user"}, roles(req))
	assert.Equal(t, strategies.SummaryPrefix+second.Summary, req.Messages[0].Content)

	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, 10, hist.Total, "summaries never enter the primary history")

	b, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	doc, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	require.Len(t, doc.Channels, 1)
	assert.Equal(t, chat.ChannelKey(chat.ChannelChatHistory, "reducer=summarize:4:2"), doc.Channels[0].ChannelKey)
	assert.Equal(t, second, decodeState[strategies.SummaryState](t, doc.Channels[0].ChannelState))
}
