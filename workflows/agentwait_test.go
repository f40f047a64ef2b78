package workflows_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/wire"
)

// unknownOn is the answer of worker w that does not know helper, while pollers poll.
func unknownOn(w string, wait time.Duration, pollers ...string) error {
	return temporal.NewNonRetryableApplicationError(`agent "helper" is not in this worker's registry`,
		wire.ErrTypeUnknownAgent, nil, wire.UnknownAgentDetails{Worker: w, Unknown: []string{"helper"},
			Known: []string{"writer"}, Pollers: pollers, Wait: wire.Duration(wait)})
}

// A model call answered "unknown agent" by one worker is made again, and the other
// worker's answer is the turn's.
func TestUnknownAgentOnOneWorkerIsTriedOnAnother(t *testing.T) {
	e := newEnv(t)
	e.model.errs["helper#1"] = unknownOn("old@host@", time.Minute, "old@host@", "new@host@")
	e.model.errs["helper#2"] = unknownOn("old@host@", time.Minute, "old@host@", "new@host@")
	turn := e.send(time.Second, msg("m1", "hello"))
	e.run(thread(), time.Hour)

	require.NoError(t, turn.err)
	require.Len(t, turn.result.Messages, 1)
	assert.Equal(t, "helper#3 saw 1 messages, last user: hello", turn.result.Messages[0].Text())
}

// Once every polling worker has said it does not know the agent, the call fails at
// once, naming each worker and the agents it knows.
func TestUnknownAgentOnEveryPollerFailsAtOnce(t *testing.T) {
	e := newEnv(t)
	e.model.errs["helper#1"] = unknownOn("a@host@", time.Hour, "a@host@", "b@host@")
	e.model.errs["helper#2"] = unknownOn("b@host@", time.Hour, "a@host@", "b@host@")
	turn := e.send(time.Second, msg("m1", "hello"))
	e.run(thread(), 3*time.Hour)

	var app *temporal.ApplicationError
	require.True(t, errors.As(turn.err, &app), "%v", turn.err)
	assert.Equal(t, wire.ErrTypeTurnFailed, app.Type())
	assert.Contains(t, turn.err.Error(), `unknown agent id(s) "helper": no worker of the task queue knows them (asked 2 worker(s)`)
	assert.Contains(t, turn.err.Error(), `worker a@host@ knows "writer"; worker b@host@ knows "writer"`)
	assert.Equal(t, 2, e.model.count())
	st := e.state()
	require.NotNil(t, st.LastError)
	assert.Equal(t, wire.ErrTypeUnknownAgent, st.LastError.Type)
}

// A worker that never answers (listed as a poller, but gone) does not hold the turn
// for ever: after the wait the worker named, the call fails.
func TestUnknownAgentWaitIsBounded(t *testing.T) {
	e := newEnv(t)
	for i := 1; i <= 16; i++ {
		e.model.errs[fmt.Sprintf("helper#%d", i)] = unknownOn("a@host@", 10*time.Second, "a@host@", "gone@host@")
	}
	turn := e.send(time.Second, msg("m1", "hello"))
	e.run(thread(), time.Hour)

	require.Error(t, turn.err)
	assert.Contains(t, turn.err.Error(), "asked 1 worker(s) over 10s")
	calls := e.model.count()
	assert.Greater(t, calls, 3, "tried again within the wait")
	assert.Less(t, calls, 16, "then gave up")
}
