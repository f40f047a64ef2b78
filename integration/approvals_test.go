package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/tools"
	"github.com/agentchat/agentchat/wire"
)

// A refund that needs approval suspends the turn durably: the worker process is killed
// with SIGKILL while the chat waits, a new process takes over, and the Approve update
// resumes the turn there. The refund runs once and the model answers with its result.
func TestApprovalWaitsAcrossAWorkerCrash(t *testing.T) {
	model, err := offline.Start(offline.Options{Scripts: map[string][]offline.Reply{"clerk": refundScript}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = model.Close() })
	config := fmt.Sprintf(`
endpoints:
  local: {baseURL: %q}
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, endpoint: local, instructions: "You run the order desk.", tools: [refund], call: {initialInterval: 50ms, maxAttempts: 4}}
`, model.URL())
	tq := testenv.TaskQueue(t)
	opts := testenv.ProcessOptions{TaskQueue: tq, Config: config}
	first := testenv.StartWorkerProcess(t, opts)
	tc := testenv.Dial(t, "")
	c := agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: tq})
	id := testenv.ChatID(t)
	_, err = c.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)

	res, err := c.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "Please refund order 1001"})
	require.NoError(t, err)
	waiting := []wire.PendingApproval{{CallID: "r1", Tool: "refund", Arguments: refundCall, AgentID: "clerk", TurnID: "m1"}}
	assert.Equal(t, waiting, res.AwaitingApproval)
	require.Len(t, res.Messages, 1)
	assert.Equal(t, "r1", res.Messages[0].FunctionCalls()[0].CallID)
	st, err := c.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, waiting, st.PendingApprovals)

	first.Kill()
	killed := time.Now()
	testenv.StartWorkerProcess(t, opts)
	st, err = c.State(ctxFor(t), id) // the new process replays the chat from its history
	require.NoError(t, err)
	assert.Equal(t, waiting, st.PendingApprovals, "the suspension survived the crash")

	res, err = approve(t, tc, id, wire.ApproveInput{CallID: "r1", Approved: true, By: "manager"})
	require.NoError(t, err)
	t.Logf("approved and answered %s after the kill", time.Since(killed).Round(time.Millisecond))
	require.Len(t, res.Messages, 2, "the tool result, then the model's reply")
	assert.Equal(t, map[string]chat.Content{"r1": {Type: chat.ContentFunctionResult, CallID: "r1", Result: "refunded $42.50 for order 1001"}},
		contentsByCall(res.Messages[0]))
	assert.Equal(t, `[offline] clerk received 4 messages. First user message: "Please refund order 1001". `+
		`Last user message: "Please refund order 1001". Tool results: r1=refunded $42.50 for order 1001.`, res.Messages[1].Text())
	assert.Empty(t, res.AwaitingApproval)

	hist, err := c.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m1/1", "m1/2", "m1/3"}, messageIDs(hist.Messages))
	scheduled, completed, attempts := activityRuns(t, tc, id, wire.CallToolActivity)
	assert.Equal(t, [3]int{1, 1, 1}, [3]int{scheduled, completed, attempts}, "the refund ran once, in one attempt")
	assert.Equal(t, 2, model.Requests("clerk"))
	st, err = c.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Empty(t, st.PendingApprovals)
}

