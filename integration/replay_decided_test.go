package integration_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
)

func init() {
	replayScenarios = append(replayScenarios, struct {
		name    string
		files   []string
		capture func(t *testing.T, name string)
	}{"approve-repeated", []string{"approve-repeated"}, captureApproveRepeated})
}

// captureApproveRepeated: two calls wait; one is rejected, the same decision is given
// again while the other waits, then the other is approved and the rejection repeated
// once the turn has ended.
func captureApproveRepeated(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{Config: replayAgents, Model: offline.Options{Scripts: map[string][]offline.Reply{
		"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "refund", Arguments: `{"order":"1001"}`}, {ID: "c2", Name: "refund", Arguments: `{"order":"1002"}`}}},
			{Text: "One refunded."},
		}}}})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{Participants: []string{"clerk"}})
	res := send(t, h, id, "m1", "Refund both")
	require.Len(t, res.AwaitingApproval, 2)
	_, err := h.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "c1", Approved: false, Reason: "too old", By: "Bob"})
	require.NoError(t, err)
	again, err := h.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "c1", Approved: false})
	require.NoError(t, err)
	require.NotNil(t, again.AlreadyDecided)
	_, err = h.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "c2", Approved: true})
	require.NoError(t, err)
	again, err = h.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "c1", Approved: false})
	require.NoError(t, err)
	require.NotNil(t, again.AlreadyDecided)
	saveRun(t, h, id, "", name, atRest)
}
