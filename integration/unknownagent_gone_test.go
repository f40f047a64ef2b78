package integration_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// A chat that names an agent no worker has is tried on the task queue's other
// workers (a rolling deploy), until every worker the server lists has answered. A
// worker of this host that has just stopped stays in that list for a minute or two,
// and used to hold the start for the whole wait (two minutes, silently). A worker
// whose process is gone is not waited for: the start fails at once with UnknownAgent.
func TestAnAgentNoWorkerHasIsRefusedSoonAfterAWorkerStopped(t *testing.T) {
	tq := testenv.TaskQueue(t)
	gone := testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Config: deployConfig("helper"), Args: []string{"--offline"}})
	gone.Kill()
	testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Config: deployConfig("helper"), Args: []string{"--offline"}})
	c := agentchat.NewClient(testenv.Dial(t, ""), agentchat.ClientOptions{TaskQueue: tq})

	began := time.Now()
	_, err := c.Start(ctxFor(t), agentchat.StartOptions{ChatID: testenv.ChatID(t), Participants: []string{"helpr"}})
	took := time.Since(began)
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeUnknownAgent, appType(err), "%v", err)
	assert.Contains(t, err.Error(), `"helpr"`)
	assert.Less(t, took, 20*time.Second, "the start waited %s for a worker that is gone", took)
}
