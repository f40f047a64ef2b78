package integration_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/tools"
	"github.com/agentchat/agentchat/wire"
)

// Regression tests on the dev server for the tool and provider faults of "Hold the
// durability promise at every edge" (faults 10 and 12).

// Fault 10: an approved refund runs, then the model refuses the next request (400).
// The turn fails once (Approve gets TurnFailed), the refund's result stays in the
// history, nothing waits for approval any more, and approving again refunds nothing.
func TestApprovedRefundRunsOnceWhenTheModelThenRefuses(t *testing.T) {
	var refunds counter
	h := testenv.New(t, testenv.Options{
		Config: `
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [refund], call: {initialInterval: 50ms, maxAttempts: 2}}
`,
		Tools: map[string]activities.ToolFunc{"refund": func(ctx context.Context, args json.RawMessage) (string, error) {
			refunds.add("refund")
			return tools.Refund(ctx, args)
		}},
		Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "r1", Name: "refund", Arguments: refundCall}}},
			{Status: 400, Message: "Invalid request"},
		}}},
	})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	res := send(t, h, id, "m1", "Please refund order 1001")
	require.Len(t, res.AwaitingApproval, 1)

	_, err = approve(t, h.Temporal, id, wire.ApproveInput{CallID: "r1", Approved: true})
	require.Equal(t, wire.ErrTypeTurnFailed, appType(err), "%v", err)
	assert.Contains(t, err.Error(), "Invalid request")
	assert.Equal(t, 1, refunds.get("refund"))

	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Empty(t, st.PendingApprovals, "the refund ran: nothing waits for approval")
	require.NotNil(t, st.LastError)
	assert.Equal(t, "m1", st.LastError.MessageID)
	_, err = approve(t, h.Temporal, id, wire.ApproveInput{CallID: "r1", Approved: true})
	require.NoError(t, err, "a repeated approval answers what the call did")
	assert.Equal(t, 1, refunds.get("refund"), "and refunds nothing again")

	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m1/1", "m1/2"}, messageIDs(hist.Messages))
	assert.Equal(t, "refunded $42.50 for order 1001", contentsByCall(hist.Messages[2])["r1"].Result)
	scheduled, _, _ := activityRuns(t, h.Temporal, id, wire.CallToolActivity)
	assert.Equal(t, 1, scheduled)
	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m2", Text: "Did it work?"})
	require.NoError(t, err, "the chat takes the next turn")
}

// Fault 12: a chat restored with a Responses chain the service does not know (here: a
// response id no server ever gave) answers its next turn: the chain is dropped and the
// agent is sent the whole primary history as a new chain; the state records the loss.
func TestLostResponseChainIsSentAgainFromTheHistory(t *testing.T) {
	// The service's 404 for the lost chain is the point of the test.
	h := testenv.New(t, testenv.Options{Config: kindsConfig, ExpectViolations: true})
	src := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: src, Participants: []string{"analyst"}})
	require.NoError(t, err)
	send(t, h, src, "m1", "My name is Alice")
	b, _, err := h.Client.Export(ctxFor(t), src)
	require.NoError(t, err)
	doc, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	for i, ch := range doc.Channels {
		if ch.ChannelType == wire.ChannelResponsesThread {
			doc.Channels[i].ChannelState = json.RawMessage(`{"previousResponseId":"resp_gone","syncedThrough":"m1/1"}`)
		}
	}
	b, _, err = chatstate.Encode(doc)
	require.NoError(t, err)
	id := src + "-restored"
	_, err = h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Document: b})
	require.NoError(t, err)

	res := send(t, h, id, "m2", "What's my name?")
	require.Len(t, res.Messages, 1)
	assert.Contains(t, res.Messages[0].Text(), "Your name is Alice", "the new chain has the history")
	req, ok := h.Model.LastResponseRequest("analyst")
	require.True(t, ok)
	assert.Empty(t, req.PreviousResponseID, "a new chain")
	inputs := responseInputs(t, req)
	require.Len(t, inputs, 3, "m1, its reply and m2")
	assert.Equal(t, "user: My name is Alice", inputs[0])
	assert.Equal(t, "user: What's my name?", inputs[2])
	st := decodeState[wire.ResponsesThreadState](t, channelState(t, h, id, wire.ChannelResponsesThread))
	assert.Equal(t, "resp_gone", st.LostResponseID)
	assert.Equal(t, "m2/1", st.SyncedThrough)
	send(t, h, id, "m3", "Thanks")
	req, _ = h.Model.LastResponseRequest("analyst")
	assert.Equal(t, st.PreviousResponseID, req.PreviousResponseID, "the next turn goes on the new chain")
}

// Fault 8: a restored history ends with an open call that needs no approval, and the
// model refuses the call after it. The chat runs the tool once, fails that turn once,
// and takes the queued turn: no resumption loop (unbounded model calls and tool runs).
func TestRestoredOpenCallWhoseTurnFailsFailsOnce(t *testing.T) {
	var lookups counter
	h := testenv.New(t, testenv.Options{
		Config: `
tools:
  lookup_order: {}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [lookup_order], call: {initialInterval: 50ms, maxAttempts: 2}}
`,
		Tools: map[string]activities.ToolFunc{"lookup_order": func(ctx context.Context, args json.RawMessage) (string, error) {
			lookups.add("lookup")
			return tools.LookupOrder(ctx, args)
		}},
		// Script positions follow the conversation: both requests hold one clerk reply (the
		// restored call), so both are at position 1, and each meets one refusal.
		Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
			{Text: "not reached"}, {Status: 400, Message: "Invalid request"}, {Status: 400, Message: "Invalid request"}}}},
	})
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	user := chat.TextMessage("m1", chat.RoleUser, "", "Where is order 1002?")
	reply := chat.Message{MessageID: "m1/1", Role: chat.RoleAssistant, AuthorName: "Clerk", AgentID: "clerk",
		Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "c1", Name: "lookup_order", Arguments: `{"order":"1002"}`}}}
	queued := chat.TextMessage("later", chat.RoleUser, "", "Hello?")
	user.CreatedAt, reply.CreatedAt, queued.CreatedAt = at, at, at
	doc, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "src", ExportedAt: at,
		Source: chatstate.Source{Namespace: "default", WorkflowID: "src"}, History: []chat.Message{user, reply},
		Participants: []chatstate.Participant{{ID: "clerk", Name: "Clerk", Type: "chat_completion"}},
		Strategies: chatstate.Strategies{
			Selection:   chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":0}`)},
			Termination: chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":0}`)}},
		PendingTurns: []chat.Message{queued}})
	require.NoError(t, err)
	id := testenv.ChatID(t)
	_, err = h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Document: doc})
	require.NoError(t, err)

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		st, err := h.Client.State(ctxFor(t), id)
		require.NoError(c, err)
		require.NotNil(c, st.LastError)
		assert.Equal(c, "later", st.LastError.MessageID)
	}, 30*time.Second, 50*time.Millisecond, "the queued turn was never taken")
	time.Sleep(time.Second) // a loop would go on meanwhile
	assert.Equal(t, 1, lookups.get("lookup"), "the open call ran once")
	assert.Equal(t, 2, h.Model.Requests("clerk"), "the resumed turn's call, then the queued turn's")
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Empty(t, st.PendingTurns)
	assert.Empty(t, st.ActiveTurn)
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m1/1", "m1/2"}, messageIDs(hist.Messages), "the lookup's result stays")
}
