package activities_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// budgetActivities returns activities whose agent "helper" has context budget tokens
// (0: the default), on the offline model.
func budgetActivities(t *testing.T, tokens int) (*activities.Activities, *offline.Server) {
	return setupAgents(t, true, fmt.Sprintf(`
  - {id: helper, name: Helper, model: m, instructions: Be brief., contextTokens: %d}`, tokens))
}

// turns returns n user/assistant messages of about size bytes each, the last a user's.
func turns(n, size int) []chat.Message {
	var h []chat.Message
	for i := range n {
		role := chat.RoleUser
		if (n-1-i)%2 == 1 {
			role = chat.RoleAssistant
		}
		h = append(h, chat.TextMessage(fmt.Sprintf("m%d", i), role, "", fmt.Sprintf("%d ", i)+strings.Repeat("x", size)))
	}
	return h
}

// A history over the agent's contextTokens reaches the model as its latest messages
// that fit, after the instructions; the chat's history is not changed.
func TestInvokeAgentSendsTheLatestMessagesThatFitTheContextBudget(t *testing.T) {
	acts, srv := budgetActivities(t, 1_000)
	history := turns(30, 800) // about 208 estimated tokens each
	_, err, _ := invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: "helper", History: history, ReplyID: "m29/1"})
	require.NoError(t, err)
	req, ok := srv.LastRequest("helper")
	require.True(t, ok)
	require.Greater(t, len(req.Messages), 1)
	assert.Equal(t, "system", req.Messages[0].Role)
	sent := req.Messages[1:]
	assert.Less(t, len(sent), len(history), "a history over the budget is cut")
	tokens := strategies.EstimateTokens(len("Be brief."))
	for i, m := range sent {
		want := history[len(history)-len(sent)+i]
		assert.Equal(t, want.Text(), m.Content, "the latest messages, in order")
		tokens += strategies.EstimateTokens(wire.MessageBytes(want))
	}
	assert.LessOrEqual(t, tokens, 1_000)
	assert.Greater(t, tokens+strategies.EstimateTokens(wire.MessageBytes(history[len(history)-len(sent)-1])), 1_000,
		"as many as fit")
	assert.Len(t, history, 30)

	// Within the budget, the whole history goes.
	_, err, _ = invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: "helper", History: history[27:], ReplyID: "m29/1"})
	require.NoError(t, err)
	req, _ = srv.LastRequest("helper")
	assert.Len(t, req.Messages, 1+3)
}

// When the model counts more tokens than the estimate and answers
// context_length_exceeded, the reply is asked again with half the budget, which
// leaves out more of the oldest messages; a single message over the model's window
// stays the model's refusal.
func TestInvokeAgentHalvesTheBudgetOnContextLengthExceeded(t *testing.T) {
	// A budget over the offline model's window: five messages of 1 MiB fit the budget
	// (about 1.31M estimated tokens) but not the window (1,047,576).
	acts, srv := budgetActivities(t, 2_000_000)
	history := turns(5, 1<<20)
	_, err, _ := invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: "helper", History: history, ReplyID: "m4/1"})
	require.NoError(t, err)
	req, ok := srv.LastRequest("helper")
	require.True(t, ok)
	assert.Len(t, req.Messages, 1+3, "half the budget holds the latest three")
	assert.Equal(t, history[4].Text(), req.Messages[3].Content)
	assert.LessOrEqual(t, offline.ContextTokens(req.Messages), offline.ContextWindowTokens)

	// One message over the window is refused, clearly, whatever the budget.
	huge := []chat.Message{chat.TextMessage("big", chat.RoleUser, "", strings.Repeat("y", 4*offline.ContextWindowTokens+4))}
	_, err, _ = invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: "helper", History: huge, ReplyID: "big/1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "maximum context length")
}
