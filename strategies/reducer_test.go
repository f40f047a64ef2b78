package strategies_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
)

func ids(ms []chat.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.MessageID
	}
	return out
}

// toolCallHistory is a system message, two user turns and, between them, a tool call
// with its result: sys, a, call, result, b, done.
func toolCallHistory() []chat.Message {
	return []chat.Message{
		chat.TextMessage("sys", chat.RoleSystem, "", "be brief"),
		chat.TextMessage("a", chat.RoleUser, "", "user A"),
		{MessageID: "call", Role: chat.RoleAssistant, Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "c1", Name: "f", Arguments: "{}"}}},
		{MessageID: "result", Role: chat.RoleTool, Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "c1", Result: "42"}}},
		chat.TextMessage("b", chat.RoleUser, "", "user B"),
		chat.TextMessage("done", chat.RoleAssistant, "", "done"),
	}
}

// The example of the tools issue: reduced to 3 messages, the history never starts
// with the tool result of a call that was cut off, and keeps the system message.
func TestTruncateNeverSplitsACallFromItsResult(t *testing.T) {
	h := toolCallHistory()
	r := strategies.Reducer{Type: strategies.ReducerTruncate, MaxMessages: 3}
	require.NoError(t, r.Validate())
	assert.Equal(t, []string{"sys", "b", "done"}, ids(r.Reduce(h)))
	// Room for the call and its result: both kept, together.
	assert.Equal(t, []string{"sys", "call", "result", "b", "done"}, ids(strategies.Reducer{Type: strategies.ReducerTruncate, MaxMessages: 5}.Reduce(h)))
	// Short histories and no reducer are untouched.
	assert.Equal(t, ids(h), ids(strategies.Reducer{}.Reduce(h)))
	assert.Equal(t, ids(h), ids(strategies.Reducer{Type: strategies.ReducerTruncate, MaxMessages: 10}.Reduce(h)))
	assert.Len(t, h, 6, "the input is not modified")
}

func TestReducerKeysMakeDistinctChannels(t *testing.T) {
	assert.Equal(t, "none", strategies.Reducer{}.Key())
	assert.Equal(t, "truncate:20", strategies.Reducer{Type: strategies.ReducerTruncate, MaxMessages: 20}.Key())
	assert.Error(t, strategies.Reducer{Type: strategies.ReducerTruncate, MaxMessages: 1}.Validate())
	assert.Error(t, strategies.Reducer{Type: "summarize"}.Validate())
	cfg, err := agents.ParseConfig([]byte(`
agents:
  - {id: full, model: m}
  - {id: short, model: m, reducer: {type: truncate, maxMessages: 4}}
`))
	require.NoError(t, err)
	ps, err := agents.NewRegistry(cfg).Resolve([]string{"full", "short"})
	require.NoError(t, err)
	assert.Equal(t, chat.ChannelKey("chat_history", "reducer=none"), ps[0].ChannelKey)
	assert.Equal(t, chat.ChannelKey("chat_history", "reducer=truncate:4"), ps[1].ChannelKey)
	assert.NotEqual(t, ps[0].ChannelKey, ps[1].ChannelKey)
}

func TestSummarizeCutsAfterToolResultsAndReducesWithTheSummary(t *testing.T) {
	h := toolCallHistory()
	r := strategies.Reducer{Type: strategies.ReducerSummarize, MaxMessages: 4, Keep: 3}
	require.NoError(t, r.Validate())
	from, to, due := r.ToSummarize(h, nil)
	require.True(t, due)
	// Keeping 3 would start at the tool result: the cut moves past it.
	assert.Equal(t, 0, from)
	assert.Equal(t, 4, to)
	state := json.RawMessage(`{"summary":"A asked; f said 42","summarizedThrough":"result"}`)
	view := r.ReduceWith(h, state)
	assert.Equal(t, []string{"sys", "result/summary", "b", "done"}, ids(view))
	assert.Equal(t, strategies.SummaryPrefix+"A asked; f said 42", view[1].Text())
	_, _, due = r.ToSummarize(h, state)
	assert.False(t, due, "two messages after the summary are within the limit")
	assert.NotEqual(t, strategies.Reducer{Type: strategies.ReducerSummarize, MaxMessages: 4}.Key(), strategies.Reducer{Type: strategies.ReducerTruncate, MaxMessages: 4}.Key())
}
