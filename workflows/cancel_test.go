package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// cancelAt runs the CancelTurn update at the given delay.
func (e *env) cancelAt(at time.Duration, in wire.CancelTurnInput, out *wire.CancelTurnResult, outErr *error) {
	id := "cancel-" + at.String() + in.MessageID
	e.at(at, func() {
		e.env.UpdateWorkflow(wire.CancelTurnUpdate, id, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { *outErr = err },
			OnComplete: func(v any, err error) {
				*outErr = err
				if err == nil {
					*out = v.(wire.CancelTurnResult)
				}
			},
		}, in)
	})
}

// Stopping the turn in flight while its model call streams: the call is cancelled, the
// partial reply (the deltas so far) stays as the agent's message marked incomplete,
// the caller gets it with Cancelled, the stream says turnCancelled, and the chat takes
// the next turn. A queued turn cancelled by its messageId never runs: its caller gets
// TurnCancelled, and the messageId may be sent again.
func TestCancelTurnInFlightAndQueued(t *testing.T) {
	e := newEnv(t)
	e.slowModel(10 * time.Second)
	first := e.send(time.Second, msg("m1", "Hello"))
	queued := e.send(1500*time.Millisecond, msg("m2", "Queued"))
	e.publish(2*time.Second, "a1", 1, "m1/1", 1, "Once upon")
	e.publish(3*time.Second, "a1", 2, "m1/1", 1, " a time")
	var qRes, aRes wire.CancelTurnResult
	var qErr, aErr, noneErr error
	e.cancelAt(2500*time.Millisecond, wire.CancelTurnInput{MessageID: "m2"}, &qRes, &qErr)
	e.cancelAt(4*time.Second, wire.CancelTurnInput{}, &aRes, &aErr)
	e.cancelAt(5*time.Second, wire.CancelTurnInput{MessageID: "nope"}, &aRes, &noneErr)
	third := e.send(6*time.Second, msg("m3", "Next"))
	var all wire.StreamPollResult
	var allErr error
	e.pollAt(30*time.Second, wire.StreamPollInput{}, &all, &allErr)
	e.run(thread(), 40*time.Second)

	require.NoError(t, qErr)
	assert.Equal(t, wire.CancelTurnResult{MessageID: "m2", Queued: true}, qRes)
	var app *temporal.ApplicationError
	require.True(t, errors.As(queued.err, &app), "%v", queued.err)
	assert.Equal(t, wire.ErrTypeTurnCancelled, app.Type())

	require.NoError(t, aErr)
	assert.Equal(t, wire.CancelTurnResult{MessageID: "m1"}, aRes)
	require.NoError(t, first.err)
	assert.True(t, first.result.Cancelled)
	require.Len(t, first.result.Messages, 1)
	partial := first.result.Messages[0]
	assert.Equal(t, "Once upon a time", partial.Text())
	assert.True(t, partial.Incomplete)
	assert.Equal(t, "helper", partial.AgentID)

	require.True(t, errors.As(noneErr, &app), "%v", noneErr)
	assert.Equal(t, wire.ErrTypeInvalidInput, app.Type())

	require.NoError(t, third.err)
	assert.False(t, third.result.Cancelled)
	assert.Equal(t, []string{"m1", "m1/1", "m3", "m3/1"}, ids(e.history()))

	require.NoError(t, allErr)
	var types []string
	for _, ev := range decodeEvents(t, all) {
		if ev.TurnID == "m1" || ev.TurnID == "m2" {
			types = append(types, ev.TurnID+":"+ev.Type)
		}
	}
	assert.Equal(t, []string{"m1:turnAccepted", "m1:agentStarted", "m2:turnAccepted", "m1:textDelta", "m2:turnCancelled",
		"m1:textDelta", "m1:messageDone", "m1:turnCancelled"}, types)
}

