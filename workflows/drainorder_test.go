package workflows_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// Turns keep their arrival order across a continue-as-new: a run that drains answers the
// turns an update waits for, and the signalled turns queued before them first (found by
// the system test: a posted turn was answered after a later Send).
func TestDrainKeepsArrivalOrder(t *testing.T) {
	e, _ := newToolEnv(t, 2) // the lookup waits (5 s) for a second one that never comes
	e.env.SetTestTimeout(20 * time.Second)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "lookup", `{"order":1}`)}
	e.send(time.Second, msg("m1", "look up order 1"))
	e.at(time.Second+time.Millisecond, func() { e.env.SignalWorkflow(wire.UserMessageSignal, msg("s1", "posted first")) })
	later := e.send(time.Second+2*time.Millisecond, msg("u2", "sent second"))
	e.at(time.Second+3*time.Millisecond, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(clerk(), 0)

	next, _ := canInput(t, e)
	require.NoError(t, later.err)
	var users []string
	for _, m := range next.Carry.History {
		if m.Role == chat.RoleUser {
			users = append(users, m.MessageID)
		}
	}
	for _, m := range next.Carry.Pending {
		users = append(users, m.MessageID)
	}
	assert.Equal(t, []string{"m1", "s1", "u2"}, users, "history then pending, in arrival order")
}

// A turn an update queued behind a turn that then waits for an approval cannot run
// before the approval: it is refused when the wait begins (AwaitingApproval, as one
// arriving during the wait is), so a run that continues as new meanwhile carries
// neither it nor a turn run after the open call.
func TestDrainHandsOverTheUpdateTurnsQueuedBehindAnApproval(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":1}`)}
	first := e.send(time.Second, msg("m1", "refund order 1"))
	second := e.send(time.Second, msg("u2", "and then?"))
	e.at(time.Minute, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(clerk(), 0)

	next, _ := canInput(t, e)
	require.NoError(t, first.err)
	require.Len(t, first.result.AwaitingApproval, 1)
	require.True(t, second.done)
	var app *temporal.ApplicationError
	require.True(t, errors.As(second.err, &app), "%v", second.err)
	assert.Equal(t, wire.ErrTypeAwaitingApproval, app.Type())
	assert.Equal(t, []string{"m1", "m1/1"}, ids(next.Carry.History), "the chat still waits for the approval")
	assert.Empty(t, next.Carry.Pending)
	assert.Equal(t, 1, e.model.count())
	assert.Empty(t, ft.ran)
}