// A rejected call is never run: the model reads "rejected by a person: <reason>" as
// the call's error result, and answers. The worker is restarted while the chat waits.
func TestRejectedApprovalReachesTheModel(t *testing.T) {
	var refunds counter
	h := testenv.New(t, testenv.Options{
		Config: `
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, instructions: "You run the order desk.", tools: [refund], call: {initialInterval: 50ms, maxAttempts: 4}}
`,
		Tools: map[string]activities.ToolFunc{"refund": func(ctx context.Context, args json.RawMessage) (string, error) {
			refunds.add("refund")
			return tools.Refund(ctx, args)
		}},
		Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": refundScript}},
	})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	res := send(t, h, id, "m1", "Please refund order 1001")
	require.Len(t, res.AwaitingApproval, 1)
	assert.Equal(t, "r1", res.AwaitingApproval[0].CallID)

	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m2", Text: "Hello?"})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeAwaitingApproval, app.Type(), "no new turn while a call waits")
	assert.Contains(t, err.Error(), "r1")

	h.RestartWorkerCold(t)
	_, err = approve(t, h.Temporal, id, wire.ApproveInput{CallID: "nope", Approved: true})
	require.Error(t, err, "only a call the chat waits for can be decided")
	assert.Contains(t, err.Error(), `waits for no approval of call "nope"`)

	res, err = approve(t, h.Temporal, id, wire.ApproveInput{CallID: "r1", Approved: false,
		Reason: "refunds over $40 need a manager", By: "bob"})
	require.NoError(t, err)
	require.Len(t, res.Messages, 2)
	assert.Equal(t, "rejected by a person: refunds over $40 need a manager", contentsByCall(res.Messages[0])["r1"].Error)
	assert.Contains(t, res.Messages[1].Text(), "Tool results: r1=error: rejected by a person: refunds over $40 need a manager.")
	req, ok := h.Model.LastRequest("clerk")
	require.True(t, ok)
	last := req.Messages[len(req.Messages)-1]
	assert.Equal(t, openai.ChatMessageRoleTool, last.Role)
	assert.Equal(t, "r1", last.ToolCallID)
	assert.Equal(t, "error: rejected by a person: refunds over $40 need a manager", last.Content, "what the model received")
	assert.Zero(t, refunds.get("refund"), "a rejected refund never runs")

	after := send(t, h, id, "m2", "Thanks anyway")
	assert.Contains(t, after.Messages[0].Text(), `Last user message: "Thanks anyway"`, "the chat takes turns again")
}

// An approval waits across export and import, and across a migration: the document
// ends with the open call, and the chat it is restored into waits for the same
// approval, then finishes the turn there.
func TestApprovalWaitsAcrossExportImportAndMigration(t *testing.T) {
	config := `
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [refund], call: {initialInterval: 50ms, maxAttempts: 4}}
`
	script := offline.Options{Scripts: map[string][]offline.Reply{"clerk": refundScript}}
	a := testenv.New(t, testenv.Options{Config: config, Model: script})
	ns := testenv.Namespace(t, "agentchat-test-approval")
	b := testenv.New(t, testenv.Options{Config: config, Model: script, Namespace: ns, TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	_, err := a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	res := send(t, a, id, "m1", "Please refund order 1001")
	require.Len(t, res.AwaitingApproval, 1)

	// Export and import: the copy waits for the same call.
	doc, _, err := a.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	parsed, report, err := chatstate.Decode(doc)
	require.NoError(t, err)
	assert.Empty(t, report.Repairs, "an open call at the end is kept, not repaired")
	assert.Equal(t, "r1", parsed.History[len(parsed.History)-1].FunctionCalls()[0].CallID)
	copyID := id + "-copy"
	st, err := a.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: copyID, Document: doc})
	require.NoError(t, err)
	require.Len(t, st.PendingApprovals, 1)
	assert.Equal(t, "r1", st.PendingApprovals[0].CallID)
	done, err := a.Client.Approve(ctxFor(t), copyID, agentchat.ApproveInput{CallID: "r1", Approved: true})
	require.NoError(t, err)
	require.NotEmpty(t, done.Messages)
	assert.Equal(t, "refunded $42.50 for order 1001", done.Messages[0].Contents[0].Result, "the approved refund ran in the copy")

	// Migration: the chat moves while it waits, and is approved in its new place.
	_, err = a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: ns})
	require.NoError(t, err)
	st, err = b.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.Len(t, st.PendingApprovals, 1)
	done, err = b.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "r1", Approved: true})
	require.NoError(t, err)
	require.NotEmpty(t, done.Messages)
	assert.Equal(t, "refunded $42.50 for order 1001", done.Messages[0].Contents[0].Result, "the approved refund ran in the new place")
	assertOneLiveChat(t, id, a, b)
}
