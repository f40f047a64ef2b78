package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// Found by the system test (10.S3): Approve's TurnResult holds the messages of the
// turn it resumed, up to where that turn ended (or waits again), never those of the
// turns the queue went on with; those are their own callers' answers.
func TestApproveAnswersOnlyTheResumedTurn(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"amount":5}`)}
	e.model.replies["clerk#2"] = "refunded"
	e.send(time.Second, msg("t1", "refund"))
	e.at(2*time.Second, func() { e.env.SignalWorkflow(wire.UserMessageSignal, msg("t2", "queued behind the approval")) })
	ok := e.approve(3*time.Second, wire.ApproveInput{CallID: "c1", Approved: true})
	var hist []chat.Message
	e.at(time.Minute, func() { hist = e.history() })
	e.run(clerk(), 2*time.Minute)

	require.NoError(t, ok.err)
	assert.Equal(t, []string{"t1", "t1/1", "t1/2", "t1/3", "t2", "t2/1"}, ids(hist), "the queued turn was answered after the approved one")
	assert.Equal(t, "t1", ok.result.MessageID)
	assert.Equal(t, []string{"t1/2", "t1/3"}, ids(ok.result.Messages), "the tool's result and the agent's answer, nothing of t2")
}

// A SendMessage queued behind a turn that then waits for an approval is refused like
// one that arrives during the wait (AwaitingApproval), rather than held until a person
// decides; it can be sent again afterwards. A signal's turn stays queued.
func TestUpdatesQueuedBehindASuspendedTurnAreRefused(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"amount":5}`)}
	e.model.replies["clerk#2"] = "refunded"
	first := e.send(time.Second, msg("t1", "refund"))
	e.at(time.Second, func() { e.env.SignalWorkflow(wire.UserMessageSignal, msg("t2", "posted behind it")) })
	queued := e.send(time.Second, msg("t3", "sent behind it")) // the same instant: queued before t1 suspends
	var during wire.StateResult
	var refusedAt2 bool
	e.at(2*time.Second, func() { during, refusedAt2 = e.state(), queued.done })
	ok := e.approve(3*time.Second, wire.ApproveInput{CallID: "c1", Approved: true})
	again := e.send(4*time.Second, msg("t3", "sent behind it"))
	var hist []chat.Message
	e.at(time.Minute, func() { hist = e.history() })
	e.run(clerk(), 2*time.Minute)

	require.NoError(t, first.err)
	require.Len(t, first.result.AwaitingApproval, 1)
	require.True(t, refusedAt2, "not held until the approval")
	require.Error(t, queued.err)
	assert.Contains(t, queued.err.Error(), "waits for the approval")
	assert.Equal(t, []string{"t2"}, during.PendingTurns, "the signal's turn stays queued")
	require.NoError(t, ok.err)
	require.NoError(t, again.err)
	assert.Equal(t, []string{"t1", "t1/1", "t1/2", "t1/3", "t2", "t2/1", "t3", "t3/1"}, ids(hist))
}
