package integration_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/cli"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// An approved refund runs, then the message store is down while the model's next reply
// (over 1 MiB, so it goes to the store) is stored. The chat keeps the call and its
// result, and every error says so: Approve gets TurnFailed (the README's promise) with
// the store as the cause and the advice to send a new message; sending the turn again
// is refused the same way, and the starter adds no "send it again"; once the store is
// back, a new message is answered and lastError is cleared.
func TestAStoreFailureAfterAnApprovedRefundGivesAdviceThatWorks(t *testing.T) {
	pg := startPostgres(t)
	dsn := pg.start(t)
	big := strings.Repeat("y", 1100<<10)
	h := testenv.New(t, testenv.Options{MessageStoreURL: dsn, Config: `
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [refund], call: {initialInterval: 50ms, maxAttempts: 2}}
`,
		Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "r1", Name: "refund", Arguments: refundCall}}}, {Text: big}}}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}, Store: msgstore.NamePostgres})
	require.NoError(t, err)
	res := send(t, h, id, "m1", "Please refund order 1001")
	require.Len(t, res.AwaitingApproval, 1)

	pg.stop(t)
	_, err = h.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "r1", Approved: true})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeTurnFailed, app.Type(), "%v", err)
	assert.Contains(t, err.Error(), "message store")
	assert.Contains(t, err.Error(), "m1/2", "it names what the chat keeps")
	assert.Contains(t, err.Error(), "send a new message")
	assert.NotContains(t, err.Error(), "send it again")
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.NotNil(t, st.LastError)
	assert.Equal(t, wire.ErrTypeStoreUnavailable, st.LastError.Type)
	assert.True(t, st.LastError.Kept)
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m1/1", "m1/2"}, messageIDs(hist.Messages), "the call and its result stay")

	var out, errOut strings.Builder
	code := cli.Execute(ctxFor(t), []string{"--address", testenv.Address(t), "--task-queue", h.TaskQueue,
		"send", "--chat", id, "--id", "m1", "Please refund order 1001"}, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut.String(), "send a new message")
	assert.NotContains(t, errOut.String(), "--id m1", "no advice that fails")
	assert.NotContains(t, errOut.String(), "left nothing")

	pg.start(t)
	res = send(t, h, id, "m2", "Did the refund go through?")
	require.NotEmpty(t, res.Messages)
	st, err = h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Nil(t, st.LastError, "a turn was answered since")
}
