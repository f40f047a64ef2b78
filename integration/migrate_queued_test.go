package integration_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// clerkConfig is an agent whose refund needs a person's approval; its script asks for
// one refund, then answers.
const clerkConfig = `
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [refund], call: {initialInterval: 50ms, maxAttempts: 2}}
`

func clerkScript() offline.Options {
	return offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
		{ToolCalls: []offline.ToolCall{{Name: "refund", Arguments: refundCall}}},
		{Text: "refund handled"},
	}}}
}

// Found by the system test (10.S1): a chat with a small history budget, a turn queued
// behind an approval, then approved, continues as new; migrated under a new id, the
// target must restore the exported document (not resume the source run's stale carry,
// which held no restored digest), and the source close: one live chat.
func TestMigrationOfAChatThatContinuedAsNewBehindAnApproval(t *testing.T) {
	a := testenv.New(t, testenv.Options{Config: clerkConfig, Model: clerkScript()})
	b := testenv.New(t, testenv.Options{Config: clerkConfig, Model: clerkScript(),
		Namespace: "agentchat-test-order", TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	_, err := a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"},
		HistoryBudget: wire.HistoryBudget{MaxEvents: 34}})
	require.NoError(t, err)
	res := send(t, a, id, "t1", "Please refund order 1001")
	require.Len(t, res.AwaitingApproval, 1)
	_, err = a.Client.Post(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t3", Text: "And thanks", AuthorName: "Alice"})
	require.NoError(t, err)
	_, err = approve(t, a.Temporal, id, wire.ApproveInput{CallID: res.AwaitingApproval[0].CallID, Approved: true})
	require.NoError(t, err)
	var st agentchat.StateResult
	require.Eventually(t, func() bool {
		st, err = a.Client.State(ctxFor(t), id)
		return err == nil && st.TurnCount == 2 && st.MessageCount == 6 && st.ActiveTurn == "" && len(st.PendingTurns) == 0
	}, 30*time.Second, 50*time.Millisecond, "t1 and then t3 answered")
	require.GreaterOrEqual(t, st.Runs, 1, "the chat continued as new")
	to := id + "-moved"
	m, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace, ToChatID: to})
	require.NoError(t, err)
	assert.Equal(t, 6, m.MessageCount)
	st, err = b.Client.State(ctxFor(t), to)
	require.NoError(t, err)
	assert.Equal(t, m.Digest, st.RestoredDigest)
	assert.Equal(t, 6, st.MessageCount)
	assertOneLiveChat(t, to, b)
	require.Eventually(t, func() bool {
		d, err := a.Temporal.DescribeWorkflowExecution(ctxFor(t), id, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	}, 30*time.Second, 100*time.Millisecond, "the source closes")
}
