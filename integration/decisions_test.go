package integration_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/tools"
)

// A decision given for one of two calls waiting for approval is not lost across a
// migration: it is applied when given (the approved refund runs then), so the document
// holds its result, and the migrated chat waits for the other call only. Each refund
// runs once.
func TestADecisionGivenBeforeAMigrationIsNotLost(t *testing.T) {
	config := `
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [refund], call: {initialInterval: 50ms, maxAttempts: 4}}
`
	var refunds counter
	refund := map[string]activities.ToolFunc{"refund": func(ctx context.Context, args json.RawMessage) (string, error) {
		refunds.add(string(args))
		return tools.Refund(ctx, args)
	}}
	script := offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
		{ToolCalls: []offline.ToolCall{{ID: "r1", Name: "refund", Arguments: `{"order":"1001"}`},
			{ID: "r2", Name: "refund", Arguments: `{"order":"1002"}`}}},
		{Text: "Both refunded"},
	}}}
	a := testenv.New(t, testenv.Options{Config: config, Model: script, Tools: refund})
	ns := testenv.Namespace(t, "agentchat-test-decision")
	b := testenv.New(t, testenv.Options{Config: config, Model: script, Tools: refund, Namespace: ns, TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	_, err := a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	res := send(t, a, id, "m1", "Please refund orders 1001 and 1002")
	require.Len(t, res.AwaitingApproval, 2)

	first, err := a.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "r1", Approved: true})
	require.NoError(t, err)
	require.Len(t, first.AwaitingApproval, 1)
	assert.Equal(t, "r2", first.AwaitingApproval[0].CallID)
	assert.Equal(t, 1, refunds.get(`{"order":"1001"}`), "the approved refund ran when approved")

	_, err = a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: ns})
	require.NoError(t, err)
	st, err := b.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.Len(t, st.PendingApprovals, 1, "the decision on r1 was not lost")
	assert.Equal(t, "r2", st.PendingApprovals[0].CallID)

	done, err := b.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "r2", Approved: true})
	require.NoError(t, err)
	assert.Empty(t, done.AwaitingApproval)
	assert.Contains(t, done.Messages[len(done.Messages)-1].Text(), "Both refunded")
	assert.Equal(t, 1, refunds.get(`{"order":"1001"}`))
	assert.Equal(t, 1, refunds.get(`{"order":"1002"}`))
	assertOneLiveChat(t, id, a, b)
}