// Stopping a turn while its tools run: the tool activities are cancelled and every call
// gets a result (not run: the turn was stopped); no model call follows.
func TestCancelTurnWhileAToolRuns(t *testing.T) {
	e := newEnv(t)
	e.model.contents["clerk#1"] = []chat.Content{{Type: chat.ContentFunctionCall, CallID: "c1", Name: "lookup", Arguments: `{}`}}
	e.env.RegisterActivityWithOptions(func(context.Context, wire.CallToolInput) (wire.CallToolResult, error) {
		return wire.CallToolResult{Result: "found"}, nil
	}, activity.RegisterOptions{Name: wire.CallToolActivity})
	e.env.OnActivity(wire.CallToolActivity, mock.Anything, mock.Anything).Return(wire.CallToolResult{Result: "found"}, nil).After(20 * time.Second)
	first := e.send(time.Second, msg("m1", "Look it up"))
	var res wire.CancelTurnResult
	var err error
	e.cancelAt(5*time.Second, wire.CancelTurnInput{}, &res, &err)
	e.run(wire.AgentChatInput{Version: 1, Participants: []string{"clerk"}}, 60*time.Second)
	require.NoError(t, err)
	require.NoError(t, first.err)
	assert.True(t, first.result.Cancelled)
	require.Len(t, first.result.Messages, 2, "the call and its result")
	assert.Equal(t, "not run: the turn was stopped", first.result.Messages[1].Contents[0].Error)
	assert.Equal(t, 1, e.model.count(), "no model call after the stop")
}

// With dropPartial, the stopped agent's partial reply is dropped: the turn keeps only
// its user message, and says turnCancelled.
func TestCancelTurnDropsThePartialReply(t *testing.T) {
	e := newEnv(t)
	e.slowModel(10 * time.Second)
	first := e.send(time.Second, msg("m1", "Hello"))
	e.publish(2*time.Second, "a1", 1, "m1/1", 1, "Once upon")
	var res wire.CancelTurnResult
	var err error
	e.cancelAt(3*time.Second, wire.CancelTurnInput{MessageID: "m1", DropPartial: true}, &res, &err)
	e.run(thread(), 20*time.Second)
	require.NoError(t, err)
	require.NoError(t, first.err)
	assert.True(t, first.result.Cancelled)
	assert.Empty(t, first.result.Messages)
	assert.Equal(t, []string{"m1"}, ids(e.history()))
	st := e.state()
	assert.Equal(t, 1, st.TurnCount, "a stopped turn counts as answered")
}

// Stopping a reply nobody follows (its model call holds its text back): meanwhile the
// followers query says followed, so the call publishes what it holds, and the partial
// reply kept is that text; a reply that publishes nothing is cancelled after
// stopTextWait (1 s) with no partial.
func TestCancelTurnAwaitsTheTextHeldBack(t *testing.T) {
	for _, held := range []string{"Once upon a time", ""} {
		t.Run(map[bool]string{true: "text held back", false: "no text"}[held != ""], func(t *testing.T) {
			e := newEnv(t)
			e.slowModel(10 * time.Second)
			first := e.send(time.Second, msg("m1", "Hello"))
			var res wire.CancelTurnResult
			var resErr error
			got := map[string]bool{}
			ask := func(at time.Duration, name string) {
				e.at(at, func() { got[name] = query[wire.StreamFollowers](e, wire.StreamFollowersQuery).Followed })
			}
			ask(2*time.Second, "before the stop")
			e.cancelAt(3*time.Second, wire.CancelTurnInput{}, &res, &resErr)
			ask(3200*time.Millisecond, "while the stop waits")
			if held != "" {
				e.publish(3500*time.Millisecond, "a1", 1, "m1/1", 1, held)
			}
			ask(4500*time.Millisecond, "after the stop")
			e.run(thread(), 20*time.Second)

			require.NoError(t, resErr)
			require.NoError(t, first.err)
			assert.True(t, first.result.Cancelled)
			assert.Equal(t, map[string]bool{"before the stop": false, "while the stop waits": true, "after the stop": false}, got)
			if held == "" {
				assert.Empty(t, first.result.Messages, "no text, no partial reply")
				return
			}
			require.Len(t, first.result.Messages, 1)
			assert.Equal(t, held, first.result.Messages[0].Text())
			assert.True(t, first.result.Messages[0].Incomplete)
		})
	}
}
