package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// toolWorkers answers CallTool as a queue whose workers lack the tool's function for
// the first `missing` attempts (each answered by the next worker of `workers`).
type toolWorkers struct {
	mu       sync.Mutex
	attempts int
	missing  int
	workers  []string
	wait     time.Duration
}

func (w *toolWorkers) call(_ context.Context, in wire.CallToolInput) (wire.CallToolResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.attempts++
	if w.attempts > w.missing {
		return wire.CallToolResult{Result: in.Name + " ran"}, nil
	}
	worker := w.workers[(w.attempts-1)%len(w.workers)]
	return wire.CallToolResult{}, temporal.NewNonRetryableApplicationError(`tool "lookup" has no function on this worker`,
		wire.ErrTypeUnknownFunction, nil, wire.UnknownAgentDetails{Worker: worker, Kind: wire.KindTool,
			Unknown: []string{in.Name}, Known: []string{"refund"}, Pollers: w.workers, Wait: wire.Duration(w.wait)})
}

func newToolWorkersEnv(t *testing.T, w *toolWorkers) *env {
	e := newEnv(t)
	e.env.RegisterActivityWithOptions(w.call, activity.RegisterOptions{Name: wire.CallToolActivity})
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "lookup", `{"order":1}`)}
	e.model.replies["clerk#2"] = "done"
	return e
}

// A tool call that reaches a worker without the tool's function is run again, and
// the other worker's result is the call's.
func TestToolFunctionOnOneWorkerIsTriedOnAnother(t *testing.T) {
	w := &toolWorkers{missing: 1, workers: []string{"custom-old", "custom-new"}, wait: time.Minute}
	e := newToolWorkersEnv(t, w)
	o := e.send(time.Second, msg("m1", "look it up"))
	e.run(clerk(), time.Hour)

	require.NoError(t, o.err)
	res := resultsOf(o.result.Messages[1])
	assert.Equal(t, "lookup ran", res["c1"].Result)
	assert.Empty(t, res["c1"].Error)
	assert.Equal(t, 2, w.attempts)
}

// When every polling worker (custom identities) has said it lacks the function, the
// call's error result says so at once, naming each worker and the functions it has;
// the model reads it and the turn goes on.
func TestToolFunctionOnNoWorkerFailsTheCallAtOnce(t *testing.T) {
	w := &toolWorkers{missing: 100, workers: []string{"custom-a", "custom-b"}, wait: time.Hour}
	e := newToolWorkersEnv(t, w)
	o := e.send(time.Second, msg("m1", "look it up"))
	e.run(clerk(), 3*time.Hour)

	require.NoError(t, o.err)
	res := resultsOf(o.result.Messages[1])
	assert.Contains(t, res["c1"].Error, `tool function(s) "lookup": no worker of the task queue has them (asked 2 worker(s)`)
	assert.Contains(t, res["c1"].Error, `worker custom-a has "refund"; worker custom-b has "refund"`)
	assert.Equal(t, 2, w.attempts, "stopped once both pollers had answered")
	assert.Equal(t, "done", o.result.Messages[2].Text())
}
