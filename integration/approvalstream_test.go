package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// announcedCalls follows chat id from offset 0 until it has read every event the chat
// holds now (its offset), and returns the call ids its approvalNeeded events name.
func announcedCalls(t *testing.T, h *testenv.Harness, id string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctxFor(t), 30*time.Second)
	defer cancel()
	v, err := h.Temporal.QueryWorkflow(ctx, id, "", wire.StreamOffsetQuery)
	require.NoError(t, err)
	var end int64
	require.NoError(t, v.Get(&end))
	var calls []string
	if end == 0 {
		return nil // an empty stream
	}
	for ev, err := range h.Client.Follow(ctx, id, 0) {
		require.NoError(t, err, "following %s", id)
		if ev.Type == wire.EventApprovalNeeded {
			calls = append(calls, ev.Call.CallID)
		}
		if ev.Offset+1 >= end {
			break
		}
	}
	return calls
}

// A chat restored while it waits for an approval (by Import, and as a migration's
// target) announces the call on its stream, as the source chat did: a front end that
// follows it from the start learns that a person must act, before anyone approves.
func TestARestoredChatAnnouncesTheApprovalItWaitsFor(t *testing.T) {
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
	assert.Equal(t, []string{"r1"}, announcedCalls(t, a, id), "the source chat announces it")

	doc, _, err := a.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	copyID := id + "-copy"
	st, err := a.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: copyID, Document: doc})
	require.NoError(t, err)
	require.Len(t, st.PendingApprovals, 1)
	assert.Equal(t, []string{"r1"}, announcedCalls(t, a, copyID), "the imported chat announces what State lists")

	_, err = a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: ns})
	require.NoError(t, err)
	st, err = b.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.Len(t, st.PendingApprovals, 1)
	assert.Equal(t, []string{"r1"}, announcedCalls(t, b, id), "the migrated chat announces what State lists")
}
