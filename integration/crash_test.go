package integration_test

import (
	"context"
	"fmt"
	"net/http"
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

// How long a worker crash holds a turn, with real processes and the default timeouts:
// the call the dead worker ran is retried elsewhere once its heartbeats stop, not
// after its whole timeout.

// stickyTimeout is how long Temporal offers a chat's next workflow task to the worker
// that ran the last one (the dead one) before any worker may take it.
const stickyTimeout = 5 * time.Second

// recoverySlack covers the rest: scheduling, polls, a busy machine under -race.
const recoverySlack = 6 * time.Second

// sendAsync sends a turn in the background.
func sendAsync(t *testing.T, c *agentchat.Client, chatID, msgID, text string) <-chan error {
	done := make(chan error, 1)
	ctx := ctxFor(t)
	go func() {
		_, err := c.Send(ctx, chatID, agentchat.SendMessageInput{MessageID: msgID, Text: text})
		done <- err
	}()
	return done
}

// waitRunning waits until the chat has an attempt of activity typ running on a worker.
func waitRunning(t *testing.T, c *agentchat.Client, chatID, typ string) {
	t.Helper()
	require.Eventually(t, func() bool {
		d, err := c.Temporal().DescribeWorkflowExecution(context.Background(), chatID, "")
		if err != nil {
			return false
		}
		for _, a := range d.GetPendingActivities() {
			if a.GetActivityType().GetName() == typ && a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "no %s started", typ)
}

// crashChat starts a worker process with the agent config, and a chat of helper on a
// task queue of their own; opts starts the worker that takes over.
func crashChat(t *testing.T, config string) (c *agentchat.Client, id string, first *testenv.WorkerProcess, opts testenv.ProcessOptions) {
	t.Helper()
	opts = testenv.ProcessOptions{TaskQueue: testenv.TaskQueue(t), Config: config}
	first = testenv.StartWorkerProcess(t, opts)
	c = agentchat.NewClient(testenv.Dial(t, ""), agentchat.ClientOptions{TaskQueue: opts.TaskQueue})
	id = testenv.ChatID(t)
	_, err := c.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	return c, id, first, opts
}

// killAndAwait kills the worker and waits (at most 2 minutes) for the turn sent in the
// background; it returns how long after the kill the turn ended, and its error.
func killAndAwait(t *testing.T, w *testenv.WorkerProcess, done <-chan error) (time.Duration, error) {
	t.Helper()
	w.Kill()
	killed := time.Now()
	select {
	case err := <-done:
		return time.Since(killed), err
	case <-time.After(2 * time.Minute):
		require.FailNow(t, "the turn did not finish")
		return 0, nil
	}
}

// A worker killed while a tool runs: the tool call heartbeats, so it is retried on the
// other worker after the tool's heartbeat timeout (default 5 s), not after its 30 s
// timeout.
func TestWorkerKilledMidToolCall(t *testing.T) {
	const toolRun = 3 * time.Second
	model, err := offline.Start(offline.Options{Scripts: map[string][]offline.Reply{"helper": {
		{ToolCalls: []offline.ToolCall{{ID: "call_wait", Name: "wait", Arguments: fmt.Sprintf(`{"seconds": %g}`, toolRun.Seconds())}}},
		{Text: "done waiting"},
	}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = model.Close() })
	config := fmt.Sprintf(`
endpoints:
  local: {baseURL: %q}
tools:
  wait: {description: "Wait a number of seconds"}
agents:
  - {id: helper, name: Helper, model: offline, endpoint: local, tools: [wait]}
`, model.URL())
	tool := wire.Tool{}.WithDefaults()
	bound := time.Duration(tool.HeartbeatTimeout) + time.Second /* first retry */ + toolRun + stickyTimeout + recoverySlack
	require.Less(t, bound, time.Duration(tool.Timeout)+toolRun, "the bound is below what waiting for the tool's timeout costs")
	c, id, first, opts := crashChat(t, config)

	done := sendAsync(t, c, id, "t1", "Wait for me")
	waitRunning(t, c, id, wire.CallToolActivity)
	testenv.StartWorkerProcess(t, opts) // the worker that takes over, ready before the crash
	took, err := killAndAwait(t, first, done)
	t.Logf("turn done %s after the kill (tool heartbeat timeout %s, timeout %s; bound %s)",
		took.Round(time.Millisecond), time.Duration(tool.HeartbeatTimeout), time.Duration(tool.Timeout), bound)
	require.NoError(t, err)
	assert.Less(t, took, bound, "retried after the heartbeat timeout")
	hist, err := c.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"t1", "t1/1", "t1/2", "t1/3"}, messageIDs(hist.Messages))
	assert.Equal(t, "waited 3s", hist.Messages[2].Contents[0].Result)
}

// A worker killed while it waits for a slow, non-streaming model answer: the call
// heartbeats while it waits, so it is retried on the other worker after the default
// heartbeat timeout (15 s), not after a minute; the slow answer itself is not cut
// short by that timeout.
func TestWorkerKilledMidModelCallDefaultHeartbeat(t *testing.T) {
	slow := wire.DefaultHeartbeatTimeout + 5*time.Second // slower than the heartbeat timeout
	model, err := offline.Start(offline.Options{Scripts: map[string][]offline.Reply{"helper": {
		// A hang, scripted as an error entry so that it is met once at this position
		// (scripts follow the conversation, and the retry sends the same one).
		{Status: http.StatusServiceUnavailable, Message: "never sent", Delay: wire.Duration(time.Minute)},
		{Text: "slow but whole", Delay: wire.Duration(slow)},
	}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = model.Close() })
	config := fmt.Sprintf(`
endpoints:
  local: {baseURL: %q, stream: false}
agents:
  - {id: helper, name: Helper, model: offline, endpoint: local}
`, model.URL())
	call := wire.CallSettings{}.WithDefaults()
	c, id, first, opts := crashChat(t, config)

	done := sendAsync(t, c, id, "t1", "Take your time")
	require.Eventually(t, func() bool { return model.Requests("helper") == 1 }, 30*time.Second, 10*time.Millisecond)
	testenv.StartWorkerProcess(t, opts)
	time.Sleep(time.Second)
	took, err := killAndAwait(t, first, done)
	recovered := took - slow // the retry's own answer takes slow
	bound := time.Duration(call.HeartbeatTimeout) + time.Duration(call.InitialInterval) + stickyTimeout + recoverySlack
	t.Logf("turn done %s after the kill, %s of it to recover (heartbeat timeout %s; bound %s)",
		took.Round(time.Millisecond), recovered.Round(time.Millisecond), time.Duration(call.HeartbeatTimeout), bound)
	require.NoError(t, err)
	assert.Less(t, recovered, bound, "retried after the heartbeat timeout")
	assert.Equal(t, 2, model.Requests("helper"), "the killed attempt, and one retry that was not cut off")
	hist, err := c.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, 2)
	assert.Equal(t, "[offline] helper: slow but whole", hist.Messages[1].Text())
}
