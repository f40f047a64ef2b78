package integration_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// Fault 13, as a user met it: the example clerk in a worker started with --offline
// (the offline model inside the worker process) looks the order up and asks for the
// refund, which waits for approval; the worker is killed and a new one started; after
// the approval the clerk answers, instead of starting its script again and asking for
// the refund a second time.
func TestOfflineClerkGoesOnAfterAWorkerRestart(t *testing.T) {
	example, err := os.ReadFile("../agents/agents.example.yaml")
	require.NoError(t, err)
	tq := testenv.TaskQueue(t)
	opts := testenv.ProcessOptions{TaskQueue: tq, Config: string(example), Args: []string{"--offline"}}
	first := testenv.StartWorkerProcess(t, opts)
	tc := testenv.Dial(t, "")
	c := agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: tq})
	id := testenv.ChatID(t)
	_, err = c.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)

	res, err := c.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "Please refund order 1002"})
	require.NoError(t, err)
	require.Len(t, res.AwaitingApproval, 1)
	assert.Equal(t, "call_refund", res.AwaitingApproval[0].CallID)

	first.Kill()
	testenv.StartWorkerProcess(t, opts)
	res, err = approve(t, tc, id, wire.ApproveInput{CallID: "call_refund", Approved: true, By: "manager"})
	require.NoError(t, err)
	require.Len(t, res.Messages, 2, "the refund's result, then the clerk's answer")
	last := res.Messages[1]
	assert.Empty(t, last.FunctionCalls(), "the clerk does not start its script again")
	assert.Equal(t, "[offline] clerk: The kettle of order 1002 is refunded.", last.Text())
	assert.Empty(t, res.AwaitingApproval, "no second refund waits")
}
