package integration_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

const approvalAgents = `
tools:
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [refund]}
`

// Decisions sent at once on one call, approvals and rejections mixed: one is applied;
// each other one that agrees with it answers with AlreadyDecided, each that differs is
// refused with "already decided: " and the applied decision; the call has one result.
func TestConcurrentDecisionsOnOneCallKeepTheFirst(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: approvalAgents, Model: offline.Options{Scripts: map[string][]offline.Reply{
		"clerk": {{ToolCalls: []offline.ToolCall{{ID: "r1", Name: "refund", Arguments: `{"order":"1001"}`}}}, {Text: "Done."}},
	}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	res := send(t, h, id, "m1", "Refund order 1001")
	require.Len(t, res.AwaitingApproval, 1)

	const n = 6
	results := make([]agentchat.TurnResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = h.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "r1", Approved: i%2 == 0, By: "p" + string(rune('0'+i))})
		})
	}
	wg.Wait()

	var applied []int
	for i := range n {
		if errs[i] == nil && results[i].AlreadyDecided == nil {
			applied = append(applied, i)
		}
	}
	require.Len(t, applied, 1, "exactly one decision is applied: %v %v", errs, results)
	winner := applied[0]
	won := wire.Decision{Approved: winner%2 == 0, By: "p" + string(rune('0'+winner))}
	for i := range n {
		if i == winner {
			continue
		}
		if winner%2 == i%2 {
			require.NoError(t, errs[i], "the same decision again is idempotent")
			if assert.NotNil(t, results[i].AlreadyDecided, "%d", i) {
				assert.Equal(t, won.Approved, results[i].AlreadyDecided.Approved)
			}
			continue
		}
		var app *temporal.ApplicationError
		require.True(t, errors.As(errs[i], &app), "a different decision is refused: %d %v %+v", i, errs[i], results[i])
		assert.Equal(t, wire.ErrTypeInvalidInput, app.Type())
		assert.Contains(t, errs[i].Error(), `call "r1" is already decided: `+map[bool]string{true: "approved", false: "rejected"}[won.Approved])
	}
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	count := 0
	for _, m := range hist.Messages {
		for _, c := range m.Contents {
			if c.CallID == "r1" && c.Type == "functionResult" {
				count++
			}
		}
	}
	assert.Equal(t, 1, count, "one result for the call")
}
