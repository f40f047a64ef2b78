package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// Turns queue in the order of their events in the history (10.S2): a UserMessage
// signal that arrives while a turn runs, then a SendMessage update, are answered signal
// first, although the update's handler runs at once and the signal waits in its channel
// until the main loop is back.
func TestSignalThenUpdateDuringATurnQueueInHistoryOrder(t *testing.T) {
	e := newEnv(t)
	// Every model call takes 2 s of workflow time, so the turn t1 is still running at 1 s.
	e.env.OnActivity(wire.InvokeAgentActivity, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in wire.InvokeInput) (wire.InvokeResult, error) {
			return e.model.invoke(ctx, in)
		}).
		After(2 * time.Second)
	first := e.send(0, msg("t1", "a long one"))
	sent := &outcome{}
	e.at(time.Second, func() {
		e.env.SignalWorkflow(wire.UserMessageSignal, msg("t2", "posted first"))
		e.env.UpdateWorkflow(wire.SendMessageUpdate, "u-t3", &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { sent.rejected, sent.done = err, true },
			OnComplete: func(v any, err error) {
				sent.done, sent.err = true, err
				if err == nil {
					sent.result = v.(wire.TurnResult)
				}
			},
		}, msg("t3", "sent second"))
	})
	var hist []string
	e.at(time.Minute, func() { hist = ids(e.history()) })
	e.run(thread(), 2*time.Minute)
	require.NoError(t, first.err)
	require.True(t, sent.done)
	require.NoError(t, sent.err)
	assert.Equal(t, []string{"t1", "t1/1", "t2", "t2/1", "t3", "t3/1"}, hist)
	require.Len(t, sent.result.Messages, 1)
	assert.Contains(t, sent.result.Messages[0].Text(), "saw 5 messages", "t3's reply saw t2 and its answer")
}

// A new chat: a UserMessage signal that arrives while the participants are resolved,
// then a SendMessage update, are answered signal first. The update's handler waited
// for nothing while the chat started, and the signal waited in its channel for the
// main loop.
func TestSignalThenUpdateWhileANewChatStartsQueueInHistoryOrder(t *testing.T) {
	e := newEnv(t)
	e.env.OnActivity(wire.ResolveParticipantsActivity, mock.Anything, mock.Anything).Return(resolve).
		After(2 * time.Second)
	e.at(time.Second, func() { e.env.SignalWorkflow(wire.UserMessageSignal, msg("s1", "posted first")) })
	sent := e.send(time.Second+time.Millisecond, msg("u2", "sent second"))
	var users []string
	e.at(time.Minute, func() {
		for _, m := range e.history() {
			if m.Role == chat.RoleUser {
				users = append(users, m.MessageID)
			}
		}
	})
	e.run(thread(), 2*time.Minute)
	require.True(t, sent.done)
	require.NoError(t, sent.rejected)
	require.NoError(t, sent.err)
	assert.Equal(t, []string{"s1", "u2"}, users, "arrival order")
	require.Len(t, sent.result.Messages, 1)
	assert.Contains(t, sent.result.Messages[0].Text(), "saw 3 messages", "u2's reply saw s1 and its answer")
}
