package workflows_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/wire"
)

// The answer to a retried messageId is the same before and after a continue-as-new and
// an import (a migration restores the same document): a resumed turn that failed after
// its tools ran is refused, not returned as if answered (issue 10, "no turn is lost or
// repeated").

// clerkHistoryDocument is a document of the clerk's chat holding history.
func clerkHistoryDocument(t *testing.T, history []chat.Message) []byte {
	t.Helper()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := range history {
		history[i].CreatedAt = at
	}
	b, _, err := chatstate.Encode(chatstate.Document{
		SchemaVersion: 1, ChatID: "src", ExportedAt: at,
		Source:       chatstate.Source{Namespace: "default", WorkflowID: "src"},
		History:      history,
		Participants: []chatstate.Participant{clerkP},
		Channels:     []chatstate.Channel{{ChannelKey: plainKey, ChannelType: chat.ChannelChatHistory, ChannelState: json.RawMessage(`{}`)}},
		Strategies: chatstate.Strategies{
			Selection:   chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":0}`)},
			Termination: chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":1}`)},
		},
	})
	require.NoError(t, err)
	return b
}

// failedResumedTurn is a turn m1 whose approved refund ran and whose model call after
// it failed: the user message, the call and its result, no answer.
func failedResumedTurn() []chat.Message {
	return []chat.Message{
		chat.TextMessage("m1", chat.RoleUser, "", "refund order 1001"),
		{MessageID: "m1/1", Role: chat.RoleAssistant, AuthorName: "Clerk", AgentID: "clerk",
			Contents: []chat.Content{call("c1", "refund", `{"order":"1001"}`)}},
		{MessageID: "m1/2", Role: chat.RoleTool, AuthorName: "tools", AgentID: "clerk",
			Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "c1", Result: `refund of {"order":"1001"}`}}},
	}
}

func requireRefusedAsFailed(t *testing.T, o *outcome) {
	t.Helper()
	require.True(t, o.done)
	require.Error(t, o.rejected, "a failed turn is not answered on retry")
	var app *temporal.ApplicationError
	require.True(t, errors.As(o.rejected, &app), "%v", o.rejected)
	assert.Equal(t, wire.ErrTypeTurnFailed, app.Type())
	assert.Contains(t, o.rejected.Error(), "send a new message to go on")
}

func TestRetriedFailedResumedTurnIsRefusedAfterContinueAsNew(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":"1001"}`)}
	e.model.errs["clerk#2"] = rejected400()
	e.send(time.Second, msg("m1", "refund order 1001"))
	e.approve(time.Minute, wire.ApproveInput{CallID: "c1", Approved: true})
	before := e.send(90*time.Second, msg("m1", "refund order 1001"))
	e.at(2*time.Minute, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(clerk(), 0)
	requireRefusedAsFailed(t, before)
	next, _ := canInput(t, e)

	e2, ft := newToolEnv(t, 0)
	after := e2.send(time.Second, msg("m1", "refund order 1001"))
	e2.run(next, time.Minute)
	requireRefusedAsFailed(t, after)
	assert.Zero(t, e2.model.count(), "no model call")
	assert.Empty(t, ft.ran)
}

func TestRetriedFailedResumedTurnIsRefusedAfterImport(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	history := append(failedResumedTurn(),
		chat.TextMessage("m2", chat.RoleUser, "", "did it work?"),
		chat.Message{MessageID: "m2/1", Role: chat.RoleAssistant, AgentID: "clerk", Contents: []chat.Content{chat.Text("yes")}})
	again := e.send(time.Second, msg("m1", "refund order 1001"))
	answered := e.send(2*time.Second, msg("m2", "did it work?"))
	e.run(restoring(clerkHistoryDocument(t, history), "clerk"), time.Minute)
	requireRefusedAsFailed(t, again)
	require.NoError(t, answered.err, "an answered turn still returns its answer")
	assert.Equal(t, []string{"m2/1"}, ids(answered.result.Messages))
	assert.Zero(t, e.model.count())
	assert.Empty(t, ft.ran)
}

// A turn that reached its tool-round limit ends on the calls' error results, and was
// answered: a retry returns it, before and after an import alike.
func TestRetriedTurnEndedByTheRoundLimitIsAnsweredAfterImport(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	history := failedResumedTurn()
	history[2].Contents = []chat.Content{{Type: chat.ContentFunctionResult, CallID: "c1",
		Error: "not run: the agent reached its limit of 3 tool rounds in one reply"}}
	again := e.send(time.Second, msg("m1", "refund order 1001"))
	e.run(restoring(clerkHistoryDocument(t, history), "clerk"), time.Minute)
	require.NoError(t, again.rejected)
	require.NoError(t, again.err)
	assert.Equal(t, []string{"m1/1", "m1/2"}, ids(again.result.Messages))
	assert.Zero(t, e.model.count())
}
