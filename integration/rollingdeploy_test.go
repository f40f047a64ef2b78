package integration_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// A rolling deploy that changes the agent config, with real worker processes: for a
// while, some workers of the task queue know an agent and some do not. A chat must
// not fail while a worker of its queue has the agent, and fails clearly (naming every
// worker and what it knows) only when none has.

// Two workers on one queue, one of them without agent helper: chats with helper start
// and all their turns are answered, though some of their calls first reach the worker
// that does not know it (their workflow tasks, and eagerly their activities, are held
// by whichever worker took the chat first).
func TestRollingDeployAgentOnOneWorker(t *testing.T) {
	tq := testenv.TaskQueue(t)
	withHelper := testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq,
		Config: deployConfig("helper", "writer"), Args: []string{"--offline"}})
	without := testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq,
		Config: deployConfig("writer"), Args: []string{"--offline"}})
	tc := testenv.Dial(t, "")
	c := agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: tq})

	const chats, turns = 10, 3
	ids := make([]string, chats)
	var wg sync.WaitGroup
	errs := make(chan error, chats*(turns+1))
	began := time.Now()
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", testenv.ChatID(t), i)
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			if _, err := c.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}}); err != nil {
				errs <- fmt.Errorf("start %s: %w", id, err)
				return
			}
			var turnsWG sync.WaitGroup
			for j := range turns {
				turnsWG.Add(1)
				go func() {
					defer turnsWG.Done()
					res, err := c.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: fmt.Sprintf("m%d", j), Text: "Hello"})
					switch {
					case err != nil:
						errs <- fmt.Errorf("send %s/m%d: %w", id, j, err)
					case len(res.Messages) != 1 || res.Messages[0].AgentID != "helper":
						errs <- fmt.Errorf("send %s/m%d: replies %+v", id, j, res.Messages)
					}
				}()
			}
			turnsWG.Wait()
		}(ids[i])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	t.Logf("%d chats, %d turns in %s", chats, chats*turns, time.Since(began).Round(time.Millisecond))

	refused := 0
	for _, id := range ids {
		st, err := c.State(ctxFor(t), id)
		require.NoError(t, err)
		assert.Equal(t, turns, st.TurnCount, "chat %s", id)
		assert.Nil(t, st.LastError, "chat %s", id)
		refused += answersOfType(t, tc, id, wire.ErrTypeUnknownAgent)
	}
	// Which worker takes a chat is the server's choice; with 10 chats, the chance that
	// none went first to the worker without helper is 1 in 1024.
	assert.Positive(t, refused, "some calls reached the worker without helper (pids %d with, %d without) and were answered elsewhere",
		withHelper.PID, without.PID)
	t.Logf("%d calls were answered UnknownAgent first and then by the other worker", refused)
}

// No worker of the queue knows agent ghost: the chat fails at start, as soon as every
// worker polling the queue has said so, not after the whole wait; the error names each
// worker and the agents it knows.
func TestRollingDeployAgentOnNoWorker(t *testing.T) {
	tq := testenv.TaskQueue(t)
	a := testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Config: deployConfig("helper"), Args: []string{"--offline"}})
	b := testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Config: deployConfig("writer"), Args: []string{"--offline"}})
	c := agentchat.NewClient(testenv.Dial(t, ""), agentchat.ClientOptions{TaskQueue: tq})

	began := time.Now()
	_, err := c.Start(ctxFor(t), agentchat.StartOptions{ChatID: testenv.ChatID(t), Participants: []string{"ghost"}})
	took := time.Since(began)
	require.Equal(t, wire.ErrTypeUnknownAgent, appType(err), "%v", err)
	assert.Contains(t, err.Error(), `unknown agent id(s) "ghost": no worker of the task queue knows them`)
	assert.Contains(t, err.Error(), fmt.Sprintf(`worker %d@`, a.PID))
	assert.Contains(t, err.Error(), fmt.Sprintf(`worker %d@`, b.PID))
	assert.Contains(t, err.Error(), `knows "helper"`)
	assert.Contains(t, err.Error(), `knows "writer"`)
	assert.Less(t, took, wire.DefaultUnknownAgentWait/4, "failed once both workers had answered, not after the wait")
	t.Logf("failed after %s: %v", took.Round(time.Millisecond), err)
}

// A worker that has just been killed still counts as a poller for a while, so the
// chat cannot know that no worker has the agent: it tries for the configured wait
// (--unknown-agent-wait) and then fails. (A killed worker of this host with
// Temporal's default identity is known to be gone and not waited for: the gone
// worker here has an identity of another form, as one of another host would be.)
func TestRollingDeployUnknownAgentWaitIsBounded(t *testing.T) {
	const wait = 3 * time.Second
	tq := testenv.TaskQueue(t)
	args := []string{"--offline", "--unknown-agent-wait", wait.String()}
	testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Config: deployConfig("writer"), Args: args})
	gone := testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Config: deployConfig("helper"), Args: args,
		Identity: "helper-worker-" + tq})
	gone.Kill()
	c := agentchat.NewClient(testenv.Dial(t, ""), agentchat.ClientOptions{TaskQueue: tq})

	began := time.Now()
	_, err := c.Start(ctxFor(t), agentchat.StartOptions{ChatID: testenv.ChatID(t), Participants: []string{"helper"}})
	took := time.Since(began)
	require.Equal(t, wire.ErrTypeUnknownAgent, appType(err), "%v", err)
	assert.Contains(t, err.Error(), `knows "writer"`)
	assert.GreaterOrEqual(t, took, wait, "tried for the whole wait")
	assert.Less(t, took, wait+10*time.Second, "and then gave up")
	t.Logf("failed after %s (wait %s): %v", took.Round(time.Millisecond), wait, err)
}
