package integration_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// A document whose history ends on a resumed turn's tool results, with no answer after
// them (what an export taken while a resumed turn ran held before exports waited for the
// answer, and what a turn that failed after its tools ran leaves): the imported chat
// neither runs the call again nor sticks. The turn's messageId is refused as failed, as
// in the source, and the next turn gets an answer from a request the strict offline
// model accepts (the call, its result, then the new user message).
func TestImportOfAResumedTurnWithoutItsAnswer(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: `
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [refund], call: {initialInterval: 50ms, maxAttempts: 2}}
`})
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	history := []chat.Message{
		chat.TextMessage("m1", chat.RoleUser, "", "Please refund order 1001"),
		{MessageID: "m1/1", Role: chat.RoleAssistant, AuthorName: "Clerk", AgentID: "clerk",
			Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "r1", Name: "refund", Arguments: refundCall}}},
		{MessageID: "m1/2", Role: chat.RoleTool, AuthorName: "tools", AgentID: "clerk",
			Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "r1", Result: "refunded $42.50 for order 1001"}}},
	}
	for i := range history {
		history[i].CreatedAt = at
	}
	doc, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "src", ExportedAt: at,
		Source: chatstate.Source{Namespace: "default", WorkflowID: "src"}, History: history,
		Participants: []chatstate.Participant{{ID: "clerk", Name: "Clerk", Type: "chat_completion"}},
		Strategies: chatstate.Strategies{
			Selection:   chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":0}`)},
			Termination: chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":0}`)}}})
	require.NoError(t, err)
	id := testenv.ChatID(t)
	st, err := h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Document: doc})
	require.NoError(t, err)
	assert.Empty(t, st.PendingApprovals, "the call has its result: nothing waits")

	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "Please refund order 1001"})
	require.Equal(t, wire.ErrTypeTurnFailed, appType(err), "%v", err)
	assert.Contains(t, err.Error(), "send a new message to go on")

	res, err := h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m2", Text: "Did it work?"})
	require.NoError(t, err, "the strict model accepts the request")
	require.NotEmpty(t, res.Messages)
	assert.NotEmpty(t, res.Messages[len(res.Messages)-1].Text(), "the agent answers")
	scheduled, _, _ := activityRuns(t, h.Temporal, id, wire.CallToolActivity)
	assert.Zero(t, scheduled, "the refund is not run again")
	assert.Equal(t, 1, h.Model.Requests("clerk"))
}
