package integration_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
)

// CheckWorker (which CLI commands run first) right after the Temporal server
// restarted: the worker process is alive, but the server lists it again only when its
// next poll arrives, which took up to 8.5 s. CheckWorker waits for it within its
// bound instead of reporting "no worker". (Issue "Survive rolling deploys", item 3,
// for the client.)
func TestCheckWorkerAcrossADevServerRestart(t *testing.T) {
	srv := testenv.NewRestartableServer(t) // stops after the harnesses' workers
	addr := srv.Address
	tq := testenv.TaskQueue(t)
	testenv.StartWorkerProcess(t, testenv.ProcessOptions{Address: addr, TaskQueue: tq, Config: deployConfig("helper"), Args: []string{"--offline"}})
	tc, err := client.Dial(client.Options{HostPort: addr})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	c := agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: tq})
	require.NoError(t, c.CheckWorker(ctxFor(t), ""))

	srv.Stop()
	srv.Start()
	began := time.Now()
	err = c.CheckWorker(ctxFor(t), "")
	took := time.Since(began)
	require.NoError(t, err, "the worker polls again within the wait (%s)", agentchat.WorkerWait)
	t.Logf("the worker was listed %s after the server was back", took.Round(time.Millisecond))
}

// With no worker at all, CheckWorker gives up after the client's wait, saying how
// long it looked and what to start.
func TestCheckWorkerWithoutAWorkerIsBounded(t *testing.T) {
	const wait = time.Second
	tq := testenv.TaskQueue(t)
	c := agentchat.NewClient(testenv.Dial(t, ""), agentchat.ClientOptions{TaskQueue: tq, WorkerWait: wait})
	began := time.Now()
	err := c.CheckWorker(ctxFor(t), "")
	took := time.Since(began)
	require.ErrorIs(t, err, agentchat.ErrNoWorker)
	assert.Contains(t, err.Error(), `no worker is polling the task queue "`+tq+`" in namespace "default" (none polled it within 1s)`)
	assert.Contains(t, err.Error(), "go run ./worker --offline --task-queue "+tq)
	assert.GreaterOrEqual(t, took, wait)
	assert.Less(t, took, wait+5*time.Second)
}
